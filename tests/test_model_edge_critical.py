"""The launch's last round lasts as long as its edge blocks (docs/model.md section 10,
twenty-fourth change; device run AB): in a register-staged double buffer an edge block
takes the checked loads every tile and waits their whole latency, so the share 1/rounds of
the busiest SM's iterations (its last round; the partial last round where there is one) is
priced with checked share s = 1 (CPU only)."""

from dataclasses import replace

import pytest

from gemmmodel.compile.table import template_facts
from gemmmodel.model import assemble, load_calib
from gemmmodel.model.combine import evaluate
from gemmmodel.spec import load_spec
from gemmmodel.template import parse_name

H200 = load_spec("h200")


def components(name, shape):
    cfg = parse_name(name)
    return assemble(cfg.params(32), template_facts(cfg, H200, None, shape), H200, shape,
                    load_calib("h200"))


def test_one_round_launch_waits_as_its_edge_blocks():
    comp = components("32x64x8/8x8/p4/db", (1100, 900, 5200))
    assert comp.rounds == 1 and comp.edge_critical == 1.0
    assert 0 < comp.checked_share < 0.1          # 49 of 525 blocks take the checked loads
    theta = load_calib("h200").theta()
    with_edge = evaluate(comp, theta)
    without = evaluate(replace(comp, edge_critical=0.0), theta)
    assert with_edge["t_latency"] > without["t_latency"]
    # run AB: the launch took 625 us (its edge blocks 585 us, the interior ones 388 us);
    # the model 659 us since the thirty-first change's refit (session 59; 5.4 % over)
    assert with_edge["total"] == pytest.approx(625e-6, rel=0.06)
    assert without["total"] < 0.9 * with_edge["total"]


def test_only_register_double_buffers_with_edge_blocks_are_critical():
    # the single buffer waits its loads in every block (run AB: edge = interior)
    single = components("32x64x8/8x8/p4", (1100, 900, 5200))
    assert single.edge_critical == 0 and single.tail_edge_critical == 0
    # a tile-multiple shape runs the plain cp.async build: no checked loads at all
    plain = components("32x64x8/8x8/p4/db", (1088, 896, 5200))
    assert plain.edge_critical == 0 and plain.checked_share == 0


def test_the_last_round_is_the_critical_share():
    full = components("64x64x16/8x4/p4/db", (2000, 2000, 2000))   # two full rounds
    assert full.rounds == 2 and full.tail_share == 0 and full.edge_critical == 0.5
    part = components("64x64x16/8x4/p4/db", (3000, 1000, 1024))   # a partial last round
    assert part.tail_share > 0 and part.edge_critical == 0 and part.tail_edge_critical == 1
