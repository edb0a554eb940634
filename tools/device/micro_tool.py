"""What the stand-alone microbenchmark tools of tools/device/ share: open the NVIDIA runtime
and compile one kernels/micro source, and write the result JSON with its provenance (GPU,
SM count, clocks, commit: GEMMMODEL_COMMIT or the checkout's HEAD, date, tool)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))


def open_runtime():
    """(runtime, device_info, out_dir) of the NVIDIA GPU; out_dir is argv[1] (default .)."""
    from gemmmodel.runtime import get_runtime

    rt = get_runtime("nvidia")
    return rt, rt.device_info(), Path(sys.argv[1] if len(sys.argv) > 1 else ".")


def open_micro(source: str, entries: list[str]):
    """(runtime, device_info, module, out_dir) for kernels/micro/<source>; out_dir is argv[1]."""
    from gemmmodel import KERNELS_DIR

    rt, info, out_dir = open_runtime()
    module = rt.compile_file(Path(KERNELS_DIR) / "micro" / source, entries)
    return rt, info, module, out_dir


def write_doc(out_dir: Path, name: str, rt, info: dict, tool: str, indent=None,
              **fields) -> Path:
    """Write out_dir/name: provenance first, then `fields`."""
    commit = os.environ.get("GEMMMODEL_COMMIT") or subprocess.run(
        ["git", "rev-parse", "HEAD"], capture_output=True, text=True, cwd=REPO).stdout.strip()
    doc = {"gpu": info.get("name"), "sms": int(info["sms"]), "clocks": rt.clocks(),
           "commit": commit, "date_utc": datetime.now(timezone.utc).isoformat(timespec="seconds"),
           "source": tool, **fields}
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / name
    path.write_text(json.dumps(doc, indent=indent) + "\n")
    return path
