"""Selection rankings recorded with another GPU's calibration carried over
(`predict --calib-from G`, tools/record_predictions.py --calib-from G): each is a
pre-registered ranking like the model's own, scored against the same sweep
(gemmmodel.model.selection.selection_comparison lists them beside it)."""

from __future__ import annotations

from pathlib import Path

#: Rankings recorded with another GPU's calibration carried over (tools/record_predictions.py
#: --calib-from G): selection_predictions_from_<G>[_<round>].csv beside the model's own.
TRANSFER_RECORD_PREFIX = "selection_predictions_from_"


def transfer_records(folder: Path) -> list[str]:
    """The first round's rankings recorded with another GPU's calibration carried over
    (TRANSFER_RECORD_PREFIX<G>.csv), sorted by name."""
    from gemmmodel.model.selection import HELDOUT_ROUNDS

    return sorted(p.name for p in Path(folder).glob(f"{TRANSFER_RECORD_PREFIX}*.csv")
                  if not any(p.name.endswith(f"_{r}.csv") for r in HELDOUT_ROUNDS))


def transfer_parts(folder: Path, measured: dict, round_: str = "") -> dict:
    """{part key: scored part} for each ranking of `round_` ("" = the first) recorded with
    another GPU's calibration carried over (TRANSFER_RECORD_PREFIX<G>[_<round>].csv)."""
    from gemmmodel.model.selection import preregistered, recorded_times, score, summary, time_error

    folder = Path(folder)
    names = (transfer_records(folder) if not round_ else
             sorted(p.name for p in folder.glob(f"{TRANSFER_RECORD_PREFIX}*_{round_}.csv")))
    tail = f"_{round_}.csv" if round_ else ".csv"
    where = f"held-out round {round_}" if round_ else "the first round"
    out = {}
    for name in names:
        source = name[len(TRANSFER_RECORD_PREFIX):-len(tail)]
        ranks, _ = preregistered(folder, "", name)
        rows = score(measured, ranks)
        out[f"{round_ or 'preregistered'}_from_{source}"] = {
            "label": f"pre-registered, {where}: ranked with {source}'s calibration carried "
                     f"over (predict --calib-from {source}), before its sweep",
            "file": name, "shapes": rows, **summary(rows),
            "time_error": time_error(measured, recorded_times(folder, "", name))}
    return out


__all__ = ["TRANSFER_RECORD_PREFIX", "transfer_parts", "transfer_records"]
