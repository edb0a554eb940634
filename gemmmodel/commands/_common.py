"""Small helpers shared by the subcommand modules (output only; no model logic here)."""

from __future__ import annotations

import json
import sys
from typing import Any, Callable


def add_json_flag(parser) -> None:
    parser.add_argument("--json", action="store_true", help="print JSON on stdout")


def _default(obj: Any):
    if hasattr(obj, "to_dict"):
        return obj.to_dict()
    if hasattr(obj, "item"):  # numpy scalars
        return obj.item()
    if isinstance(obj, (set, frozenset, tuple)):
        return list(obj)
    return str(obj)


def dumps(obj: Any) -> str:
    return json.dumps(obj, indent=2, default=_default, allow_nan=False)


def emit(args, payload: Any, render_text: Callable[[Any], str]) -> int:
    """Print `payload` as JSON when --json was given, else `render_text(payload)`."""
    if getattr(args, "json", False):
        sys.stdout.write(dumps(payload) + "\n")
    else:
        sys.stdout.write(render_text(payload).rstrip("\n") + "\n")
    return 0


def progress(message: str) -> None:
    """Progress goes to stderr so that --json output on stdout stays clean."""
    sys.stderr.write(message + "\n")
    sys.stderr.flush()
