"""Ingest profiler exports as measurements: Nsight Compute CSV and rocprof CSV.

`ingest(path, tool, gpu, size, kernel)` reads one export, names each profiled launch after
the catalogue kernel whose entry point it ran (or `kernel` for all rows, e.g. a template
config, whose launches are all called `sgemm_tile`), and writes the launches to
calibration/ingested/<gpu>/<tool>-<file stem>.csv (COLUMNS below; times in s, bytes in B,
counters as JSON {metric: [value, unit as exported]}). `load_ingested(gpu)` reads them back
for `explain`, which shows them as measured next to the prediction.

Formats (taken from the vendors' documentation and public exports; no real export of this
project's kernels was available when this was written):
  ncu --csv --page details : one row per (launch, metric): "ID", "Kernel Name", "Block Size",
      "Grid Size", "CC", …, "Section Name", "Metric Name", "Metric Unit", "Metric Value".
  ncu --csv --page raw     : one row per launch, one column per metric; the row after the
      header gives the units ("", …, "nsecond", "byte").
  Values may carry thousands separators ("1,234,567") and "n/a". Time: the metric
  gpu__time_duration.sum (raw) or "Duration" (details). ncu locks the clocks to base by
  default (--clock-control base), so its times can be longer than unprofiled runs.
  rocprof (v1) results.csv : "Index", "KernelName", "grd", "wgr", "lds", "vgpr" or
      "arch_vgpr", "sgpr", "BeginNs", "EndNs", … and one column per requested counter.
  rocprof --stats results.stats.csv : "Name", "Calls", "TotalDurationNs", "AverageNs".
  rocprofv3 kernel_trace.csv : "Kernel_Name", "Start_Timestamp", "End_Timestamp" (ns),
      "VGPR_Count", "LDS_Block_Size", "Grid_Size_X", "Workgroup_Size_X", …
  rocprofv3 counter_collection.csv : long form, "Dispatch_Id", "Kernel_Name",
      "Counter_Name", "Counter_Value".
"""

from __future__ import annotations

import csv
import io
import json
import re
import statistics
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from gemmmodel import CALIBRATION_DIR
from gemmmodel.errors import BadArgument

TOOLS = ("ncu", "rocprof")
COLUMNS = ("tool", "source_file", "ingested_utc", "launch_id", "kernel_name", "kernel", "M",
           "N", "K", "batch", "grid", "block", "time_s", "regs", "lds_bytes", "counters")

#: Export units -> SI factor (times to s, sizes to B); other units are kept as exported.
UNIT_SI = {
    "nsecond": 1e-9, "ns": 1e-9, "usecond": 1e-6, "us": 1e-6, "msecond": 1e-3, "ms": 1e-3,
    "second": 1.0, "s": 1.0,
    "byte": 1.0, "B": 1.0, "Kbyte": 1e3, "KB": 1e3, "Mbyte": 1e6, "MB": 1e6,
    "Gbyte": 1e9, "GB": 1e9, "Kibyte": 1024.0, "KiB": 1024.0,
}
TIME_METRICS = ("gpu__time_duration.sum", "Duration")
REG_METRICS = ("launch__registers_per_thread", "Registers Per Thread", "arch_vgpr", "vgpr",
               "VGPR_Count")
LDS_METRICS = ("launch__shared_mem_per_block_static", "Static Shared Memory Per Block", "lds",
               "LDS_Block_Size")
#: Profiler quantities with a model counterpart: name -> (model Term name, export unit is
#: converted to SI with UNIT_SI). Registers compare with the `resources` term.
COUNTERPARTS = {
    "dram__bytes_read.sum": "dram_bytes", "dram__bytes.sum": "dram_bytes",
    "lts__t_bytes.sum": "l2_bytes", "launch__registers_per_thread": "resources",
    "Registers Per Thread": "resources", "arch_vgpr": "resources", "vgpr": "resources",
    "VGPR_Count": "resources",
}
_THOUSANDS = re.compile(r"^-?\d{1,3}(,\d{3})+(\.\d+)?$")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclass
class ProfiledLaunch:
    """One profiled kernel launch. time_s in s; counters: metric -> (value, unit)."""

    kernel_name: str
    launch_id: str
    time_s: float | None = None
    grid: str = ""
    block: str = ""
    regs: float | None = None
    lds_bytes: float | None = None
    counters: dict = field(default_factory=dict)


def parse_number(text) -> float | None:
    """A profiler value as float: "1,234.5" -> 1234.5; "n/a", "" -> None."""
    s = str(text).strip().strip('"')
    if not s or s.lower() in ("n/a", "nan", "-"):
        return None
    if _THOUSANDS.match(s):
        s = s.replace(",", "")
    try:
        return float(s)
    except ValueError:
        return None


def base_name(kernel_name: str) -> str:
    """The function name of a profiled kernel: "void sgemm_7_4(int, …)" -> "sgemm_7_4",
    "sgemm_7_4.kd" -> "sgemm_7_4"."""
    text = str(kernel_name).strip()
    text = re.sub(r"^(void|__global__)\s+", "", text)
    text = text.split("(")[0].split("<")[0].split(" [clone")[0]
    text = text.removesuffix(".kd").strip()
    hit = _NAME.search(text.split("::")[-1])
    return hit.group(0) if hit else text


def _si(value: float | None, unit: str) -> float | None:
    if value is None:
        return None
    return value * UNIT_SI.get(unit.strip().split("/")[0], 1.0)


def _table(text: str) -> list[list[str]]:
    """CSV rows from the first header-looking line on (ncu prints ==PROF== lines first)."""
    lines = text.splitlines()
    heads = ('"', "Index,", "Name,", "Kind,", "Correlation_Id,", "ID,")
    start = next((i for i, line in enumerate(lines) if line.startswith(heads)), None)
    if start is None:
        return []
    return [row for row in csv.reader(io.StringIO("\n".join(lines[start:]))) if row]


def _first(counters: dict, names: tuple) -> tuple[float | None, str]:
    for name in names:
        if name in counters and counters[name][0] is not None:
            return counters[name]
    return None, ""


def _finish(launch: ProfiledLaunch) -> ProfiledLaunch:
    value, unit = _first(launch.counters, TIME_METRICS)
    if launch.time_s is None and value is not None:
        launch.time_s = _si(value, unit or "ns")
    regs, _ = _first(launch.counters, REG_METRICS)
    lds, lds_unit = _first(launch.counters, LDS_METRICS)
    launch.regs = launch.regs if launch.regs is not None else regs
    if launch.lds_bytes is None and lds is not None:
        launch.lds_bytes = _si(lds, lds_unit or "byte")
    return launch


def read_ncu_csv(text: str) -> list[ProfiledLaunch]:
    """Launches of an `ncu --csv` export (--page details or --page raw)."""
    rows = _table(text)
    if not rows or "Kernel Name" not in rows[0]:
        raise BadArgument("not an Nsight Compute CSV: no \"Kernel Name\" column in the header")
    head = rows[0]
    col = {name: i for i, name in enumerate(head)}
    get = (lambda r, k: r[col[k]] if k in col and col[k] < len(r) else "")
    launches: dict[str, ProfiledLaunch] = {}
    if "Metric Name" in col:                                   # details page: long form
        for r in rows[1:]:
            lid = get(r, "ID") or str(len(launches))
            launch = launches.setdefault(lid, ProfiledLaunch(
                get(r, "Kernel Name"), lid, grid=get(r, "Grid Size"), block=get(r, "Block Size")))
            launch.counters[get(r, "Metric Name")] = (parse_number(get(r, "Metric Value")),
                                                      get(r, "Metric Unit"))
    else:                                                      # raw page: wide form
        body = rows[1:]
        units = [""] * len(head)
        if body and not get(body[0], "Kernel Name") and not get(body[0], "ID"):
            units, body = body[0] + [""] * (len(head) - len(body[0])), body[1:]
        fixed = {"ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Context",
                 "Stream", "Block Size", "Grid Size", "Device", "CC"}
        for n, r in enumerate(body):
            lid = get(r, "ID") or str(n)
            counters = {name: (parse_number(r[i]) if i < len(r) else None, units[i])
                        for i, name in enumerate(head) if name not in fixed}
            launches[lid] = ProfiledLaunch(get(r, "Kernel Name"), lid, grid=get(r, "Grid Size"),
                                           block=get(r, "Block Size"), counters=counters)
    return [_finish(x) for x in launches.values()]


def read_ncu_launches(text: str) -> list[tuple[list[str], ProfiledLaunch]]:
    """The launches of an `ncu --csv --page raw` run of tools/device/ncu_launch.py configs,
    in launch order, each with the fields of its order line: ncu_launch.py prints
    `order,<index>,<name>,<entry>,<size>` as it launches (the ncu_*.txt files of
    calibration/<gpu>/ hold both), and ncu numbers the launches from 0 in the same order.
    A config launched twice appears twice."""
    order = {int(f[1]): f for f in (line.split(",") for line in text.splitlines()
                                    if line.startswith("order,")) if len(f) >= 3}
    rows = "\n".join(line for line in text.splitlines() if line.startswith('"'))
    out = []
    for launch in read_ncu_csv(rows):
        if int(launch.launch_id) not in order:
            raise BadArgument(f"ncu launch {launch.launch_id} has no order line")
        out.append((order[int(launch.launch_id)], launch))
    return out


def read_ncu_launch_run(text: str) -> dict[str, ProfiledLaunch]:
    """read_ncu_launches keyed by what each launch ran (its order line's name; the last
    launch of a name where it ran twice)."""
    return {fields[2]: launch for fields, launch in read_ncu_launches(text)}


def read_rocprof_csv(text: str) -> list[ProfiledLaunch]:
    """Launches (or per-kernel averages) of a rocprof / rocprofv3 CSV (module docstring)."""
    rows = _table(text)
    if not rows:
        raise BadArgument("not a rocprof CSV: no header row")
    head = rows[0]
    col = {name: i for i, name in enumerate(head)}
    get = (lambda r, k: r[col[k]] if k in col and col[k] < len(r) else "")
    out: dict[str, ProfiledLaunch] = {}
    if "Counter_Name" in col:                                  # rocprofv3 counters, long form
        for r in rows[1:]:
            lid = get(r, "Dispatch_Id") or get(r, "Correlation_Id")
            launch = out.setdefault(lid, ProfiledLaunch(get(r, "Kernel_Name"), lid,
                                                        grid=get(r, "Grid_Size"),
                                                        block=get(r, "Workgroup_Size")))
            launch.counters[get(r, "Counter_Name")] = (parse_number(get(r, "Counter_Value")), "")
            for key in ("VGPR_Count", "LDS_Block_Size"):
                if key in col:
                    launch.counters[key] = (parse_number(get(r, key)), "")
        return [_finish(x) for x in out.values()]
    name_key = next((k for k in ("KernelName", "Kernel_Name", "Name") if k in col), None)
    if name_key is None:
        raise BadArgument("not a rocprof CSV: no KernelName / Kernel_Name / Name column")
    begin, end = (("BeginNs", "EndNs") if "BeginNs" in col else
                  ("Start_Timestamp", "End_Timestamp"))
    skip = {name_key, begin, end, "Index", "Dispatch_Id", "Correlation_Id"}
    for n, r in enumerate(rows[1:]):
        lid = get(r, "Index") or get(r, "Dispatch_Id") or str(n)
        b, e = parse_number(get(r, begin)), parse_number(get(r, end))
        t = (e - b) * 1e-9 if b is not None and e is not None and e > b else None
        if t is None and "AverageNs" in col:                   # --stats summary row
            avg = parse_number(get(r, "AverageNs"))
            t = avg * 1e-9 if avg else None
        grid = get(r, "grd") or "x".join(get(r, f"Grid_Size_{a}") for a in "XYZ" if
                                         f"Grid_Size_{a}" in col)
        block = get(r, "wgr") or "x".join(get(r, f"Workgroup_Size_{a}") for a in "XYZ" if
                                          f"Workgroup_Size_{a}" in col)
        counters = {k: (parse_number(get(r, k)), "") for k in head if k not in skip}
        counters["lds"] = (counters.get("lds", (None, ""))[0], "byte")
        out[lid] = _finish(ProfiledLaunch(get(r, name_key), lid, time_s=t, grid=grid,
                                          block=block, counters=counters))
    return list(out.values())


def _entry_ids() -> dict[str, str]:
    from gemmmodel.catalogue import load_catalogue

    return {e.entry: kid for kid, e in load_catalogue().items()}


def identify(kernel_name: str, override: str = "") -> str:
    """Catalogue id (or template config name) a profiled launch ran ('' when unknown)."""
    if override:
        return override
    return _entry_ids().get(base_name(kernel_name), "")


def _guess_gpu(text: str) -> str:
    """Spec name from the export's compute capability column (ncu), if unambiguous."""
    from gemmmodel.spec import list_specs, load_spec

    rows = _table(text)
    head = rows[0] if rows else []
    if "CC" not in head:
        raise BadArgument("the export does not name the GPU: pass --gpu NAME")
    ccs = {r[head.index("CC")] for r in rows[1:] if len(r) > head.index("CC")}
    ccs = {c for c in ccs if re.match(r"^\d+\.\d+$", c)}
    if len(ccs) != 1:
        raise BadArgument("the export does not name one GPU: pass --gpu NAME")
    arch = "sm_" + ccs.pop().replace(".", "")
    names = [n for n in list_specs() if load_spec(n).arch == arch]
    if len(names) != 1:
        raise BadArgument(f"compute capability {arch}: {len(names)} specs match "
                          f"({', '.join(names) or 'none'}); pass --gpu NAME")
    return names[0]


def _shape_from_grid(kernel: str, grid: str) -> tuple[int | None, int | None]:
    """(M, N) from an ncu grid "(gx, gy, gz)" of a catalogue kernel (grid = N/BN x M/BM)."""
    from gemmmodel.catalogue import load_catalogue

    entry = load_catalogue().get(kernel)
    dims = [int(x) for x in re.findall(r"\d+", grid)]
    if entry is None or len(dims) < 2:
        return None, None
    return dims[1] * int(entry.params["BM"]), dims[0] * int(entry.params["BN"])


def ingest(path, tool: str, gpu: str | None = None, size: tuple | None = None,
           kernel: str = "", root: Path | None = None) -> dict:
    """Read a profiler export and store its launches (module docstring); returns a summary
    {gpu, tool, out, launches, identified, unidentified kernel names}."""
    from gemmmodel.catalogue import resolve
    from gemmmodel.spec import load_spec

    if tool not in TOOLS:
        raise BadArgument(f"tool {tool!r}: expected one of {', '.join(TOOLS)}")
    path = Path(path)
    if not path.is_file():
        raise BadArgument(f"file not found: {path}")
    text = path.read_text(errors="replace")
    launches = read_ncu_csv(text) if tool == "ncu" else read_rocprof_csv(text)
    if not launches:
        raise BadArgument(f"{path.name}: no kernel launches found")
    if not gpu and tool == "rocprof":
        raise BadArgument("rocprof exports do not name the GPU: pass --gpu NAME")
    spec = load_spec(gpu) if gpu else load_spec(_guess_gpu(text))
    override = resolve(kernel).name if kernel else ""
    m, n, k, batch = (tuple(size) + (1,) * (4 - len(size))) if size else (None,) * 3 + (1,)
    stamp = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    rows, unknown = [], set()
    for launch in launches:
        kid = identify(launch.kernel_name, override)
        if not kid:
            unknown.add(base_name(launch.kernel_name))
        rm, rn = (m, n) if m else _shape_from_grid(kid, launch.grid) if kid else (None, None)
        rows.append({"tool": tool, "source_file": path.name, "ingested_utc": stamp,
                     "launch_id": launch.launch_id, "kernel_name": launch.kernel_name,
                     "kernel": kid, "M": rm, "N": rn, "K": k, "batch": batch,
                     "grid": launch.grid, "block": launch.block, "time_s": launch.time_s,
                     "regs": launch.regs, "lds_bytes": launch.lds_bytes,
                     "counters": json.dumps({a: [v, u] for a, (v, u) in launch.counters.items()
                                             if v is not None}, sort_keys=True)})
    out_dir = Path(root or CALIBRATION_DIR) / "ingested" / spec.name
    out_dir.mkdir(parents=True, exist_ok=True)
    out = out_dir / f"{tool}-{re.sub(r'[^A-Za-z0-9_.-]', '_', path.stem)}.csv"
    with out.open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=COLUMNS)
        writer.writeheader()
        for row in rows:
            writer.writerow({c: "" if row[c] is None else row[c] for c in COLUMNS})
    return {"gpu": spec.name, "tool": tool, "out": str(out), "launches": len(rows),
            "identified": sum(1 for r in rows if r["kernel"]),
            "timed": sum(1 for r in rows if r["time_s"] is not None),
            "with_shape": sum(1 for r in rows if r["K"] is not None and r["M"] is not None),
            "unidentified": sorted(unknown), "rows": rows}


def model_counterparts(rec: dict) -> tuple:
    """((counter, SI value, model term), …) of an ingested record's counters."""
    out = []
    for name, (value, unit) in sorted(rec.get("counters", {}).items()):
        if name in COUNTERPARTS and value is not None:
            out.append((name, _si(float(value), unit or ""), COUNTERPARTS[name]))
    return tuple(out)


def _int(text):
    value = parse_number(text)
    return None if value is None else int(value)


def load_ingested(gpu: str, root: Path | None = None) -> list[dict]:
    """Every ingested launch of a GPU (spec name): dicts with COLUMNS, numbers parsed and
    `counters` decoded. Empty when nothing was ingested."""
    folder = Path(root or CALIBRATION_DIR) / "ingested" / gpu
    out = []
    for path in sorted(folder.glob("*.csv")) if folder.is_dir() else []:
        with path.open(newline="") as fh:
            for row in csv.DictReader(fh):
                rec = dict(row)
                for key in ("M", "N", "K", "batch"):
                    rec[key] = _int(row.get(key, ""))
                for key in ("time_s", "regs", "lds_bytes"):
                    rec[key] = parse_number(row.get(key, ""))
                rec["counters"] = json.loads(row.get("counters") or "{}")
                rec["file"] = str(path)
                out.append(rec)
    return out


def ingested_times(gpu: str, root: Path | None = None) -> list[dict]:
    """Median time per (kernel, shape) over the ingested launches with a kernel, a full
    shape and a time: {kernel, shape (M, N, K, batch), time_s, launches, tool, file}."""
    groups: dict[tuple, list[dict]] = {}
    for rec in load_ingested(gpu, root):
        if not rec["kernel"] or rec["time_s"] is None or None in (rec["M"], rec["N"], rec["K"]):
            continue
        key = (rec["kernel"], (rec["M"], rec["N"], rec["K"], rec["batch"] or 1))
        groups.setdefault(key, []).append(rec)
    return [{"kernel": kid, "shape": shape,
             "time_s": statistics.median(r["time_s"] for r in recs), "launches": len(recs),
             "tool": recs[0]["tool"], "file": recs[0]["file"], "counters": recs[-1]["counters"],
             "regs": recs[-1]["regs"]}
            for (kid, shape), recs in groups.items()]
