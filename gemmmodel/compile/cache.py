"""Disk cache of compile facts: one JSON file per key under ~/.cache/gemmmodel/compile/
(or $GEMMMODEL_CACHE/compile/ when that variable is set).

The key is the sha256 of the source text with every header it includes through
`#include "…"` (resolved like the compiler does: the including file's folder, then the -I
folders), the flags, the toolchain's version strings, and the text of the parser modules
(so a parser fix invalidates old entries). Writes are atomic (temporary file + rename).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
from pathlib import Path

_INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.MULTILINE)
_PARSER_MODULES = ("classify.py", "isa_amd.py", "sass.py", "ptx.py", "loops.py", "listing.py",
                   "facts.py", "driver.py", "trips.py", "lookahead.py")


def cache_dir() -> Path:
    root = os.environ.get("GEMMMODEL_CACHE")
    base = Path(root) if root else Path.home() / ".cache" / "gemmmodel"
    return base / "compile"


def source_closure(source: Path, include_dirs: list[Path]) -> list[tuple[str, str]]:
    """(path, text) of the source and every quoted include it reaches, in visit order."""
    seen: dict[Path, str] = {}
    stack = [source.resolve()]
    while stack:
        path = stack.pop()
        if path in seen:
            continue
        text = path.read_text(errors="replace")
        seen[path] = text
        for name in _INCLUDE.findall(text):
            for folder in [path.parent, *include_dirs]:
                candidate = (folder / name).resolve()
                if candidate.is_file():
                    stack.append(candidate)
                    break
    return [(p.name, t) for p, t in seen.items()]


def _parser_text() -> str:
    here = Path(__file__).resolve().parent
    return "".join((here / m).read_text() for m in _PARSER_MODULES if (here / m).exists())


def cache_key(closure: list[tuple[str, str]], flags: list[str], versions: str) -> str:
    payload = json.dumps({"sources": closure, "flags": flags, "versions": versions,
                          "parsers": hashlib.sha256(_parser_text().encode()).hexdigest()})
    return hashlib.sha256(payload.encode()).hexdigest()


def cache_get(key: str) -> list[dict] | None:
    """The cached list of KernelFacts dicts, or None (missing or unreadable entry)."""
    path = cache_dir() / f"{key}.json"
    try:
        return json.loads(path.read_text())["facts"]
    except (OSError, ValueError, KeyError):
        return None


def cache_put(key: str, facts: list[dict]) -> Path:
    """Write atomically; returns the file path."""
    folder = cache_dir()
    folder.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".tmp-", suffix=".json")
    try:
        with os.fdopen(fd, "w") as fh:
            json.dump({"facts": facts}, fh)
        os.replace(tmp, folder / f"{key}.json")
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return folder / f"{key}.json"
