"""The command line: a thin dispatcher. Each subcommand lives in gemmmodel/commands/<name>.py
and defines add_parser(subparsers) and run(args) -> int."""

from __future__ import annotations

import argparse
import importlib
import sys

from gemmmodel import __version__
from gemmmodel.errors import GemmModelError

COMMANDS = [
    "gpus",
    "occupancy",
    "kernels",
    "compile",
    "facts",
    "run",
    "calibrate",
    "validate",
    "explain",
    "predict",
    "answers",
    "report",
    "ingest",
    "selection",
]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="gemmmodel",
        description="Explain and predict the performance of GPU SGEMM kernels.",
    )
    parser.add_argument("--version", action="version", version=f"gemmmodel {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS:
        importlib.import_module(f"gemmmodel.commands.{name}").add_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "command", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except GemmModelError as err:
        print(f"gemmmodel {args.command}: error: {err}", file=sys.stderr)
        return err.exit_code
    except KeyboardInterrupt:
        print("gemmmodel: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
