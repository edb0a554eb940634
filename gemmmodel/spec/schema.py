"""What a GPU spec file must contain: one Field per GpuSpec quantity (docs/design.md table).

A Field names the attribute (also its TOML key), the dimension its unit must measure, the
Python kind of its SI value, the vendors that must give it, and its allowed range. This is
data about the file format, not about any GPU: no hardware number lives here.
"""

from __future__ import annotations

from dataclasses import dataclass

BOTH = ("amd", "nvidia")
AMD = ("amd",)
NVIDIA = ("nvidia",)

# Kinds of SI value: "int" and "float" numbers, "text" (one of `choices`), "int_list"
# (list of positive ints), "sgpr_table" (list of [max_sgprs, waves]), "lane_groups"
# ({width: list of lane groups}).


@dataclass(frozen=True)
class Field:
    name: str
    dimension: str
    kind: str
    vendors: tuple[str, ...] = BOTH
    positive: bool = True          # > 0 when True, >= 0 when False
    choices: tuple[str, ...] = ()
    doc: str = ""
    required: bool = True          # False: the vendors above may give it, none must


FIELDS: tuple[Field, ...] = (
    Field("wave_size", "count", "int", doc="lanes per wave (AMD 64) / warp (NVIDIA 32)"),
    Field("compute_units", "count", "int", doc="CUs (AMD) or SMs (NVIDIA)"),
    Field("simds_per_cu", "count", "int",
          doc="SIMD16s per CU (AMD) / SM sub-partitions, each with its own register file (NVIDIA)"),
    Field("clock_hz", "frequency", "float", doc="the clock this spec describes"),
    Field("fp32_flop_per_clk_per_cu", "flop_per_clk", "float", doc="vector FP32 FMA rate, FMA = 2 FLOP"),
    Field("packed_fp32_flop_per_clk_per_cu", "flop_per_clk", "float", positive=False,
          doc="packed FP32 (v_pk_fma_f32) rate; 0 where none"),
    Field("matrix_fp32_flop_per_clk_per_cu", "flop_per_clk", "float", positive=False,
          doc="matrix-core FP32 (MFMA) rate; 0 where none"),
    Field("dram_bandwidth_Bps", "bandwidth", "float", doc="peak DRAM (HBM/GDDR) bandwidth"),
    Field("l2_bytes", "bytes", "int", doc="L2 capacity"),
    Field("l1_bytes", "bytes", "int", doc="L1 (vector L1 / unified L1+shared) capacity per CU"),
    Field("l2_bandwidth_Bps", "bandwidth", "float", doc="L2 bandwidth, whole chip"),
    Field("regs_per_lane_file", "count", "int",
          doc="AMD: VGPRs per lane per SIMD; NVIDIA: 32-bit registers per SM"),
    Field("reg_granule", "count", "int",
          doc="AMD: VGPR allocation granule (per lane); NVIDIA: registers per warp granule"),
    Field("max_regs_per_thread", "count", "int", doc="most vector registers one thread may use"),
    Field("agpr_mode", "text", "text", AMD, choices=("none", "separate", "unified"),
          doc="none; separate AGPR file (occupancy from max(V, A)); unified (alignTo(V, align) + A)"),
    Field("agpr_alignment", "count", "int", AMD,
          doc="alignment of the VGPR count before the AGPRs in a unified file"),
    Field("sgprs_per_simd", "count", "int", AMD, doc="scalar registers per SIMD"),
    Field("sgpr_granule", "count", "int", AMD, doc="scalar register allocation granule"),
    Field("sgpr_wave_limits", "table", "sgpr_table", AMD,
          doc="[max_sgprs, waves/SIMD] rows: first row with sgprs <= max_sgprs applies"),
    Field("max_waves_per_simd", "count", "int", AMD, doc="wave slots per SIMD"),
    Field("max_waves_per_cu", "count", "int", doc="wave slots per CU (AMD) / warps per SM (NVIDIA)"),
    Field("max_blocks_per_cu", "count", "int",
          doc="AMD: multi-wave workgroups per CU (barrier limit); NVIDIA: blocks per SM"),
    Field("max_threads_per_block", "count", "int", doc="most threads in one workgroup / block"),
    Field("lds_bytes_per_cu", "bytes", "int", doc="LDS / shared memory per CU or SM"),
    Field("lds_bytes_per_block", "bytes", "int", doc="most LDS / shared memory one block may use"),
    Field("lds_granule_bytes", "bytes", "int", doc="LDS / shared memory allocation granule"),
    Field("lds_reserved_per_block_bytes", "bytes", "int", positive=False,
          doc="shared memory the driver reserves per block"),
    Field("lds_banks", "count", "int", doc="LDS / shared memory banks"),
    Field("lds_bank_bytes", "bytes", "int", doc="width of one bank"),
    Field("lds_bytes_per_clk_per_cu", "bytes_per_clk", "float", doc="LDS bandwidth per CU"),
    Field("lds_phases", "lane_groups", "lane_groups",
          doc="per access width, the lane groups served together; conflicts count inside a group"),
    Field("lds_merge_windows", "lane_groups", "lane_groups", NVIDIA, required=False,
          doc="per access width, lane windows whose groups share one pass when the window is "
              "conflict-free and its runs of equal addresses fit in one pass (model/lds.py)"),
    Field("spawn_threads_per_clk", "threads_per_clk", "float", AMD,
          doc="workgroup dispatch rate in threads per clock"),
    Field("spawn_blocks_per_clk", "blocks_per_clk", "float", NVIDIA,
          doc="block dispatch rate in blocks per clock"),
    Field("spawn_full_rate_block_sizes", "count", "int_list",
          doc="block sizes (threads) that reach the full spawn rate"),
    Field("launch_overhead_s", "time", "float", positive=False, doc="fixed cost of one launch"),
    Field("dram_latency_s", "time", "float", doc="DRAM load latency"),
    Field("l2_latency_s", "time", "float", doc="L2 hit latency"),
    Field("lds_latency_s", "time", "float", doc="LDS / shared memory load latency"),
    Field("wave_lookahead_steps", "count", "float", positive=False, required=False,
          doc="k steps of LDS fragment reads one wave keeps in flight under its own FMAs, "
              "so that its issue and LDS work overlap (model/latency.py lookahead); absent "
              "or 0 where not measured: one wave's pipes serialise"),
    Field("async_copy_b32_s", "time", "float", NVIDIA, required=False,
          doc="asynchronous global->LDS copy (cp.async) of 4 B per lane: SM data-pipe time "
              "per warp instruction; absent where the GPU has no such copy"),
    Field("async_copy_b128_s", "time", "float", NVIDIA, required=False,
          doc="the same for 16 B per lane"),
)

FIELDS_BY_NAME: dict[str, Field] = {f.name: f for f in FIELDS}

# Plain (non-quantity) keys of a spec file; only vendor, arch and compile_target are inherited.
IDENTITY_KEYS = ("vendor", "arch", "compile_target", "inherits", "title", "aliases")
INHERITED_IDENTITY = ("vendor", "arch", "compile_target")
VENDORS = BOTH
QUANTITY_KEYS = ("value", "unit", "source", "note", "assumption")
