"""`gemmmodel ingest --ncu FILE.csv | --rocprof FILE.csv [--gpu G] [--size MxNxK]
[--kernel ID]`: store a profiler export under calibration/ingested/<gpu>/ so that
`gemmmodel explain` shows it as measured (gemmmodel.ingest)."""

from __future__ import annotations

from gemmmodel.commands._common import add_json_flag, emit


def add_parser(sub) -> None:
    p = sub.add_parser("ingest", help="store Nsight Compute / rocprof CSV exports as measured "
                                      "data for explain",
                       description="Read kernel names, times and counters from `ncu --csv "
                                   "--page raw|details` or rocprof CSV and store them under "
                                   "calibration/ingested/<gpu>/.")
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--ncu", metavar="FILE.csv", help="Nsight Compute CSV export")
    src.add_argument("--rocprof", metavar="FILE.csv", help="rocprof / rocprofv3 CSV")
    p.add_argument("--gpu", help="GPU spec (ncu: taken from the CC column when unambiguous)")
    p.add_argument("--size", help="MxNxK[xB] the profiled launches computed (needed to "
                                  "compare with predictions; ncu: M, N follow from the grid)")
    p.add_argument("--kernel", help="name every launch as this kernel (e.g. a tile config: "
                                    "all template launches are called sgemm_tile)")
    add_json_flag(p)
    p.set_defaults(func=run)


def render(res: dict) -> str:
    lines = [(f"ingested {res['launches']} launch(es) from {res['tool']} for {res['gpu']}: "
              f"{res['identified']} named, {res['timed']} timed, {res['with_shape']} with a "
              f"full shape -> {res['out']}")]
    if res["unidentified"]:
        lines.append("not catalogue kernels (pass --kernel to name them): "
                     + ", ".join(res["unidentified"]))
    if res["with_shape"] < res["identified"]:
        lines.append("pass --size MxNxK so that explain can match the launches to a shape")
    return "\n".join(lines)


def run(args) -> int:
    from gemmmodel.catalogue import parse_size
    from gemmmodel.ingest import ingest

    tool, path = ("ncu", args.ncu) if args.ncu else ("rocprof", args.rocprof)
    size = parse_size(args.size, dims=4) if args.size else None
    res = ingest(path, tool, gpu=args.gpu, size=size, kernel=args.kernel or "")
    res.pop("rows")
    return emit(args, res, render)
