"""Occupancy against hand-worked cases (the arithmetic is in each comment).

gfx906: 256 VGPRs/lane/SIMD, granule 4, 10 waves/SIMD, 40/CU, 16 multi-wave workgroups/CU,
64 KiB LDS in 512-B granules. gfx908: separate AGPRs, max(V, A). gfx90a: unified 512,
granule 8, alignTo(V, 4) + A, 8 waves/SIMD. H100: 64K regs in 4 sub-partitions, 256 per
warp granule, 64 warps, 32 blocks, 228 KiB shared with 1 KiB reserved per block, 128-B granule.
"""

import json

import pytest

from gemmmodel.cli import main
from gemmmodel.errors import BadArgument
from gemmmodel.occupancy import occupancy
from gemmmodel.spec import list_specs, load_spec


@pytest.fixture(scope="module")
def gpu():
    return {name: load_spec(name) for name in ("gfx906", "gfx908", "gfx90a", "h100", "gtx1050")}


@pytest.mark.parametrize("threads, vgprs, sgprs, lds, waves_per_simd, limiter", [
    (256, 84, 0, 0, 3, "vgprs"),      # 256 // 84 = 3
    (256, 83, 0, 0, 3, "vgprs"),      # REFERENCE 3: the 83-VGPR assembly SGEMM ran 3 waves/SIMD
    (256, 64, 0, 0, 4, "vgprs"),      # 256 // 64 = 4
    (256, 65, 0, 0, 3, "vgprs"),      # alignTo(65, 4) = 68; 256 // 68 = 3
    (256, 24, 0, 0, 10, "waves"),     # 256 // 24 = 10 = the wave-slot maximum (tie -> waves)
    (256, 20, 80, 0, 10, "waves"),    # SGPRs <= 80 -> 10
    (256, 20, 81, 0, 9, "sgprs"),     # <= 88 -> 9
    (256, 20, 89, 0, 8, "sgprs"),     # <= 100 -> 8
    (256, 20, 101, 0, 7, "sgprs"),    # else 7
    (256, 20, 0, 16384, 4, "lds"),    # 65536 // 16384 = 4 workgroups of 4 waves -> 4/SIMD
    (256, 20, 0, 16385, 3, "lds"),    # 16385 -> 16896 B allocated (512-B granule): 3 workgroups
    (256, 20, 0, 100, 10, "waves"),   # 512 B allocated: 128 workgroups, not the limit
    (128, 20, 0, 0, 8, "workgroups"), # 2-wave workgroups: min(40 // 2, 16) = 16 -> 32 waves
    (64, 20, 0, 0, 10, "waves"),      # single-wave workgroups have no 16 cap: 40 waves
    (1024, 40, 0, 0, 4, "vgprs"),     # R = 6 but a 16-wave workgroup needs 4/SIMD: 1 fits
    (192, 84, 0, 0, 3, "vgprs"),      # 3-wave workgroups: floor(4 * 3 / 3) = 4 -> 12 waves
    (64, 20, 0, 16384, 1, "lds"),     # 4 single-wave workgroups spread over 4 SIMDs
])
def test_gfx906(gpu, threads, vgprs, sgprs, lds, waves_per_simd, limiter):
    occ = occupancy(gpu["gfx906"], threads, vgprs, sgprs=sgprs, lds_bytes=lds)
    assert (occ.waves_per_simd, occ.limiter) == (waves_per_simd, limiter)
    assert occ.waves_per_cu == occ.workgroups_per_cu * -(-threads // 64)


def test_headroom_text(gpu):
    assert occupancy(gpu["gfx906"], 256, 84).headroom == \
        "3 waves/SIMD, limited by VGPRs (84); <= 64 would give 4"
    assert occupancy(gpu["gfx906"], 256, 20, sgprs=89).headroom.endswith("<= 88 would give 9")
    # 20480 B allocated -> 3 workgroups; 65536 // 4 = 16384 B gives 4.
    assert occupancy(gpu["gfx906"], 256, 20, lds_bytes=20000).headroom.endswith(
        "<= 16384 B would give 4")
    # 1024 threads at 40 VGPRs: 7 waves/SIMD would not fit a second workgroup, 8 (32 VGPRs) does.
    assert occupancy(gpu["gfx906"], 1024, 40).headroom.endswith("<= 32 would give 8")
    assert "hardware maximum" in occupancy(gpu["gfx906"], 256, 16).headroom


@pytest.mark.parametrize("vgprs, agprs, waves_per_simd", [
    (84, 0, 3),       # max(84, 0) = 84
    (84, 100, 2),     # max(84, 100) = 100; 256 // 100 = 2
    (100, 84, 2),
    (64, 128, 2),     # 256 // 128
    (64, 64, 4),      # separate files: AGPRs up to the VGPR count cost nothing
])
def test_gfx908_separate_agprs_take_the_max(gpu, vgprs, agprs, waves_per_simd):
    assert occupancy(gpu["gfx908"], 256, vgprs, agprs=agprs).waves_per_simd == waves_per_simd


@pytest.mark.parametrize("vgprs, agprs, waves_per_simd", [
    (100, 100, 2),    # alignTo(100, 4) + 100 = 200 -> 200 (granule 8); 512 // 200 = 2
    (101, 100, 2),    # 104 + 100 = 204 -> 208; 512 // 208 = 2
    (64, 64, 4),      # 128; 512 // 128 = 4 (the same pair gives 4 on gfx908 too)
    (62, 3, 7),       # 64 + 3 = 67 -> 72; 512 // 72 = 7
    (100, 0, 4),      # no AGPRs: 100 -> 104; 512 // 104 = 4 (gfx906 gives 2)
    (61, 0, 8),       # 64; 512 // 64 = 8 = the gfx90a maximum
    (128, 128, 2),    # 256; 512 // 256 = 2
])
def test_gfx90a_unified_file(gpu, vgprs, agprs, waves_per_simd):
    assert occupancy(gpu["gfx90a"], 256, vgprs, agprs=agprs).waves_per_simd == waves_per_simd


def test_gfx90a_unified_headroom_names_the_sum(gpu):
    occ = occupancy(gpu["gfx90a"], 256, 100, agprs=100)
    assert "alignTo(V=100, 4) + A=100 = 200" in occ.headroom
    assert occ.headroom.endswith("<= 168 would give 3")     # 512 // 3 = 170 -> 168


@pytest.mark.parametrize("threads, regs, lds, blocks, warps, limiter", [
    (256, 64, 0, 4, 32, "vgprs"),        # 2048/warp: 16384 // 2048 = 8 per sub-partition
    (256, 32, 0, 8, 64, "threads"),      # 1024/warp: 64 warps; 64 // 8 = 8 (tie -> threads)
    (96, 40, 0, 16, 48, "vgprs"),        # 1280/warp: 12 per sub-partition x 4 = 48 warps / 3
    (1024, 64, 0, 1, 32, "vgprs"),       # 2048 x 32 warps = 65536: exactly fits one block
    (1024, 65, 0, 0, 0, "vgprs"),        # 2080 -> 2304 x 32 > 65536: cannot launch
    (256, 32, 48 * 1024, 4, 32, "lds"),  # 49152 + 1024 = 50176; 233472 // 50176 = 4
    (32, 16, 0, 32, 32, "blocks"),       # 32 blocks per SM
    (96, 255, 0, 2, 6, "vgprs"),         # 8160 -> 8192: 2 per sub-partition -> 8 warps / 3
])
def test_h100(gpu, threads, regs, lds, blocks, warps, limiter):
    occ = occupancy(gpu["h100"], threads, regs, lds_bytes=lds)
    assert (occ.blocks_per_sm, occ.warps_per_sm, occ.limiter) == (blocks, warps, limiter)


def test_nvidia_headroom_and_unlaunchable(gpu):
    assert occupancy(gpu["h100"], 256, 64).headroom == (
        "4 blocks/SM (32 warps), limited by registers (64/thread); <= 48 would give 5 blocks/SM "
        "(40 warps)")
    occ = occupancy(gpu["h100"], 1024, 72)
    assert occ.headroom.startswith("does not fit") and "<= 64 would give 1 blocks/SM" in occ.headroom


def test_gtx1050_shared_memory_granule_and_limit(gpu):
    occ = occupancy(gpu["gtx1050"], 128, 37, lds_bytes=12000)   # 12032 B (256-B granule)
    assert (occ.blocks_per_sm, occ.limiter) == (8, "lds")        # 98304 // 12032 = 8
    assert occupancy(gpu["gtx1050"], 128, 37, lds_bytes=48 * 1024 + 1).blocks_per_sm == 0
    assert occupancy(gpu["gtx1050"], 128, 37).limits["lds"] is None  # no reservation before sm_80


@pytest.mark.parametrize("name", list_specs())
def test_a_light_kernel_fills_every_gpu(name):
    spec = load_spec(name)
    occ = occupancy(spec, threads=4 * spec.wave_size, vgprs=16)
    assert occ.fraction == 1.0 and occ.waves_per_cu == spec.max_waves_per_cu


@pytest.mark.parametrize("name, kwargs", [
    ("gfx906", {"threads": 0, "vgprs": 10}), ("gfx906", {"threads": 2048, "vgprs": 10}),
    ("gfx906", {"threads": 256, "vgprs": 300}), ("gfx906", {"threads": 256, "vgprs": 10, "agprs": 4}),
    ("h100", {"threads": 256, "vgprs": 10, "sgprs": 20}), ("gfx906", {"threads": 256, "vgprs": 10,
                                                                      "sgprs": 900})])
def test_bad_arguments(name, kwargs):
    with pytest.raises(BadArgument):
        occupancy(load_spec(name), **kwargs)


def test_occupancy_command_json(capsys):
    assert main(["occupancy", "--gpu", "mi100", "--threads", "256", "--vgprs", "84",
                 "--agprs", "100", "--json"]) == 0
    amd = json.loads(capsys.readouterr().out)
    assert (amd["waves_per_simd"], amd["limiter"]) == (2, "vgprs")
    assert main(["occupancy", "--gpu", "h100", "--threads", "256", "--regs", "32",
                 "--lds", "48KiB", "--json"]) == 0
    nv = json.loads(capsys.readouterr().out)
    assert (nv["blocks_per_sm"], nv["warps_per_sm"], nv["limiter"]) == (4, 32, "lds")
    assert "waves_per_simd" not in nv and "blocks_per_sm" not in amd


def test_occupancy_command_text_and_errors(capsys):
    assert main(["occupancy", "--gpu", "gfx906", "--threads", "256", "--vgprs", "84"]) == 0
    assert "3 waves/SIMD" in capsys.readouterr().out
    assert main(["occupancy", "--gpu", "gfx906", "--threads", "256", "--vgprs", "84",
                 "--agprs", "8"]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "AGPRs" in err
    assert main(["occupancy", "--gpu", "h100", "--threads", "256", "--regs", "32",
                 "--lds", "12 apples"]) == 2
