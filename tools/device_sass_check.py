"""Compare the device NVRTC's SASS with the local nvcc's compile facts, build by build.

    python3 tools/device_sass_check.py device_cubins_sm_90.tar.xz \
        --out calibration/h200/device_sass_check.csv

The tarball is what tools/device/device_cubins.py writes on the GPU machine (every search-
space config's plain, bounds-checked and batched cubin, with manifest.csv). Each cubin is
disassembled here with `nvdisasm -c` and read by the same code as the local facts
(gemmmodel.compile.sass, driver._mixes: the main loop's instructions and load round trips).
Written per build and entry the model reads (sgemm_tile plain and bounds-checked,
sgemm_tile_batched_nn): the local table's value beside the device's, and the device main
loop's fragment lookahead (gemmmodel.compile.lookahead: FFMAs between each LDS and the
first FFMA that uses its fragment, mean over the loop's LDS).
"""

from __future__ import annotations

import argparse
import csv
import subprocess
import sys
import tarfile
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from gemmmodel import CALIBRATION_DIR
from gemmmodel.compile.driver import _mixes
from gemmmodel.compile.lookahead import fragment_lookahead
from gemmmodel.compile.loops import find_main_loop
from gemmmodel.compile.sass import parse_sass
from gemmmodel.compile.table import template_table_path
from gemmmodel.compile.tools import find_tool

#: the build's name in the manifest -> template_table_path's flags for its local table
TABLES = {"plain": {}, "edge": {"edge": True}, "batched": {"batched": True}}
FIELDS = ("config", "build", "entry", "local_loop_instructions", "device_loop_instructions",
          "local_total_instructions", "device_total_instructions", "local_load_round_trips",
          "device_load_round_trips", "device_fragment_lookahead", "device_fragment_lds")


def local_facts(target: str = "sm_90") -> dict:
    """{(config, build, entry): row} of the committed local compile-facts tables."""
    out = {}
    for build, flags in TABLES.items():
        with template_table_path(target, **flags).open() as fh:
            for row in csv.DictReader(fh):
                out[(row["kernel_id"], build, row["kernel"])] = row
    return out


def device_facts(cubin: Path, nvdisasm: str) -> dict:
    """{entry: (loop instructions, total instructions, load round trips, fragment lookahead,
    LDS counted)} of one cubin (lookahead: gemmmodel.compile.lookahead, over the main
    loop's trip)."""
    text = subprocess.run([nvdisasm, "-c", str(cubin)], capture_output=True, text=True,
                          check=True).stdout
    out = {}
    for name, listing in parse_sass(text).items():
        mix = _mixes(listing, "nvidia")
        loop = find_main_loop(listing)
        ahead, n_lds = fragment_lookahead(loop.path or loop.instrs) if loop else (None, 0)
        out[name] = (mix["mix_loop"]["instructions"], mix["mix_total"]["instructions"],
                     mix["load_round_trips"], ahead, n_lds)
    return out


def compare(tarball: Path, workers: int = 2) -> list[dict]:
    """One row per (config, build, entry) found in both the tarball and the local tables."""
    nvdisasm = str(find_tool("nvdisasm"))
    local = local_facts()
    with tempfile.TemporaryDirectory() as tmp:
        with tarfile.open(tarball) as tar:
            tar.extractall(tmp, filter="data")
        with (Path(tmp) / "manifest.csv").open() as fh:
            manifest = list(csv.DictReader(fh))
        with ThreadPoolExecutor(workers) as pool:
            facts = list(pool.map(lambda r: device_facts(Path(tmp) / "cubins" / r["key"],
                                                         nvdisasm), manifest))
    rows = []
    for rec, per_entry in zip(manifest, facts):
        for entry, (loop, total, trips, ahead, n_lds) in per_entry.items():
            row = local.get((rec["config"], rec["build"], entry))
            if row is None:
                continue
            rows.append({"config": rec["config"], "build": rec["build"], "entry": entry,
                         "local_loop_instructions": row["loop_instructions"],
                         "device_loop_instructions": loop,
                         "local_total_instructions": row["total_instructions"],
                         "device_total_instructions": total,
                         "local_load_round_trips": row["load_round_trips"],
                         "device_load_round_trips": trips,
                         "device_fragment_lookahead": (round(ahead, 2) if ahead is not None
                                                       else ""),
                         "device_fragment_lds": n_lds})
    return rows


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("tarball")
    p.add_argument("--out", default=str(CALIBRATION_DIR / "h200" / "device_sass_check.csv"))
    args = p.parse_args()
    rows = compare(Path(args.tarball))
    with open(args.out, "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=FIELDS)
        writer.writeheader()
        writer.writerows(rows)
    print(f"{len(rows)} builds compared -> {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
