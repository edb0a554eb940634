"""`gemmmodel run`: compile, check and time kernels on this machine's GPU.

    gemmmodel run --kernel 7.4,cublas --size 4096x4096x4096 --check
    gemmmodel run --kernel all --size 1024x1024x1024,2048x2048x2048 --json
    gemmmodel run --kernel batched --size 64x64x32x30 --trans NT

Exit codes: 0 all rows ran (or were skipped, with the reason), 1 some row failed (compile,
launch or check), 2 a bad argument or no GPU (one line on stderr).
"""

from __future__ import annotations

import csv
from pathlib import Path

from gemmmodel.commands._common import add_json_flag, emit, progress
from gemmmodel.errors import BadArgument

COLUMNS = ["kernel", "size", "status", "median_s", "p20_s", "p80_s", "spread", "reps", "noisy",
           "flop_per_s", "rel_err", "nan_count", "passed", "reason"]


def add_parser(sub) -> None:
    p = sub.add_parser("run", help="run, check and time kernels on the GPU",
                       description="Compile, check and time kernels on this machine's GPU.")
    p.add_argument("--kernel", required=True,
                   help="ID[,ID…]: catalogue ids or aliases, template configs, 'all', "
                        "'cublas' / 'rocblas', 'batched'")
    p.add_argument("--size", required=True,
                   help="MxNxK[,…] (MxNxKxBATCH for batched and vendor strided batched)")
    p.add_argument("--check", action="store_true",
                   help="check against a float64 reference (rel err < 1e-5, no NaN)")
    p.add_argument("--budget", type=float, default=1.0, metavar="S",
                   help="timing budget per kernel and size in seconds (default 1)")
    p.add_argument("--out", metavar="FILE.csv", help="also write the rows as CSV")
    p.add_argument("--trans", default="NN", help="op(A)op(B) for --kernel batched: NN NT TN TT")
    p.add_argument("--vendor", choices=["nvidia", "amd"], help="pick the GPU runtime")
    add_json_flag(p)
    p.set_defaults(func=run)


def _fmt(value, scale: float = 1.0, spec: str = ".4g") -> str:
    return "-" if value is None else format(value * scale, spec)


def render(payload: dict) -> str:
    dev = payload["device"]
    clock = dev.get("sm_clock_hz")
    head = f"{dev.get('name')} ({dev.get('arch')}, {dev.get('sms')} SMs"
    head += f", SM clock now {clock / 1e6:.0f} MHz)" if clock else ")"
    table = [["kernel", "size", "median ms", "p20 ms", "p80 ms", "TFLOP/s", "rel err",
              "pass", "note"]]
    for row in payload["rows"]:
        note = row["reason"] if row["status"] != "ok" else ("noisy" if row["noisy"] else "")
        passed = "-" if row["passed"] is None else ("yes" if row["passed"] else "NO")
        table.append([row["kernel"], row["size"], _fmt(row["median_s"], 1e3),
                      _fmt(row["p20_s"], 1e3), _fmt(row["p80_s"], 1e3),
                      _fmt(row["flop_per_s"], 1e-12, ".2f"), _fmt(row["rel_err"], 1, ".2e"),
                      passed, note])
    widths = [max(len(str(r[i])) for r in table) for i in range(len(table[0]) - 1)]
    lines = [head]
    for r in table:
        cells = [str(c).ljust(w) for c, w in zip(r[:-1], widths)]
        lines.append("  ".join(cells + [str(r[-1])]).rstrip())
    return "\n".join(lines)


def write_csv(path: str, rows: list[dict]) -> None:
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=COLUMNS + ["m", "n", "k", "batch"],
                                extrasaction="ignore")
        writer.writeheader()
        for row in rows:
            writer.writerow(row)


def run(args) -> int:
    from gemmmodel.catalogue import resolve
    from gemmmodel.runtime import get_runtime
    from gemmmodel.runtime.runner import expand_names, parse_sizes, run_kernels

    sizes = parse_sizes(args.size)
    names = expand_names(args.kernel.split(","))
    if not names:
        raise BadArgument("no kernel given: use --kernel ID[,ID…] or all")
    for name in names:
        resolve(name)  # an unknown name fails here, before the GPU is touched
    if not args.budget > 0:
        raise BadArgument(f"--budget must be > 0 seconds, got {args.budget}")
    if args.trans.upper() not in ("NN", "NT", "TN", "TT", "NC", "CN", "CC", "TC", "CT"):
        raise BadArgument(f"--trans {args.trans}: expected two of N, T, C (e.g. NT)")
    runtime = get_runtime(args.vendor)
    rows = run_kernels(runtime, names, sizes, check=args.check, budget_s=args.budget,
                       trans=args.trans.upper(), progress=progress)
    payload = {"device": runtime.device_info(), "rows": [r.to_dict() for r in rows]}
    if args.out:
        write_csv(args.out, payload["rows"])
    emit(args, payload, render)
    return 1 if any(r.status == "failed" for r in rows) else 0
