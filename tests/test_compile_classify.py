"""Opcode -> mix category, for AMDGCN, SASS and PTX (CPU only)."""

import pytest

from gemmmodel.compile.classify import classify_amd, classify_ptx, classify_sass

AMD = [
    ("v_fmac_f32_e32", "fma", False),
    ("v_fma_f32", "fma", False),
    ("v_mac_f32_e32", "fma", False),
    ("v_mad_f32", "fma", False),
    ("v_pk_fma_f32", "fma", True),
    ("v_fma_f64", "other", False),
    ("v_mad_u64_u32", "other", False),
    ("v_mul_f32_e32", "other", False),
    ("v_mfma_f32_32x32x2f32", "mfma", False),
    ("ds_read_b32", "lds_read_b32", False),
    ("ds_read_b64", "lds_read_b64", False),
    ("ds_read_b128", "lds_read_b128", False),
    ("ds_read2_b32", "lds_read_b64", False),       # two dwords per lane
    ("ds_read2st64_b32", "lds_read_b64", False),
    ("ds_read2_b64", "lds_read_b128", False),
    ("ds_read_u16", "lds_read_b32", False),
    ("ds_write_b32", "lds_write_b32", False),
    ("ds_write2_b32", "lds_write_b64", False),
    ("ds_write_b128", "lds_write_b128", False),
    ("ds_write_b96", "lds_write_b96", False),
    ("ds_bpermute_b32", "other", False),
    ("global_load_dword", "global_load_b32", False),
    ("global_load_dwordx2", "global_load_b64", False),
    ("global_load_dwordx4", "global_load_b128", False),
    ("buffer_load_dword", "global_load_b32", False),
    ("flat_load_dwordx4", "global_load_b128", False),
    ("global_store_dwordx4", "global_store_b128", False),
    ("flat_store_dwordx2", "global_store_b64", False),
    ("s_load_dwordx2", "other", False),            # scalar (constant) load
    ("s_barrier", "barrier", False),
    ("s_waitcnt", "waitcnt", False),
    ("s_waitcnt_vscnt", "waitcnt", False),
    ("s_cbranch_scc1", "other", False),
]


@pytest.mark.parametrize("opcode,category,packed", AMD)
def test_amd(opcode, category, packed):
    assert classify_amd(opcode) == (category, packed)


SASS = [
    ("FFMA", "fma"), ("FFMA.FTZ", "fma"), ("FMUL", "other"), ("DFMA", "other"),
    ("LDS", "lds_read_b32"), ("LDS.U.128", "lds_read_b128"), ("LDS.64", "lds_read_b64"),
    ("STS", "lds_write_b32"), ("STS.128", "lds_write_b128"),
    ("LDG.E", "global_load_b32"), ("LDG.E.64", "global_load_b64"),
    ("LDG.E.128.CONSTANT", "global_load_b128"), ("LDG.E.CI.128", "global_load_b128"),
    ("STG.E.128", "global_store_b128"), ("LDC.64", "other"), ("LDSM.16.M88.4", "other"),
    ("BAR.SYNC.DEFER_BLOCKING", "barrier"), ("BAR.SYNC", "barrier"),
    ("LDGDEPBAR", "waitcnt"), ("DEPBAR.LE", "waitcnt"),
    ("LDGSTS.E.BYPASS.128", "cp_async"), ("BRA", "other"),
]


@pytest.mark.parametrize("opcode,category", SASS)
def test_sass(opcode, category):
    assert classify_sass(opcode)[0] == category


PTX = [
    ("fma.rn.f32", "fma"), ("fma.rn.ftz.f32", "fma"), ("mad.lo.s32", "other"),
    ("fma.rn.f64", "other"),
    ("ld.shared.f32", "lds_read_b32"), ("ld.shared.v4.f32", "lds_read_b128"),
    ("ld.shared.v2.f32", "lds_read_b64"), ("st.shared.v4.f32", "lds_write_b128"),
    ("ld.global.nc.f32", "global_load_b32"), ("ld.global.nc.v4.f32", "global_load_b128"),
    ("st.global.f32", "global_store_b32"), ("ld.param.u64", "other"),
    ("bar.sync", "barrier"), ("cp.async.cg.shared.global", "cp_async"),
    ("cp.async.wait_group", "waitcnt"), ("cp.async.commit_group", "waitcnt"),
]


@pytest.mark.parametrize("opcode,category", PTX)
def test_ptx(opcode, category):
    assert classify_ptx(opcode)[0] == category
