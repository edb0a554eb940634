"""Device run AO (tools/device/run_ao.sh, H200; docs/model.md "Session 44"): the instruction-
fetch microbenchmark at the same warps per scheduler made of one block or of several, with
and without a __syncthreads after every pass of the body. The fetch rate at w depends on
how the w warps are grouped into blocks; the model's table (icache.json, four-warp blocks)
does not see that."""

import json

import pytest

from gemmmodel import CALIBRATION_DIR

FOLDER = CALIBRATION_DIR / "h200"
LARGE = (4096, 5120, 6144)          # 64-96 KiB of code: past the cache, before 144 KiB


def rates(name: str) -> dict:
    """{(body, w, threads per block): FFMA rate per scheduler}."""
    rows = json.loads((FOLDER / name).read_text())["rows"]
    return {(r["body_ffma"], r["warps_per_scheduler"], r.get("threads_per_block", 128)):
            r["fma_rate_per_scheduler"] for r in rows}


def test_two_warps_per_scheduler_fetch_worse_from_one_block_than_from_two():
    for name in ("icache_ao.json", "icache_ao_barrier.json"):
        r = rates(name)
        for body in LARGE:
            assert r[(body, 2, 128)] > 0.96          # two blocks of four warps
            assert r[(body, 2, 256)] < 0.90          # one block of eight warps
        # small code runs from the cache whatever the grouping
        assert min(r[(1536, w, t)] for w, t in ((2, 128), (2, 256), (4, 512))) > 0.98


def test_barriers_lift_one_block_of_sixteen_warps():
    free, held = rates("icache_ao.json"), rates("icache_ao_barrier.json")
    for body in LARGE:
        assert 0.64 < free[(body, 4, 128)] < 0.68          # four blocks
        assert free[(body, 4, 512)] < 0.71                 # one block, warps free
        assert held[(body, 4, 512)] > 0.82                 # one block, held together
        assert held[(body, 4, 128)] < 0.67                 # four blocks, each held


def test_the_default_grouping_repeats_the_committed_table():
    committed = {(r["body_ffma"], r["warps_per_scheduler"]): r["fma_rate_per_scheduler"]
                 for r in json.loads((FOLDER / "icache.json").read_text())["rows"]}
    again = rates("icache_ao.json")
    pairs = [(b, w) for b, w, t in again if t == 128 and (b, w) in committed]
    assert len(pairs) >= 10
    for key in pairs:
        assert again[(*key, 128)] == pytest.approx(committed[key], rel=0.03), key
