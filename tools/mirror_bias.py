"""How the model prices a tall block tile against its wide mirror, and how K changes it.

    python3 tools/mirror_bias.py --gpu h200 [--json]              # run AU's K sweep (fast)
    python3 tools/mirror_bias.py --gpu h200 --committed [--json]  # every sweep, ~6 min
    python3 tools/mirror_bias.py --gpu h200 --wavefronts [--json] # run AU's ncu runs

A tall config (BM > BN) and its mirror (BN x BM, the same depth, thread tile and flags)
do the same work with the A and B tiles' sizes swapped. For each pair swept at one shape,

    m = ln(t_meas(tall) / t_meas(wide))                        [log]
    d = m - ln(t_pred(tall) / t_pred(wide))                    (--committed)

d > 0: the tall tile runs slower against its mirror than the model says. The pairs are
split by build: a cp.async double buffer (a /db config at a tile-multiple, non-batched
shape: kernels/template/sgemm_tile.cu fetch_async copies A with VEC 4-byte copies per
chunk along the rows of A, whose pitch is lda = K) against every register-staged build.

Default: device run AU's sweep (calibration/<gpu>/kpitch_sweep.csv: the whole search space
at M = N = 2048 and several K), the median of m at each K less its median at the first K,
per build; measured times only, no model. --committed: the median d over every committed
sweep (gemmmodel.model.selection.all_sweeps) with the committed fit's predictions, per
shape, then the median over the shapes whose K is / is not a power of two, per build. A
diagnostic: nothing is fitted to it. --wavefronts: from run AU's ncu runs at K = 2048 and
2304 (ncu_au_*.txt, ncu_au2_*.txt), the shared-memory wavefronts that each 4-byte cp.async
copy of A gains at the second pitch (gemmmodel.model.pitch.a_copy_extra_wavefronts).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from gemmmodel.model.pitch import PITCH_FILE as KPITCH_FILE  # noqa: E402
from gemmmodel.model.pitch import is_power_of_two, read_pitch_sweep, runs_cp_async  # noqa: E402
from gemmmodel.template import parse_name  # noqa: E402

CALIBRATION = Path(__file__).resolve().parents[1] / "calibration"


def mirror_of(config: str) -> str:
    """The config with BM and BN swapped (the rest of the name kept)."""
    bm, bn, rest = config.split("x", 2)
    return f"{bn}x{bm}x{rest}"


def is_cp_async(config: str, shape: tuple) -> bool:
    """True where `config` runs its cp.async double buffer at `shape` (pitch.runs_cp_async:
    a /db config, a non-batched launch, a shape that needs no edge checks)."""
    return runs_cp_async(parse_name(config), tuple(shape))


def mirror_pairs(frame: pd.DataFrame) -> pd.DataFrame:
    """Tall rows of `frame` (columns config, shape, meas [, pred]; shape an (M, N, K, batch)
    tuple) joined with their mirrors at the same shape: columns config, shape, m
    [, d], cp_async, k."""
    f = frame.copy()
    dims = {c: parse_name(c).params(32) for c in set(f.config)}
    f["tall"] = [dims[c]["BM"] > dims[c]["BN"] for c in f.config]
    f["mirror"] = [mirror_of(c) for c in f.config]
    keep = ["config", "shape", "meas"] + (["pred"] if "pred" in f else [])
    j = f[f.tall].merge(f[keep], left_on=["mirror", "shape"], right_on=["config", "shape"],
                        suffixes=("", "_w"))
    j["m"] = np.log(j.meas / j.meas_w)
    if "pred" in f:
        j["d"] = j.m - np.log(j.pred / j.pred_w)
    j["cp_async"] = [is_cp_async(c, s) for c, s in zip(j.config, j["shape"])]
    j["k"] = [int(s[2]) for s in j["shape"]]
    return j[["config", "shape", "m"] + (["d"] if "pred" in f else []) + ["cp_async", "k"]]


def read_kpitch(folder: Path) -> pd.DataFrame:
    """Run AU's sweep as config, shape (tuple), meas; rows with an error dropped."""
    return read_pitch_sweep(Path(folder) / KPITCH_FILE).rename(columns={"median_s": "meas"})


def kpitch_effect(frame: pd.DataFrame) -> dict:
    """{"cp_async" | "register": {K: median m at K less the median m at the smallest K}}
    over the mirror pairs of one M x N (module docstring)."""
    j = mirror_pairs(frame)
    k0 = int(j.k.min())
    ref = j[j.k == k0].set_index("config")["m"]
    j = j[j.config.isin(ref.index)].copy()
    j["dm"] = j.m - j.config.map(ref)
    out = {}
    for build, part in j.groupby("cp_async"):
        out["cp_async" if build else "register"] = {
            int(k): round(float(v), 4) for k, v in part.groupby("k").dm.median().items()}
    return out


def committed_bias(gpu: str) -> dict:
    """{"cp_async" | "register": {"pow2_k" | "other_k": {"shapes", "median_d"}}}: the median
    over shapes of each shape's median d, every committed sweep (module docstring)."""
    from gemmmodel.model import load_calib
    from gemmmodel.model import selection as sel
    from gemmmodel.model.combine import components_arrays, evaluate_arrays
    from gemmmodel.spec import load_spec

    folder = CALIBRATION / gpu
    measured = {k: t for part in sel.all_sweeps(folder).values() for k, t in part.items()}
    calib = load_calib(gpu, CALIBRATION)
    comps = sel.swept_components(folder, load_spec(gpu), list(measured), calib)
    keys = list(comps)
    pred = evaluate_arrays(components_arrays([comps[k] for k in keys]), calib.theta())["total"]
    frame = pd.DataFrame({"config": [c for c, _ in keys], "shape": [tuple(s) for _, s in keys],
                          "meas": [measured[k] for k in keys], "pred": pred})
    j = mirror_pairs(frame)
    per_shape = j.groupby(["cp_async", "shape"]).d.median().reset_index()
    per_shape["pow2"] = [is_power_of_two(int(s[2])) for s in per_shape["shape"]]
    out = {}
    for (build, pow2), part in per_shape.groupby(["cp_async", "pow2"]):
        out.setdefault("cp_async" if build else "register", {})[
            "pow2_k" if pow2 else "other_k"] = {"shapes": len(part),
                                                 "median_d": round(float(part.d.median()), 4)}
    return out


#: Run AU's ncu runs: (file prefix, the two K).
NCU_RUNS = (("ncu_au", 2048, 2304), ("ncu_au2", 2048, 2304))


def extra_wavefronts(folder: Path, m_n: str = "2048x2048") -> dict:
    """{config: row of pitch.a_copy_extra_wavefronts} over run AU's ncu runs in `folder`
    (runs whose two files are missing are skipped)."""
    from gemmmodel.model.pitch import a_copy_extra_wavefronts

    out = {}
    for prefix, k_lo, k_hi in NCU_RUNS:
        lo, hi = (folder / f"{prefix}_{m_n}x{k}.txt" for k in (k_lo, k_hi))
        if lo.is_file() and hi.is_file():
            out.update(a_copy_extra_wavefronts(lo.read_text(), hi.read_text(), k_lo, k_hi))
    return out


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--gpu", default="h200")
    p.add_argument("--committed", action="store_true",
                   help="every committed sweep against the model (slow)")
    p.add_argument("--wavefronts", action="store_true",
                   help="the extra shared-memory wavefronts per 4-byte A copy (run AU's ncu)")
    p.add_argument("--json", action="store_true")
    args = p.parse_args()
    folder = CALIBRATION / args.gpu
    if args.wavefronts:
        rows = extra_wavefronts(folder)
        if not rows:
            print(f"mirror_bias: no run AU ncu files in calibration/{args.gpu}/", file=sys.stderr)
            return 2
        if args.json:
            print(json.dumps({"gpu": args.gpu, "wavefronts": rows}, indent=2))
            return 0
        print("config                    BK  padded  A copies/tile  extra wavefronts per A copy")
        for name, r in sorted(rows.items(), key=lambda x: (x[1]["bk"], x[1]["padded"], x[0])):
            print(f"{name:25s} {r['bk']:3d}  {str(r['padded']):6s}  {r['a_copies_per_tile']:13.0f}"
                  f"  {r['extra_per_a_copy']:+.2f}")
        return 0
    if args.committed:
        if not folder.is_dir():
            print(f"mirror_bias: no calibration/{args.gpu}/", file=sys.stderr)
            return 2
        print(f"[mirror_bias] assembling every swept config of {args.gpu} ...", file=sys.stderr)
        result = {"gpu": args.gpu, "committed": committed_bias(args.gpu)}
    else:
        if not (folder / KPITCH_FILE).is_file():
            print(f"mirror_bias: no calibration/{args.gpu}/{KPITCH_FILE} (device run AU)",
                  file=sys.stderr)
            return 2
        result = {"gpu": args.gpu, "kpitch": kpitch_effect(read_kpitch(folder))}
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    for build, rows in result.get("kpitch", {}).items():
        print(f"{build}: median ln(tall / wide) less K = {min(rows)}: " +
              ", ".join(f"K {k} {v:+.3f}" for k, v in rows.items()))
    for build, rows in result.get("committed", {}).items():
        print(f"{build}: median d " + ", ".join(
            f"{k} {v['median_d']:+.3f} ({v['shapes']} shapes)" for k, v in rows.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
