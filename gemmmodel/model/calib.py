"""Calibration inputs of the model: measured rates that replace spec values, and the fitted
efficiency parameters.

`Calib.values` holds measured quantities in SI (keys below); a key that is absent falls back
to the spec, and every term records which it used ("calibrated" or "spec").
`Calib.fit` holds the fitted parameters (fit.py, <= 5); absent ones take DEFAULT_FIT, which
are a-priori choices (not fitted to anything):
  overlap_loss    1.0  1 = resident waves switch between pipes independently (combine.py);
                       larger = correlated waves, more of the other pipes' time exposed
  latency_scale   1.0  multiplier on the exposed latency (1 = the spec/calibrated latencies)
  lds_efficiency  1.0  achieved fraction of the LDS pass rate
  issue_efficiency 1.0 achieved fraction of the issue rate
  mem_efficiency  1.0  achieved fraction of the DRAM and L2 bandwidths
  async_wait_clk  1.0  clocks of the SM that each block tile iteration of a cp.async double
                       buffer (copy the next tile, compute, wait for the copies, barrier)
                       costs beyond its pipes and latency (combine.py); a-priori negligible
  mem_instr_clk   0.1  clocks of issue that each non-VALU instruction (LDS, global, barrier,
                       wait) costs its SIMD beyond its own slot (combine.py: stalls of the
                       instructions that wait on it); a-priori negligible
  edge_tail_scale 0.42 share of a single buffer's modelled edge-block extra (rho_model - 1,
                       edge_tail.py) that the launch's end waits for (combine.py, t_edge).
                       Not fitted by fit.py and not to the kernel timings: least squares
                       through the origin of the measured edge-block ratio - 1 on
                       rho_model - 1 over the 18 stamped single-buffer launches of device
                       runs U, AB, AD, AE and AQ (calibration/h200/tail_stamps*.json;
                       edge_tail.fit_edge_tail_scale: 0.391, rms 0.063, session 55;
                       0.404 with the thirty-first change, session 59; 0.417, rms 0.064,
                       with the thirty-fourth change, session 63). Before session 55 it
                       scaled r - 1 and was 0 (off; docs/model.md section 10)
  edge_tail_scale_db 0.63 the same for a register-staged double buffer (thirty-fourth
                       change, session 63): the same least squares over the 11 stamped
                       register-staged launches of those runs (fit_edge_tail_scale(double=
                       True): 0.628, rms 0.088)
  copy_exposure   0.42 how fast the share of a cp.async build's copies that its issue waits
                       for falls as they take more of its LDS pipe: t_copies = c (1 - c) **
                       copy_exposure * lds (combine.py; 0 = all of them, the thirty-first
                       change). Not fitted by fit.py and not to the kernel timings: it
                       minimises the rms log error of the model's t_pipes in clocks against
                       ncu's active cycles per SM of the 25 launches of device runs AV and AW
                       (copy_exposure.fit_copy_exposure; session 60: 0.467, rms 0.069 against
                       0.117 at 0; session 63, with the thirty-fourth change: 0.411, rms
                       0.066; each at the fixed point with the five fitted parameters)
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from pathlib import Path

from gemmmodel import CALIBRATION_DIR
from gemmmodel.errors import BadArgument, GemmModelError
from gemmmodel.model.fetch import load_icache, load_icache_phase
from gemmmodel.model.inner import load_inner_loop
from gemmmodel.model.lines import load_line_costs
from gemmmodel.model.pitch import load_pitch_table

DEFAULT_FIT = {
    "overlap_loss": 1.0,
    "latency_scale": 1.0,
    "lds_efficiency": 1.0,
    "issue_efficiency": 1.0,
    "mem_efficiency": 1.0,
    "async_wait_clk": 1.0,
    "mem_instr_clk": 0.1,
    "edge_tail_scale": 0.42,
    "edge_tail_scale_db": 0.63,
    "copy_exposure": 0.42,
}
#: The parameters `fit.py` fits by default. latency_scale stays at its a-priori 1: the
#: latencies are measured (pointer chase, calibration/<gpu>/summary.json), so scaling them is
#: not an efficiency. Fitted freely on calibration/h200 (816 samples) it went to 0, i.e. the
#: least-squares fit switched the latency term off to absorb other misfits, and selection on
#: the issue-8 sweep got worse (docs/model.md section 10). mem_efficiency stays at 1 for the
#: same reason: the L2 and DRAM rates are measured (stream and L2 sweeps); fitted freely it
#: sat at its bound 1.0 until the bounds-checked builds' facts entered (eighth change), then
#: went to 0.30, making every L2 transfer 3.3x slower than measured to absorb the
#: under-prediction of the one bounds-checked training shape (3000x1000x1024).
#: async_wait_clk (ninth change, docs/model.md section 10): the template's cp.async loops at
#: BK = 8 ran up to 1.8x their register-staged twins while the copies' micro-benchmarked
#: per-instruction time scaled with BK; the cost is per tile iteration.
#: mem_instr_clk (eleventh change, docs/model.md section 10): with one issue efficiency for
#: every instruction, FMA-dense tiles (8x8, wide BN) came out too slow and LDS/global-heavy
#: ones too fast, on the training set and on every sweep.
FITTED_BY_DEFAULT = ("overlap_loss", "lds_efficiency", "issue_efficiency", "async_wait_clk",
                     "mem_instr_clk")
FIT_BOUNDS = {
    "overlap_loss": (0.25, 4.0),
    "latency_scale": (0.0, 4.0),
    "lds_efficiency": (0.2, 1.0),
    "issue_efficiency": (0.2, 1.0),
    "mem_efficiency": (0.2, 1.0),
    "async_wait_clk": (0.1, 2000.0),
    "mem_instr_clk": (0.01, 20.0),
    "edge_tail_scale": (0.0, 4.0),
    "edge_tail_scale_db": (0.0, 4.0),
    "copy_exposure": (0.0, 4.0),
}

#: Measured quantities the model reads (SI) -> the spec attribute each replaces.
VALUE_KEYS = {
    "dram_bandwidth_Bps": "dram_bandwidth_Bps",
    "l2_bandwidth_Bps": "l2_bandwidth_Bps",
    "lds_bytes_per_clk_per_cu": "lds_bytes_per_clk_per_cu",
    "fp32_flops": "fp32_peak_flops",
    "launch_overhead_s": "launch_overhead_s",
    "spawn_blocks_per_s": None,
    "dram_latency_s": "dram_latency_s",
    "l2_latency_s": "l2_latency_s",
    "l1_latency_s": None,           # measured only (micro chase at 16 KiB): no spec value
    "lds_latency_s": "lds_latency_s",
    "clock_hz": "clock_hz",
    "async_copy_b32_s": "async_copy_b32_s",
    "async_copy_b128_s": "async_copy_b128_s",
}


@dataclass(frozen=True)
class Calib:
    """Measured values (SI) and fitted parameters for one GPU; empty = spec values only."""

    gpu: str = ""
    values: dict = field(default_factory=dict)
    fit: dict = field(default_factory=dict)
    training: tuple = ()
    source: str = ""
    #: ((warps per scheduler, LDS latency clk), ...) under load: smem_latency_loaded.json
    lds_latency_loaded: tuple = ()
    #: ((TM, TN, BK, w, eta), ...): the template's inner loop alone (inner.py, run N)
    inner_loop: tuple = ()
    #: ((code KiB, w, eta_fetch), ...): a straight-line loop's issue rate (fetch.py, run AC)
    icache: tuple = ()
    #: ((w, loop KiB, trips, code KiB, in step, eta), ...): a loop inside larger code
    #: (fetch.py, run BL)
    icache_phase: tuple = ()
    #: ((bytes in flight per SM, L2 latency clk), ...) under load: global_latency_loaded.json
    global_latency_loaded: tuple = ()
    #: ((kind, bytes, lines, clk), ...): a global access's L1 cost by lines (lines.py, H6/AR)
    l1_lines: tuple = ()
    #: ((BK, padded, c), ...): a cp.async build's slowdown where K is not a power of two
    #: (pitch.py, run AU)
    pitch: tuple = ()
    #: seconds a tile round of cold data waits beyond a warm one, one block per SM
    #: (cold_touch.json, run BF; 0 where not measured): cold.py
    cold_round_extra_s: float = 0.0

    def theta(self) -> dict:
        """The efficiency parameters: fitted where given, DEFAULT_FIT otherwise."""
        out = dict(DEFAULT_FIT)
        out.update({k: float(v) for k, v in self.fit.items() if k in DEFAULT_FIT})
        return out

    def with_fit(self, fit: dict, training=()) -> Calib:
        """The same measurements and tables with other fitted parameters."""
        return replace(self, values=dict(self.values), fit=dict(fit), training=tuple(training))


#: The LDS latency under load (tools/device/smem_latency_loaded.py): a 128-bit pointer chase
#: while other warps run a tile loop, per warps per scheduler.
LDS_LOADED_FILE = "smem_latency_loaded.json"
#: What a tile round of cold data costs a block alone on its SM (tools/device/cold_touch.py,
#: run BF): each block loads tiles in series, stores them to shared memory and waits at a
#: barrier, on fresh data and on data kept in the L2.
COLD_TOUCH_FILE = "cold_touch.json"


def load_cold_round(folder: Path) -> float:
    """Seconds a later tile round of fresh data waits beyond the same round warm in the L2,
    at one block per SM, tiles unshared, the 4 KiB pitch (an A tile marching along K), from
    the run with the most rounds in COLD_TOUCH_FILE (its clocks at the file's SM clock);
    0.0 without the file or those rows."""
    path = Path(folder) / COLD_TOUCH_FILE
    if not path.is_file():
        return 0.0
    data = json.loads(path.read_text())
    clock = float(data.get("clocks", {}).get("sm_clock_hz") or 0.0)
    rows = [r for r in data.get("results", ())
            if r.get("pitch_bytes") == 4096 and r.get("blocks_per_sm") == 1
            and r.get("share") == 1 and r.get("later_round_clk") is not None]
    by_mode = {}
    for r in rows:
        if r["mode"] in ("fresh", "warm") and r["rounds"] >= by_mode.get(r["mode"], {}).get(
                "rounds", 0):
            by_mode[r["mode"]] = r
    if clock <= 0 or set(by_mode) != {"fresh", "warm"} or by_mode["fresh"]["rounds"] != \
            by_mode["warm"]["rounds"]:
        return 0.0
    return max(0.0, float(by_mode["fresh"]["later_round_clk"])
               - float(by_mode["warm"]["later_round_clk"])) / clock


#: The L2 latency under load (tools/device/global_latency_loaded.py, run X): a pointer chase
#: beside B warps per SM that keep ILP 128-bit loads each in flight.
GLOBAL_LOADED_FILE = "global_latency_loaded.json"


def _latency_rows(path: Path, load_of) -> tuple:
    """((load_of(row), cycles_per_step_median), ...) of a loaded-latency table's measured
    rows (those with a median), sorted; () without the file."""
    if not path.is_file():
        return ()
    rows = json.loads(path.read_text()).get("rows", [])
    return tuple(sorted((float(load_of(r)), float(r["cycles_per_step_median"]))
                        for r in rows if r.get("cycles_per_step_median")))


def load_lds_loaded(folder: Path) -> tuple:
    """((warps per scheduler, LDS chase clk), ...) from LDS_LOADED_FILE; () without it."""
    return _latency_rows(folder / LDS_LOADED_FILE, lambda r: r["warps_per_scheduler"])


def load_global_loaded(folder: Path, wave_size: int = 32) -> tuple:
    """((bytes in flight per SM, chase clk), ...) from GLOBAL_LOADED_FILE, sorted by bytes:
    a row's bytes are background_warps * ilp * 16 B * wave_size (its warps' 128-bit loads in
    flight); () without the file."""
    return _latency_rows(folder / GLOBAL_LOADED_FILE,
                         lambda r: float(r["background_warps"]) * float(r["ilp"]) * 16.0
                         * wave_size)


def value(spec, calib: Calib | None, key: str) -> tuple[float, str]:
    """(value, origin) of a rate or latency: the calibrated value where measured, else the
    spec's (`origin` is "calibrated" or "spec")."""
    if calib is not None and calib.values.get(key) is not None:
        return float(calib.values[key]), "calibrated"
    attr = VALUE_KEYS.get(key, key)
    if attr is None:
        return 0.0, "spec"
    return float(getattr(spec, attr, 0.0) or 0.0), "spec"


def fit_path(gpu: str, root: Path | None = None) -> Path:
    return Path(root or CALIBRATION_DIR) / gpu / "fit.json"


def calibration_name(gpu: str, root: Path | None = None) -> str:
    """The folder name under calibration/ that holds `gpu`'s data: `gpu` itself, else its
    spec name or one of its aliases ("h100" -> "sm_90" or the other way round); `gpu`
    when none exists."""
    base = Path(root or CALIBRATION_DIR)
    if (base / gpu).is_dir():
        return gpu
    try:
        from gemmmodel.spec import load_spec

        spec = load_spec(gpu)
    except GemmModelError:  # an unknown name simply has no folder
        return gpu
    for name in (spec.name, *getattr(spec, "aliases", ())):
        if (base / name).is_dir():
            return name
    return gpu


def load_calib(gpu: str, root: Path | None = None) -> Calib:
    """Read calibration/<gpu>/summary.json (measured values, when present) and fit.json
    (fitted parameters, when present); the folder may be named by the spec name or an
    alias. A missing folder gives an empty Calib."""
    gpu = calibration_name(gpu, root)
    folder = Path(root or CALIBRATION_DIR) / gpu
    values: dict = {}
    summary = folder / "summary.json"
    if summary.is_file():
        values = summary_values(json.loads(summary.read_text()))
    fit, training = {}, ()
    fpath = folder / "fit.json"
    if fpath.is_file():
        data = json.loads(fpath.read_text())
        fit = dict(data.get("params", {}))
        training = tuple(data.get("training_set", ()))
    return Calib(gpu=gpu, values=values, fit=fit, training=training, source=str(folder),
                 lds_latency_loaded=load_lds_loaded(folder), inner_loop=load_inner_loop(folder),
                 icache=load_icache(folder), icache_phase=load_icache_phase(folder),
                 global_latency_loaded=load_global_loaded(folder),
                 l1_lines=load_line_costs(folder), pitch=load_pitch_table(folder),
                 cold_round_extra_s=load_cold_round(folder))


#: Measured values of one board rather than of its chip: its DRAM and its clocks. A
#: transfer to a sibling GPU of the same architecture (transfer_calib) leaves these to the
#: target's spec and carries the rest: the SM's rates and latencies, the L2's, the
#: loaded-latency, inner-loop and instruction-fetch tables, and the fitted efficiencies.
BOARD_KEYS = ("dram_bandwidth_Bps", "dram_latency_s", "clock_hz", "fp32_flops")


def sibling_spec(name: str, target_spec, option: str):
    """The spec of GPU `name`, which must share `target_spec`'s architecture for a
    calibration or measurement of it to stand in for the target's (`option` names the flag
    in the error); BadArgument otherwise."""
    from gemmmodel.spec import load_spec

    spec = load_spec(name)
    if str(spec.arch) != str(target_spec.arch):
        raise BadArgument(f"{option} {name}: its architecture {spec.arch} is not "
                          f"{target_spec.arch}; only GPUs of one architecture stand in for "
                          "each other")
    return spec


def transfer_calib(source: str, target_spec, root: Path | None = None) -> Calib:
    """The calibration of GPU `source` carried over to `target_spec`, a GPU with no
    calibration of its own but the same architecture (e.g. the H200's to the H100 SXM: the
    same sm_90 die with other HBM and L2 size): every measured value except BOARD_KEYS, the
    measured tables and the fitted parameters with their training set. BadArgument where the
    architectures differ or `source` has nothing measured. An assumption, named in `source`:
    what the two boards share was not measured on the target."""
    src = load_calib(sibling_spec(source, target_spec, "--calib-from").name, root)
    if not src.values and not src.fit:
        raise BadArgument(f"--calib-from {source}: no calibration under "
                          f"{Path(root or CALIBRATION_DIR) / src.gpu}")
    values = {k: v for k, v in src.values.items() if k not in BOARD_KEYS}
    # the cold tile round waits on the board's DRAM: not carried over (cold.py is off there)
    return replace(src, gpu=str(target_spec.name), values=values, fit=dict(src.fit),
                   cold_round_extra_s=0.0,
                   source=(f"{src.source} transferred to {target_spec.name} (all but "
                           f"{', '.join(BOARD_KEYS)}, which stay the spec's)"))


def _num(entry):
    """A summary entry may be a number or {"value": …}/{"measured": …}."""
    if isinstance(entry, dict):
        for key in ("measured", "value"):
            if key in entry and entry[key] is not None:
                return float(entry[key])
        return None
    if isinstance(entry, (int, float)):
        return float(entry)
    return None


#: summary.json headline key (gemmmodel/calibrate/summary.py) -> Calib.values key.
SUMMARY_KEYS = {
    "dram_read_Bps": "dram_bandwidth_Bps",
    "l2_read_Bps": "l2_bandwidth_Bps",
    "lds_bytes_per_clk_per_sm": "lds_bytes_per_clk_per_cu",
    "fma_peak_flop_per_s": "fp32_flops",
    "clock_hz": "clock_hz",
    "launch_overhead_s": "launch_overhead_s",
    "spawn_blocks_per_s": "spawn_blocks_per_s",
    "latency_dram_s": "dram_latency_s",
    "latency_l2_s": "l2_latency_s",
    "latency_l1_s": "l1_latency_s",
    "latency_lds_s": "lds_latency_s",
    "cp_async_b32_s": "async_copy_b32_s",
    "cp_async_b128_s": "async_copy_b128_s",
}


def summary_values(summary: dict) -> dict:
    """Calib.values from a calibration summary.json: its "headline" entries are
    {"measured": value, "unit": …, "spec": …}; a flat {key: number} dict also works."""
    flat = dict(summary.get("headline", summary))
    out = {}
    for key, target in SUMMARY_KEYS.items():
        if key in flat:
            num = _num(flat[key])
            if num is not None and num > 0:
                out[target] = num
    return out
