"""`gemmmodel occupancy`: waves per SIMD (AMD) or blocks and warps per SM (NVIDIA)."""

from __future__ import annotations

from gemmmodel.commands._common import add_json_flag, emit
from gemmmodel.occupancy import occupancy
from gemmmodel.spec import load_spec
from gemmmodel.units import parse_quantity


def add_parser(sub) -> None:
    p = sub.add_parser("occupancy", help="occupancy of a kernel from its register and LDS use",
                       description="Occupancy from threads per block, registers and LDS, with "
                                   "the limiting resource and what would raise it.")
    p.add_argument("--gpu", required=True, help="spec name, alias or TOML path (gemmmodel gpus)")
    p.add_argument("--threads", type=int, required=True, help="threads per workgroup / block")
    p.add_argument("--vgprs", "--regs", dest="vgprs", type=int, required=True,
                   help="vector registers per thread (NVIDIA: registers per thread)")
    p.add_argument("--agprs", type=int, default=0, help="AMD accumulation registers (gfx908/90a)")
    p.add_argument("--sgprs", type=int, default=0, help="AMD scalar registers per wave")
    p.add_argument("--lds", default="0", metavar="BYTES",
                   help="LDS / shared memory per block: bytes, or with a unit such as 16KiB")
    add_json_flag(p)
    p.set_defaults(func=run)


def run(args) -> int:
    spec = load_spec(args.gpu)
    lds_bytes = int(parse_quantity(args.lds, "bytes", "B"))
    occ = occupancy(spec, threads=args.threads, vgprs=args.vgprs, agprs=args.agprs,
                    sgprs=args.sgprs, lds_bytes=lds_bytes)
    return emit(args, occ.to_dict(), lambda _: _render(occ))


def _render(occ) -> str:
    if occ.vendor == "amd":
        counts = (f"{occ.waves_per_simd} waves/SIMD, {occ.waves_per_cu} waves/CU, "
                  f"{occ.workgroups_per_cu} workgroups/CU")
    else:
        counts = f"{occ.blocks_per_sm} blocks/SM, {occ.warps_per_sm} warps/SM"
    limits = ", ".join(f"{k} {'-' if v is None else v}" for k, v in occ.limits.items())
    return "\n".join([
        f"{occ.gpu}: {counts} ({occ.fraction:.0%} of wave slots)",
        f"  {occ.headroom}",
        f"  workgroups (blocks) per CU allowed by each limit: {limits}",
    ])
