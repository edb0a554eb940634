"""Summary of a plain / forced EDGE=1 sweep pair (device runs P and AY):

    python3 tools/device/edge_pairs.py PLAIN.csv EDGE.csv

prints the sweep errors, the number of pairs and the median EDGE=1 / EDGE=0 time ratio by
shape, buffering and thread tile."""

from __future__ import annotations

import sys

import pandas as pd


def main(argv: list[str]) -> int:
    plain, edge = (pd.read_csv(p) for p in argv[:2])
    j = plain.merge(edge, on=["shape", "config"], suffixes=("_plain", "_edge"))
    j["ratio"] = j.median_s_edge / j.median_s_plain
    j["db"] = j.config.str.contains("/db")
    j["tile"] = j.config.str.split("/").str[1]
    print("errors:", int(plain.error.notna().sum()), int(edge.error.notna().sum()),
          "pairs:", len(j))
    print(j.groupby(["shape", "db", "tile"]).ratio.median().round(3).unstack())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
