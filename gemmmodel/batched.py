"""Strided-batched SGEMM with BLAS column-major semantics, on the tile template.

    sgemm_strided_batched(trans_a, trans_b, m, n, k, alpha, A, lda, stride_a,
                          B, ldb, stride_b, beta, C, ldc, stride_c, batch_count)

computes C_i <- alpha * op(A_i) * op(B_i) + beta * C_i for i < batch_count, where
X_i = X + i * stride_x (elements), op(X) = X ('N'), X^T ('T', and 'C': the conjugate
transpose is the transpose for real data), matrices column-major with leading dimension
ldx (REFERENCE.md §4, as rocBLAS / cuBLAS ...SgemmStridedBatched). With beta == 0, C is
never read (NaN or Inf in C does not reach the result). A and B are always read.

Argument rules (checked before anything is uploaded or launched; each failure is one
BadArgument line):
  * trans_a, trans_b in 'N', 'T', 'C' (either case); m, n, k, batch_count >= 1
  * lda >= rows of A as stored (m for 'N', k otherwise); ldb >= (k for 'N', n otherwise);
    ldc >= m; every matrix (ld * (cols - 1) + rows elements) below 2**31 elements
  * strides >= 0. A and B are only read, so their batches may overlap (stride 0 broadcasts
    one matrix). C is written: with batch_count > 1, stride_c must be at least the extent
    of one C matrix, ldc * (n - 1) + m, else batches would overlap and the result would
    depend on the order the GPU runs them in
  * each array holds (batch_count - 1) * stride + ld * (cols - 1) + rows elements
Arrays: float32 numpy arrays (any shape, C- or Fortran-contiguous, read as flat memory;
C is updated in place) or DeviceBuffers of the runtime (left on the device).
config: a template config name or TileConfig (default: choose_config); one the device cannot
run raises InvalidConfig with the reasons, before anything is compiled or launched.

The kernel: C^T = op(B)^T op(A)^T is a row-major problem of M' = n, N' = m, K' = k, with
A' = B (transposed in storage iff trans_b != 'N') and B' = A (transposed iff trans_a !=
'N'), run by the template's batched entries (GM_BATCHED=1, bounds-checked, blockIdx.z is
the batch).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from gemmmodel.errors import BadArgument
from gemmmodel.template.config import TileConfig, parse_name
from gemmmodel.template.plan import BATCHED_ENTRIES, TEMPLATE_SOURCE, batched_grid, tile_defines
from gemmmodel.template.rules import check_for_runtime

INT32_MAX = 2**31 - 1
#: Configs (auto warp tile: valid for wave32 and wave64). The small tile is used unless the
#: 64x64 tiles alone give at least BIG_TILE_BLOCKS_PER_CU blocks per CU (assumption: below
#: that, more and smaller blocks spread the work over more CUs; the contest cases of
#: REFERENCE.md §4 all get the small tile on a 132-SM H200).
SMALL_CONFIG = "32x32x16/4x4/p4/db"
BIG_CONFIG = "64x64x16/4x4/p4/db"
BIG_TILE_BLOCKS_PER_CU = 4
DEFAULT_CUS = 100  # assumption when the runtime does not report its CU / SM count
_OPS = {"N": "N", "T": "T", "C": "T"}


@dataclass(frozen=True)
class BatchedProblem:
    """Checked arguments; trans_* normalised to 'N' / 'T'; sizes in elements."""

    trans_a: str
    trans_b: str
    m: int
    n: int
    k: int
    alpha: float
    beta: float
    lda: int
    ldb: int
    ldc: int
    stride_a: int
    stride_b: int
    stride_c: int
    batch_count: int

    def stored(self, which: str) -> tuple[int, int, int, int]:
        """(rows, cols, ld, stride) of matrix 'A', 'B' or 'C' as stored (column-major)."""
        if which == "A":
            rows, cols = (self.m, self.k) if self.trans_a == "N" else (self.k, self.m)
            return rows, cols, self.lda, self.stride_a
        if which == "B":
            rows, cols = (self.k, self.n) if self.trans_b == "N" else (self.n, self.k)
            return rows, cols, self.ldb, self.stride_b
        return self.m, self.n, self.ldc, self.stride_c

    def extent(self, which: str) -> int:
        """Elements one matrix spans: ld * (cols - 1) + rows."""
        rows, cols, ld, _ = self.stored(which)
        return ld * (cols - 1) + rows

    def needed(self, which: str) -> int:
        """Elements the array must hold: (batch_count - 1) * stride + extent."""
        return (self.batch_count - 1) * self.stored(which)[3] + self.extent(which)

    @property
    def flop(self) -> float:
        return 2.0 * self.m * self.n * self.k * self.batch_count


def _int(name: str, value: Any, low: int) -> int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise BadArgument(f"{name}={value!r}: must be an integer")
    if int(value) < low:
        raise BadArgument(f"{name}={value}: must be >= {low}")
    return int(value)


def _real(name: str, value: Any) -> float:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.number)) \
            or isinstance(value, (complex, np.complexfloating)):
        raise BadArgument(f"{name}={value!r}: must be a real number")
    return float(value)


def _op(name: str, value: Any) -> str:
    op = _OPS.get(str(value).upper()) if isinstance(value, str) else None
    if op is None:
        raise BadArgument(f"{name}={value!r}: must be 'N', 'T' or 'C'")
    return op


def check_arguments(trans_a, trans_b, m, n, k, alpha, lda, stride_a, ldb, stride_b, beta,
                    ldc, stride_c, batch_count) -> BatchedProblem:
    """The scalar arguments checked (module docstring rules) as a BatchedProblem."""
    p = BatchedProblem(
        trans_a=_op("trans_a", trans_a), trans_b=_op("trans_b", trans_b),
        m=_int("m", m, 1), n=_int("n", n, 1), k=_int("k", k, 1),
        alpha=_real("alpha", alpha), beta=_real("beta", beta),
        lda=_int("lda", lda, 1), ldb=_int("ldb", ldb, 1), ldc=_int("ldc", ldc, 1),
        stride_a=_int("stride_a", stride_a, 0), stride_b=_int("stride_b", stride_b, 0),
        stride_c=_int("stride_c", stride_c, 0), batch_count=_int("batch_count", batch_count, 1))
    for which, trans in (("A", p.trans_a), ("B", p.trans_b), ("C", "N")):
        rows, cols, ld, _ = p.stored(which)
        lname = f"ld{which.lower()}"
        if ld < rows:
            how = f"trans_{which.lower()}='{trans}': " if which != "C" else ""
            raise BadArgument(f"{lname}={ld} < {rows}, the rows of {which} as stored "
                              f"({how}{which} is {rows} x {cols} column-major)")
        if p.extent(which) > INT32_MAX:
            raise BadArgument(f"{which} spans {p.extent(which)} elements per matrix; the kernel "
                              f"indexes one matrix with 32-bit ints (at most {INT32_MAX})")
    if p.batch_count > 1 and p.stride_c < p.extent("C"):
        raise BadArgument(f"stride_c={p.stride_c} < {p.extent('C')} = ldc*(n-1)+m, the extent "
                          f"of one C matrix: batches of C would overlap")
    return p


def _memory(name: str, arr: np.ndarray) -> np.ndarray:
    """The flat memory of a contiguous array, as a view (C or Fortran order)."""
    if arr.flags.c_contiguous:
        return arr.reshape(-1)
    if arr.flags.f_contiguous:
        return arr.reshape(-1, order="F")
    raise BadArgument(f"{name} is not contiguous: pass np.ascontiguousarray(...)")


def _flat(name: str, arr: np.ndarray, need: int, writable: bool) -> np.ndarray:
    """The flat float32 memory of a host array (a view), checked against `need` elements."""
    if arr.dtype != np.float32:
        raise BadArgument(f"{name} has dtype {arr.dtype}: must be float32")
    flat = _memory(name, arr)
    if writable and not arr.flags.writeable:
        raise BadArgument(f"{name} is read-only: C is updated in place")
    if flat.size < need:
        raise BadArgument(f"{name} has {flat.size} elements, needs {need} "
                          f"(= (batch_count-1)*stride + ld*(cols-1) + rows)")
    return flat


def _check_array(name: str, arr: Any, need: int, writable: bool):
    if isinstance(arr, np.ndarray):
        return _flat(name, arr, need, writable)
    nbytes = getattr(arr, "nbytes", None)
    if nbytes is None or not hasattr(arr, "ptr"):
        raise BadArgument(f"{name} must be a float32 numpy array or a device buffer, "
                          f"not {type(arr).__name__}")
    if int(nbytes) < 4 * need:
        raise BadArgument(f"{name} buffer has {nbytes} B, needs {4 * need} B "
                          f"({need} float32 elements)")
    return arr


def choose_config(p: BatchedProblem, compute_units: int | None = None) -> TileConfig:
    """The template config for problem `p` (see SMALL_CONFIG / BIG_CONFIG)."""
    big = parse_name(BIG_CONFIG)
    blocks = math.ceil(p.n / big.bm) * math.ceil(p.m / big.bn) * p.batch_count
    cus = int(compute_units or DEFAULT_CUS)
    return big if blocks >= BIG_TILE_BLOCKS_PER_CU * cus else parse_name(SMALL_CONFIG)


def resolve_config(config, p: BatchedProblem, runtime) -> TileConfig:
    """The TileConfig to run: `config` (a name or TileConfig) checked against the runtime's
    device (InvalidConfig), or choose_config's when config is None."""
    if config is None:
        return choose_config(p, runtime.device_info().get("sms"))
    return check_for_runtime(parse_name(config) if isinstance(config, str) else config, runtime)


def row_major_problem(m: int, n: int, k: int, batch: int) -> BatchedProblem:
    """The packed row-major M x N x K product of `batch` matrices as the column-major (BLAS)
    arguments: C^T = B^T A^T (n, m, k; so kernel_args(p, B, A, C) takes B first)."""
    return check_arguments("N", "N", n, m, k, 1.0, n, k * n, k, m * k, 0.0, n, m * n, batch)


def launch_spec(p: BatchedProblem, cfg: TileConfig) -> tuple[str, tuple, tuple]:
    """(entry, grid, block) of the row-major problem C^T = op(B)^T op(A)^T."""
    entry = BATCHED_ENTRIES[(p.trans_b != "N", p.trans_a != "N")]
    return entry, batched_grid(cfg, p.n, p.m, p.batch_count), (cfg.threads, 1, 1)


def kernel_args(p: BatchedProblem, a_buf, b_buf, c_buf) -> list:
    """Arguments of sgemm_tile_batched_*: the row-major problem (M'=n, N'=m, A'=B, B'=A)."""
    i32, i64, f32 = np.int32, np.int64, np.float32
    return [i32(p.n), i32(p.m), i32(p.k), f32(p.alpha), b_buf, i32(p.ldb), i64(p.stride_b),
            a_buf, i32(p.lda), i64(p.stride_a), f32(p.beta), c_buf, i32(p.ldc), i64(p.stride_c),
            i32(p.batch_count)]


def compile_batched(runtime, cfg: TileConfig):
    """The module with all four batched entries for `cfg` (cached by the runtime)."""
    return runtime.compile_file(TEMPLATE_SOURCE, list(BATCHED_ENTRIES.values()),
                                tile_defines(cfg, edge=True, batched=True))


def sgemm_strided_batched(trans_a, trans_b, m, n, k, alpha, A, lda, stride_a, B, ldb,
                          stride_b, beta, C, ldc, stride_c, batch_count, *, config=None,
                          runtime=None):
    """See the module docstring. Returns C (the updated numpy array, or the C buffer)."""
    p = check_arguments(trans_a, trans_b, m, n, k, alpha, lda, stride_a, ldb, stride_b, beta,
                        ldc, stride_c, batch_count)
    arrays = [_check_array(name, arr, p.needed(name), name == "C")
              for name, arr in (("A", A), ("B", B), ("C", C))]
    if runtime is None:
        from gemmmodel.runtime import get_runtime

        runtime = get_runtime()
    cfg = resolve_config(config, p, runtime)
    uploaded = []
    try:
        bufs = []
        for arr in arrays:
            if isinstance(arr, np.ndarray):
                uploaded.append(runtime.upload(arr))
                bufs.append(uploaded[-1])
            else:
                bufs.append(arr)
        module = compile_batched(runtime, cfg)
        entry, grid, block = launch_spec(p, cfg)
        runtime.launch(module, entry, grid, block, kernel_args(p, *bufs))
        if isinstance(arrays[2], np.ndarray):
            arrays[2][:] = runtime.download(bufs[2], arrays[2].shape)
            return C
        runtime.synchronize()
        return C
    finally:
        for buf in uploaded:
            runtime.free(buf)


# ---- numpy reference ---------------------------------------------------------------
def matrix_view(flat: np.ndarray, p: BatchedProblem, which: str, i: int) -> np.ndarray:
    """Matrix `which` of batch i as a (rows, cols) view of flat memory (column-major)."""
    rows, cols, ld, stride = p.stored(which)
    step = flat.itemsize
    return np.lib.stride_tricks.as_strided(flat[i * stride:], shape=(rows, cols),
                                           strides=(step, ld * step))


def _host(name: str, arr) -> np.ndarray:
    if not isinstance(arr, np.ndarray):
        raise BadArgument(f"{name}: the reference takes numpy arrays")
    return _memory(name, arr)


def reference_strided_batched(trans_a, trans_b, m, n, k, alpha, A, lda, stride_a, B, ldb,
                              stride_b, beta, C, ldc, stride_c, batch_count, *,
                              abs_product: bool = False) -> np.ndarray:
    """The same semantics in float64 numpy: returns the flat memory of C after the call
    (a new float64 array; elements outside the matrices keep C's values). With
    abs_product, returns |alpha| |op(A)| |op(B)| + |beta| |C| instead (0 outside the
    matrices): the scale of each element's rounding error bound."""
    p = check_arguments(trans_a, trans_b, m, n, k, alpha, lda, stride_a, ldb, stride_b, beta,
                        ldc, stride_c, batch_count)
    a, b, c = (_host(nm, x).astype(np.float64) for nm, x in (("A", A), ("B", B), ("C", C)))
    for name, flat in (("A", a), ("B", b), ("C", c)):
        if flat.size < p.needed(name):
            raise BadArgument(f"{name} has {flat.size} elements, needs {p.needed(name)}")
    out = np.zeros_like(c) if abs_product else c.copy()
    for i in range(p.batch_count):
        op_a, op_b = matrix_view(a, p, "A", i), matrix_view(b, p, "B", i)
        op_a = op_a if p.trans_a == "N" else op_a.T
        op_b = op_b if p.trans_b == "N" else op_b.T
        dst = matrix_view(out, p, "C", i)
        if abs_product:
            val = abs(p.alpha) * (np.abs(op_a) @ np.abs(op_b))
            if p.beta != 0.0:
                val = val + abs(p.beta) * np.abs(matrix_view(c, p, "C", i))
        else:
            val = p.alpha * (op_a @ op_b)
            if p.beta != 0.0:
                val = val + p.beta * matrix_view(c, p, "C", i)
        dst[...] = val
    return out


def matrix_mask(p: BatchedProblem, size: int) -> np.ndarray:
    """True at the elements of C's flat memory that belong to some C_i."""
    mask = np.zeros(size, dtype=bool)
    for i in range(p.batch_count):
        matrix_view(mask, p, "C", i)[...] = True
    return mask


_CASE_NAMES = ("case_arrays", "check_case", "fuzz_cases", "run_cli_case", "tight_case")


def __getattr__(name: str):
    """fuzz_cases, check_case, run_cli_case, … live in gemmmodel.batched_cases."""
    if name in _CASE_NAMES:
        from gemmmodel import batched_cases

        return getattr(batched_cases, name)
    raise AttributeError(f"module 'gemmmodel.batched' has no attribute {name!r}")


__all__ = ["BatchedProblem", "check_arguments", "choose_config", "kernel_args", "launch_spec",
           "matrix_mask", "matrix_view", "reference_strided_batched", "resolve_config",
           "row_major_problem", "sgemm_strided_batched"]
