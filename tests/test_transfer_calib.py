"""A GPU with no calibration of its own: the compile table's registers for the plain build
(compile.table.template_facts) and a sibling GPU's calibration carried over
(model.calib.transfer_calib, `predict --calib-from`)."""

from __future__ import annotations

import json

import pytest

from gemmmodel.cli import main
from gemmmodel.errors import BadArgument
from gemmmodel.model.calib import BOARD_KEYS, load_calib, transfer_calib
from gemmmodel.predict import rank
from gemmmodel.spec import load_spec


def test_plain_build_takes_the_table_registers_where_the_gpu_reported_none():
    from gemmmodel.compile.table import template_facts, template_table_facts
    from gemmmodel.template import parse_name

    spec = load_spec("h100")
    cfg = parse_name("128x128x16/8x8/p4")
    table = template_table_facts(str(spec.compile_target), False)[cfg.name]
    facts = template_facts(cfg, spec, None, (4096, 4096, 4096, 1))
    assert facts["regs"] == table["regs"] and facts["regs_source"] == "plain table"
    # the GPU's own registers win where it reported them
    own = template_facts(cfg, spec, table["regs"] + 7, (4096, 4096, 4096, 1))
    assert own["regs"] == table["regs"] + 7 and "regs_source" not in own
    # the bounds-checked build: the H100's own NVRTC registers (run H6), not the table's
    edge = template_facts(cfg, spec, None, (4000, 4000, 4000, 1))
    assert edge["edge"] and edge["regs_source"] == "edge build (device)"


def test_transfer_keeps_the_chip_and_drops_the_board():
    h200 = load_calib("h200")
    moved = transfer_calib("h200", load_spec("h100"))
    assert moved.fit == h200.fit and moved.fit            # the fitted efficiencies travel
    assert moved.training == h200.training
    for key, val in h200.values.items():
        if key in BOARD_KEYS:
            assert key not in moved.values
        else:
            assert moved.values[key] == val
    assert "lds_bytes_per_clk_per_cu" in moved.values and "dram_bandwidth_Bps" not in moved.values
    assert moved.inner_loop == h200.inner_loop and moved.icache == h200.icache
    assert "transferred" in moved.source and moved.gpu == "sm_90"


def test_transfer_refuses_another_architecture_and_an_uncalibrated_source():
    with pytest.raises(BadArgument, match="architecture"):
        transfer_calib("h200", load_spec("gfx908"))
    with pytest.raises(BadArgument, match="no calibration"):
        transfer_calib("sm_80", load_spec("a100-80gb"))


@pytest.fixture()
def h200_only(tmp_path):
    """A calibration root that holds the H200's folder and no H100 one (the state in which
    the H100 rankings were recorded)."""
    from gemmmodel import CALIBRATION_DIR

    (tmp_path / "h200").symlink_to(CALIBRATION_DIR / "h200", target_is_directory=True)
    return tmp_path


def test_rank_with_a_transferred_calibration_differs_from_the_a_priori_one(h200_only):
    a_priori = rank("h100", "4096x4096x4096", top=3, root=h200_only)
    moved = rank("h100", "4096x4096x4096", top=3, calib_from="h200", root=h200_only)
    assert not a_priori["calibration"]["fitted"] and not a_priori["calibration"]["measured_values"]
    assert moved["calibration"]["fitted"] and "transferred" in moved["calibration"]["folder"]
    assert a_priori["resources"]["plain table"] == a_priori["configs"]
    # the H200's fitted efficiencies (< 1) make every config slower than the a-priori ones
    assert moved["top"][0]["predicted_s"] > 1.1 * a_priori["top"][0]["predicted_s"]
    with pytest.raises(BadArgument, match="neighbours"):
        rank("h100", "4096x4096x4096", calib_from="h200", neighbours=True, root=h200_only)


def test_predict_cli_names_the_calibration(capsys):
    assert main(["predict", "--gpu", "a100-80gb", "--size", "2048x2048x2048", "--top", "2"]) == 0
    text = capsys.readouterr().out
    assert "calibration: none for this GPU" in text
    assert main(["predict", "--gpu", "h100", "--size", "2048x2048x2048", "--top", "2"]) == 0
    assert "calibration/h100 (" in capsys.readouterr().out
    assert main(["predict", "--gpu", "h100", "--size", "2048x2048x2048", "--top", "2",
                 "--calib-from", "h200", "--json"]) == 0
    res = json.loads(capsys.readouterr().out)
    assert "transferred" in res["calibration"]["folder"] and len(res["top"]) == 2
    assert main(["predict", "--gpu", "h100", "--size", "2048x2048x2048",
                 "--calib-from", "gfx908"]) != 0


def test_neighbours_from_a_sibling_correct_this_gpus_model(h200_only):
    """--neighbours-from h200: the H200's model errors at its nearest swept shapes scale the
    H100's model (a priori here, as no H100 folder exists in this root)."""
    res = rank("h100", "3000x5000x2500", top=3, neighbours_from="h200", root=h200_only)
    plain = rank("h100", "3000x5000x2500", top=200, root=h200_only)
    model = {t["name"]: t["predicted_s"] for t in plain["top"]}
    assert res["neighbours"]["from"] == "h200" and res["neighbours"]["neighbours"] == 16
    for item in res["top"]:
        assert item["model_s"] == pytest.approx(model.get(item["name"], item["model_s"]))
        assert item["predicted_s"] == pytest.approx(item["model_s"] * item["neighbour_factor"])
    with pytest.raises(BadArgument, match="architecture"):
        rank("gfx908", "3000x5000x2500", neighbours_from="h200", root=h200_only)
