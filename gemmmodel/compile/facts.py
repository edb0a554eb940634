"""KernelFacts: what the compiler tells about one kernel for one target.

Counts in the instruction mixes are static instruction counts (not executed counts): the
whole kernel's reachable code in `mix_total`, one trip of the main loop body in `mix_loop`
(loops.py says how the main loop is chosen), and one trip of the loop around the main loop
in `mix_outer` (the main loop's body counted once; all zero when the main loop is
outermost). Kernels whose k-step loop holds an inner FMA loop (main_loop_depth 2) keep their
per-k-step barriers and global loads in `mix_outer`. `load_round_trips` is the number of
global-load latencies one trip of the main loop waits in series (trips.py; None for PTX
listings, which have no final register allocation). `fragment_lookahead` is the mean number
of FMAs the main loop's trip issues between each LDS read and the first FMA that uses its
fragment (lookahead.py; None for PTX or a loop without LDS reads feeding FMAs). Register counts
are per lane (AMD VGPR/SGPR/AGPR) or per thread (NVIDIA), sizes are bytes.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields

#: Width buckets of memory instructions, in bits of data per lane moved by one instruction
#: (ds_read2_b32 moves 2 x 32 = 64 bits, so it counts as b64).
WIDTHS = ("b32", "b64", "b96", "b128")

#: Keys of an instruction mix. Every instruction lands in exactly one category except
#: `fma_packed` (the v_pk_fma_f32 subset of `fma`) and `instructions` (the total).
MIX_KEYS = (
    ("fma", "fma_packed", "mfma")
    + tuple(f"lds_read_{w}" for w in WIDTHS)
    + tuple(f"lds_write_{w}" for w in WIDTHS)
    + tuple(f"global_load_{w}" for w in WIDTHS)
    + tuple(f"global_store_{w}" for w in WIDTHS)
    + ("barrier", "waitcnt", "cp_async", "local_load", "local_store", "other", "instructions")
)
#: Mix keys that partition the instructions (their sum equals `instructions`).
CATEGORY_KEYS = tuple(k for k in MIX_KEYS if k not in ("fma_packed", "instructions"))


#: KernelFacts mix attributes and their column prefixes in the flat (CSV) form.
_MIXES = {"mix_total": "total", "mix_loop": "loop", "mix_outer": "outer"}


def empty_mix() -> dict[str, int]:
    """A mix with every key at zero."""
    return {key: 0 for key in MIX_KEYS}


@dataclass(frozen=True)
class KernelFacts:
    """Compile facts of one kernel on one target.

    Fields that do not apply to the vendor are None (e.g. `vgprs` on NVIDIA, `regs` on AMD).
    `spills` is 0 when the compiler spilled nothing; otherwise AMD: spilled VGPRs + SGPRs
    (registers), NVIDIA: spill stores + loads (bytes). The detailed fields carry the units.
    `mix_source` says what the mix was counted on: "amdgcn" (hipcc -S), "sass" (nvdisasm)
    or "ptx" (no disassembler for the target; PTX is the virtual ISA before ptxas).
    """

    kernel: str
    target: str
    vendor: str
    vgprs: int | None = None
    sgprs: int | None = None
    agprs: int | None = None
    regs: int | None = None
    lds_bytes: int = 0
    scratch_bytes: int = 0
    spills: int = 0
    vgpr_spills: int | None = None
    sgpr_spills: int | None = None
    spill_store_bytes: int | None = None
    spill_load_bytes: int | None = None
    occupancy_waves_per_simd: int | None = None
    main_loop_depth: int = 0
    load_round_trips: float | None = None
    fragment_lookahead: float | None = None
    mix_source: str = ""
    mix_total: dict = field(default_factory=empty_mix)
    mix_loop: dict = field(default_factory=empty_mix)
    mix_outer: dict = field(default_factory=empty_mix)
    compiler: str = ""
    flags: str = ""

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> KernelFacts:
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in names})

    def flat(self) -> dict:
        """One flat row for a CSV: mixes become columns `total_<key>`, `loop_<key>` and
        `outer_<key>`."""
        row = {k: v for k, v in self.to_dict().items() if k not in _MIXES}
        for prefix, name in _MIXES.items():
            mix = getattr(self, prefix)
            for key in MIX_KEYS:
                row[f"{name}_{key}"] = mix.get(key, 0)
        return row

    @classmethod
    def from_flat(cls, row: dict) -> KernelFacts:
        """Inverse of `flat` (extra columns such as a catalogue id are ignored)."""
        prefixes = tuple(f"{name}_" for name in _MIXES.values())
        data = {k: v for k, v in row.items() if not k.startswith(prefixes)}
        for attr, name in _MIXES.items():
            data[attr] = {k: int(row.get(f"{name}_{k}") or 0) for k in MIX_KEYS}
        return cls.from_dict(data)
