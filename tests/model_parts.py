"""Test helper (not a test module): Components with neutral defaults for the hand-worked
combination tests; each test names the fields its arithmetic uses."""

from gemmmodel.model.combine import MODES, Components

NEUTRAL = {"issue_s": 0.0, "lds_s": 0.0, "l2_s": 0.0, "dram_s": 0.0, "spawn_s": 0.0,
           "w": 1.0, "lookahead": 0.0, "units": 1.0, "n_unit_iters": 1.0,
           "alone_factor": 1.0, "lat_g_s": 0.0, "lat_lds_s": 0.0, "lat_spill_s": 0.0,
           "ilp": 1.0, "mode_code": MODES["single"], "fill_blocks": 0.0, "ramp_s": 0.0,
           "launch_s": 0.0}


def components(**fields) -> Components:
    """Components of NEUTRAL with `fields` replaced."""
    return Components(**{**NEUTRAL, **fields})
