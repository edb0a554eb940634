"""NVIDIA occupancy against the driver: tests/fixtures/nvidia_occupancy_<gpu>.json.

Each fixture row was measured on a GPU with cuOccupancyMaxActiveBlocksPerMultiprocessor
(tools/device/occupancy_probe.py): threads, registers and shared memory of a compiled probe
kernel and the blocks per SM the driver allows. The model must match every row, and the
spec must agree with the device limits the fixture records.
"""

import json
from pathlib import Path

import pytest

from gemmmodel.occupancy import occupancy
from gemmmodel.spec import load_spec

FIXTURES = sorted((Path(__file__).parent / "fixtures").glob("nvidia_occupancy_*.json"))


def _cases(data):
    """Rows as (name, threads, regs, shared_bytes, blocks_per_sm, launchable)."""
    rows = data["cases"] if isinstance(data, dict) else data
    for i, row in enumerate(rows):
        if "shared_bytes" in row:
            shared = row["shared_bytes"]
            launchable = True
        else:
            shared = row.get("static_smem_bytes", 0) + row.get("dynamic_smem_bytes", 0)
            limit = row.get("max_dynamic_smem_attr_bytes")
            launchable = limit is None or row.get("dynamic_smem_bytes", 0) <= limit
        yield row.get("name", str(i)), row["threads"], row["regs"], shared, row["blocks_per_sm"], \
            launchable


def _spec_for(path: Path):
    return load_spec(path.stem.removeprefix("nvidia_occupancy_"))


def test_fixture_present_or_skip():
    if not FIXTURES:
        pytest.skip("no tests/fixtures/nvidia_occupancy_<gpu>.json yet: measured on the GPU "
                    "machine by tools/device/occupancy_probe.py")
    assert all(path.stat().st_size > 0 for path in FIXTURES)


@pytest.mark.parametrize("path", FIXTURES, ids=[p.stem for p in FIXTURES])
def test_model_matches_every_measured_row(path):
    data = json.loads(path.read_text())
    spec = _spec_for(path)
    assert spec.vendor == "nvidia"
    checked, wrong = 0, []
    for name, threads, regs, shared, blocks, launchable in _cases(data):
        if not launchable:       # dynamic shared memory above the kernel's opt-in attribute
            assert blocks == 0, name
            continue
        occ = occupancy(spec, threads=threads, vgprs=regs, lds_bytes=shared)
        checked += 1
        if occ.blocks_per_sm != blocks:
            wrong.append(f"{name}: measured {blocks}, model {occ.blocks_per_sm} ({occ.headroom})")
    assert not wrong, "\n".join(wrong)
    assert checked >= 10


@pytest.mark.parametrize("path", FIXTURES, ids=[p.stem for p in FIXTURES])
def test_spec_agrees_with_the_device_limits(path):
    data = json.loads(path.read_text())
    device = data.get("device") if isinstance(data, dict) else None
    if not device:
        pytest.skip(f"{path.name} records no device limits")
    spec = _spec_for(path)
    expected = {
        "sms": spec.compute_units, "warp_size": spec.wave_size,
        "regs_per_sm": spec.regs_per_lane_file, "shared_bytes_per_sm": spec.lds_bytes_per_cu,
        "shared_bytes_per_block_optin": spec.lds_bytes_per_block,
        "reserved_shared_bytes_per_block": spec.lds_reserved_per_block_bytes,
        "max_threads_per_sm": spec.max_waves_per_cu * spec.wave_size,
        "max_blocks_per_sm": spec.max_blocks_per_cu,
        "max_threads_per_block": spec.max_threads_per_block}
    measured = {k: device[k] for k in expected if k in device}
    assert measured and measured == {k: expected[k] for k in measured}
