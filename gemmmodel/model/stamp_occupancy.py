"""Did a block-stamped launch run at the occupancy of the build the sweeps time?

tools/device/tail_stamps.py times `sgemm_tile_stamped`, an instrumented twin of the
template's `sgemm_tile` (kernels/template/sgemm_tile.cu, GM_STAMPS=1): the same tile code
plus thread 0's %smid and %globaltimer stores. It is its own entry, so nvcc allocates its
registers afresh, and a few registers more or fewer can move a build across an occupancy
step. Run BM (session 70, calibration/h200/block_stamps_bm.json) found the stamped
64x128x16/8x8/p4/db at 4 blocks per SM where the swept build (133 registers,
calibration/h200/template.csv) fits 3: the stamped launch at 2304x1536x2816 ended in 581 µs
against the sweep's 856 µs for the same config and shape.

`stamped_occupancy` compares, per stamped launch, the blocks per SM the stamp tool recorded
(`capacity`, the driver's occupancy of the stamped entry) with the model's for the build the
sweep runs at that shape (gemmmodel.model.waves, the registers the GPU reported for the
swept build). A launch stamped with its bounds-checked build forced at a tile multiple
(`+edge`, edge_build 1 where no tile crosses M, N or K) is not the swept build and is marked
`forced_edge` rather than compared.
"""

from __future__ import annotations

import json
from pathlib import Path

from gemmmodel import CALIBRATION_DIR

#: Every block-stamp file: the tail stamps (runs U, AB, AD, AE, AQ; edge_tail.STAMP_GLOB) and
#: the block stamps kept out of edge_tail's fit (runs BK, BM).
STAMP_FILES_GLOB = "*_stamps*.json"


def stamped_occupancy(gpu: str = "h200", root: Path | None = None) -> list[dict]:
    """[{file, size, config, edge_build, forced_edge, stamped, swept, matches}], one per
    distinct (file, size, config) of the committed stamp files, in file order (module
    docstring). `swept` is None where the model cannot assemble the config."""
    from gemmmodel.calibrate.load import load
    from gemmmodel.compile.table import template_facts
    from gemmmodel.errors import GemmModelError
    from gemmmodel.model.assemble import describe
    from gemmmodel.model.samples import template_registers
    from gemmmodel.model.waves import wave_info
    from gemmmodel.spec import load_spec
    from gemmmodel.template import parse_name
    from gemmmodel.template.plan import shape_needs_edge

    root = Path(root or CALIBRATION_DIR)
    folder = root / gpu
    spec = load_spec(gpu)
    regs = template_registers(load(gpu, root))
    out, seen = [], set()
    for path in sorted(folder.glob(STAMP_FILES_GLOB)):
        for run in json.loads(path.read_text()).get("runs", []):
            key = (path.name, str(run["size"]), str(run["config"]))
            if key in seen:
                continue
            seen.add(key)
            shape = tuple(int(x) for x in key[1].split("x")) + (1,)
            edge_build = int(run.get("edge_build") or 0)
            cfg = parse_name(key[2])
            forced = bool(edge_build) and not shape_needs_edge(cfg, shape)
            try:
                facts = template_facts(cfg, spec, regs.get(cfg.name), shape)
                swept = int(wave_info(describe(cfg.params(int(spec.wave_size))), spec,
                                      shape, facts).blocks_per_cu)
            except GemmModelError:
                swept = None
            stamped = int(run["capacity"])
            out.append({"file": key[0], "size": key[1], "config": key[2],
                        "edge_build": edge_build, "forced_edge": forced,
                        "stamped": stamped, "swept": swept,
                        "matches": swept is not None and stamped == swept})
    return out


def mismatches(rows: list[dict]) -> list[dict]:
    """The rows of stamped_occupancy whose stamped launch ran at another occupancy than the
    swept build, leaving out the forced edge builds (not the swept build by design)."""
    return [r for r in rows if not r["forced_edge"] and not r["matches"]]


__all__ = ["STAMP_FILES_GLOB", "mismatches", "stamped_occupancy"]
