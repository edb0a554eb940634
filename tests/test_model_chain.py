"""The thirty-seventh change (session 72): a cp.async double buffer's fragment chain at one
resident block per SM (gemmmodel/model/chain.py; device run BS)."""

import pytest

from gemmmodel.model.chain import fragment_chain
from gemmmodel.model.terms import Term


def _cover(phi):
    return Term("fragment_cover", phi, "1", "min(1, w * c_v * D / L_lds_clk)", {})


def test_the_chain_formula():
    # 128 tile iterations of BK 16, L = 23 clk at 1980 MHz, one warp's 576 issue clocks per
    # tile iteration (36 per k step): 2048 k steps x 59 clk
    t = fragment_chain(_cover(0.0), 23 / 1.98e9, 1.98e9, 128, 16, 576, 1.0)
    assert t.value == pytest.approx(2048 * 59 / 1.98e9)
    assert t.inputs["I_k"] == pytest.approx(36.0) and t.inputs["L_lds_clk"] == pytest.approx(23)
    # the share of the latency the warps' own FMAs hide is not charged
    half = fragment_chain(_cover(0.5), 23 / 1.98e9, 1.98e9, 128, 16, 576, 1.0)
    assert half.value == pytest.approx(t.value / 2)
    assert fragment_chain(_cover(1.0), 23 / 1.98e9, 1.98e9, 128, 16, 576, 1.0).value == 0
    # off where another block's warps can issue under the wait
    assert fragment_chain(_cover(0.0), 23 / 1.98e9, 1.98e9, 128, 16, 576, 2.0).value == 0


def _components(name, shape):
    from gemmmodel import CALIBRATION_DIR
    from gemmmodel.model.calib import load_calib
    from gemmmodel.model.selection import swept_components
    from gemmmodel.spec import load_spec

    got = swept_components(CALIBRATION_DIR / "h200", load_spec("h200"), [(name, shape)],
                           load_calib("h200"))
    return got[(name, shape)]


@pytest.mark.parametrize(("name", "shape", "charged"), [
    # the device SASS reads the fragments 0.08 FMAs ahead: one block per SM at 8192x256
    ("128x128x16/4x8/db", (8192, 256, 2048), True),
    ("128x128x16/8x4/db", (256, 8192, 2048), True),
    # two blocks per SM at 4096^3
    ("128x128x16/4x8/db", (4096, 4096, 4096), False),
    # the 8x8 loop reads them 41 FMAs ahead (phi = 1)
    ("128x128x16/8x8/db", (8192, 256, 2048), False),
    # a single buffer and a register-staged double buffer have no copies
    ("128x128x16/4x8", (8192, 256, 2048), False),
    ("64x64x16/8x8/p4/db", (8192, 256, 2048), False),
])
def test_where_the_chain_is_charged(name, shape, charged):
    comp = _components(name, shape)
    assert (comp.chain_s > 0) is charged
    assert ("t_chain_s" in comp.terms) is charged
    if charged:
        # 2048 k steps of (23 clk + 36 issue clk) on the busiest SM
        assert comp.chain_s == pytest.approx(2048 * 59.4 / 1.98e9, rel=0.02)
