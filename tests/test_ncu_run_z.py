"""Device run Z (tools/device/run_z.sh; docs/model.md section 10, session 32): ncu's warp
samples per SASS instruction for the model's batched picks and the measured best. The
shares docs/model.md quotes are read back from the committed source pages."""

import csv
import gzip
import io

import pytest

from gemmmodel import CALIBRATION_DIR
from gemmmodel.ingest import parse_number

FOLDER = CALIBRATION_DIR / "h200"


def source_pages(shape: str, run: str = "z") -> dict:
    """{config: [row dict per SASS instruction]} of device run `run`'s source page at
    `shape`, calibration/h200/ncu_<run>_src_<shape>.txt.gz."""
    return pages_of(gzip.decompress((FOLDER / f"ncu_{run}_src_{shape}.txt.gz").read_bytes())
                    .decode())


def pages_of(text: str) -> dict:
    """{config: [row dict per SASS instruction]} of an ncu source-page export whose launches
    were named by tools/device/ncu_launch.py's `order,` lines."""
    lines = text.splitlines()
    order = [line.split(",")[2] for line in lines if line.startswith("order,")]
    starts = [i for i, line in enumerate(lines) if line.startswith('"Kernel Name"')]
    assert len(starts) == len(order)
    pages = {}
    for j, i in enumerate(starts):
        end = starts[j + 1] if j + 1 < len(starts) else len(lines)
        body = [line for line in lines[i + 1:end] if line.startswith('"')]
        pages[order[j]] = list(csv.DictReader(io.StringIO("\n".join(body))))
    return pages


def _num(row, key) -> float:
    return parse_number(row[key]) or 0.0


def samples(rows: list, opcode: str, stall: str) -> float:
    """Samples of `stall` at the kernel's instructions of `opcode`."""
    return sum(_num(r, stall) for r in rows if r["Source"].split()[0].split(".")[0] == opcode)


def share(rows: list, opcode: str, stall: str) -> float:
    """Samples of `stall` at instructions of `opcode` over all of the kernel's samples."""
    total = sum(_num(r, "Warp Stall Sampling (All Samples)") for r in rows)
    return samples(rows, opcode, stall) / total


def test_small_thread_tiles_wait_for_their_lds_fragments():
    pages = source_pages("176x112x448x50")
    assert list(pages) == ["32x32x8/4x4/p4/db", "32x32x8/4x4/p4", "32x32x16/4x4/p4",
                           "64x64x16/8x4/p4"]
    ffma = {c: share(r, "FFMA", "stall_short_sb") for c, r in pages.items()}
    fsel = {c: share(r, "FSEL", "stall_long_sb") for c, r in pages.items()}
    sts = {c: share(r, "STS", "stall_long_sb") for c, r in pages.items()}
    # docs/model.md's table: 31 / 24 / 22 / 9 %, 18 / 16 / 6 / 12 %, 1 / 20 / 15 / 10 %
    assert [round(100 * ffma[c]) for c in pages] == [31, 24, 22, 9]
    assert [round(100 * fsel[c]) for c in pages] == [18, 16, 6, 12]
    assert [round(100 * sts[c]) for c in pages] == [1, 20, 15, 10]
    # the BK 8 double buffer's load wait sits at the checked loads' FSELs, as much as the
    # BK 16 single buffer's at its STSs and FSELs together
    db, bk16 = "32x32x8/4x4/p4/db", "32x32x16/4x4/p4"
    assert fsel[db] + sts[db] == pytest.approx(fsel[bk16] + sts[bk16], abs=0.03)


def test_the_large_tile_hides_its_lds_latency_by_its_own_fmas():
    pages = source_pages("136x200x520x44")
    assert list(pages) == ["32x32x8/4x8/p4/db", "64x256x32/8x8/p4"]
    ffma = [share(r, "FFMA", "stall_short_sb") for r in pages.values()]
    assert [round(100 * x) for x in ffma] == [21, 3]
