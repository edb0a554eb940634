"""The recorded NVIDIA occupancy fixtures: provenance present, every case within the limits
the same device reported (a corrupted or mislabelled fixture fails here)."""

import json
from pathlib import Path

import pytest

FIXTURES = sorted((Path(__file__).parent / "fixtures").glob("nvidia_occupancy_*.json"))


def test_fixtures_exist():
    assert FIXTURES, "tools/device/occupancy_probe.py output missing from tests/fixtures/"


@pytest.mark.parametrize("path", FIXTURES, ids=[p.stem for p in FIXTURES])
def test_occupancy_fixture_is_consistent(path):
    data = json.loads(path.read_text())
    prov, dev, cases = data["provenance"], data["device"], data["cases"]
    for key in ("gpu", "arch", "driver", "date_utc", "method"):
        assert prov.get(key), key
    assert len(cases) >= 12
    assert len({c["name"] for c in cases}) == len(cases)
    for c in cases:
        blocks = c["blocks_per_sm"]
        assert 1 <= blocks <= dev["max_blocks_per_sm"], c
        assert blocks * c["threads"] <= dev["max_threads_per_sm"], c
        assert blocks * c["regs"] * c["threads"] <= dev["regs_per_sm"], c
        smem = c["static_smem_bytes"] + c["dynamic_smem_bytes"]
        if smem:
            per_block = smem + dev["reserved_shared_bytes_per_block"]
            assert blocks * per_block <= dev["shared_bytes_per_sm"], c
    # the probe covers the limiters: registers, shared memory, threads and the block cap
    assert any(c["regs"] >= 128 for c in cases)
    assert any(c["dynamic_smem_bytes"] > 48 * 1024 for c in cases)
    assert any(c["threads"] == 1024 for c in cases)
    assert any(c["blocks_per_sm"] == dev["max_blocks_per_sm"] for c in cases)
