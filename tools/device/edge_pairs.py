"""Summary of a plain / forced EDGE=1 sweep pair (device runs P and AY):

    python3 tools/device/edge_pairs.py PLAIN.csv EDGE.csv

prints the sweep errors, the number of pairs and the median EDGE=1 / EDGE=0 time ratio by
shape, buffering and thread tile."""

from __future__ import annotations

import sys

import pandas as pd


def summary(plain_csv: str, edge_csv: str) -> tuple[int, int, int, pd.DataFrame]:
    """(errors in the plain sweep, errors in the EDGE=1 sweep, pairs, median EDGE=1 /
    EDGE=0 ratio by shape and buffering (rows) and thread tile (columns))."""
    plain, edge = pd.read_csv(plain_csv), pd.read_csv(edge_csv)
    j = plain.merge(edge, on=["shape", "config"], suffixes=("_plain", "_edge"))
    j["ratio"] = j.median_s_edge / j.median_s_plain
    j["db"] = j.config.str.contains("/db")
    j["tile"] = j.config.str.split("/").str[1]
    table = j.groupby(["shape", "db", "tile"]).ratio.median().round(3).unstack()
    return int(plain.error.notna().sum()), int(edge.error.notna().sum()), len(j), table


def main(argv: list[str]) -> int:
    e_plain, e_edge, pairs, table = summary(argv[0], argv[1])
    print(f"errors: {e_plain} {e_edge} pairs: {pairs}")
    print(table)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
