// sgemm_tile.cu: the parametrised SIMT SGEMM tile template (HIP and CUDA from one source).
//
// C = alpha * A * B + beta * C, all row-major: A is M x K, B is K x N, C is M x N.
// The uniform catalogue entry `sgemm_tile` (docs/design.md) uses lda = K, ldb = N, ldc = N.
// With -DGM_BATCHED=1 the file instead defines the strided-batched entries
// `sgemm_tile_batched_{nn,nt,tn,tt}` (gemmmodel/batched.py): blockIdx.z walks the batch,
// the suffix says whether A / B are stored transposed, lda/ldb/ldc are run-time arguments.
//
// Compile-time parameters (-D macros; gemmmodel.template.TileConfig.defines() writes them):
//   BM, BN, BK   block tile: BM rows x BN columns of C, BK-deep slices of K per step
//   TM, TN       thread tile: each thread accumulates TM x TN outputs in registers
//   WM, WN       warp (wave) tile: rows x columns of the block tile that one warp/wave
//                covers; 0, 0 = automatic (LX = min(8, BN/TN) lanes across, LY = GM_WAVE/LX
//                lanes down, WM = LY*TM, WN = LX*TN). Always WM*WN == GM_WAVE*TM*TN.
//   THREADS      threads per block, must equal BM*BN/(TM*TN) (1-D block)
//   VEC          1 or 4: width of the global loads, of the LDS fragment reads and of the
//                C stores (4 = float4)
//   PAD          LDS row padding in floats (a multiple of 4 when VEC == 4)
//   DBUF         0/1: LDS double buffer. On NVIDIA sm_80+ (GM_CP_ASYNC) with EDGE == 0 the
//                next tile is copied by cp.async; otherwise it is staged through registers.
//   SWIZZLE      block raster: 0 = row-major grid; G > 0 = groups of G block-rows walked
//                column by column, so that blocks running together share A and B tiles in L2
//   EDGE         0: M % BM == N % BN == K % BK == 0 and 16-byte aligned operands required;
//                1: bounds-checked loads/stores, any M, N, K >= 1 and any leading dimension;
//                2: as 1 with the unchecked path compiled out (every tile takes the checked
//                loads): built only for its compile facts, the code an edge block executes
//
// Layout. Shared memory holds the A tile transposed, As[k][m], and the B tile as is,
// Bs[k][n], so that at each k the thread reads its TM A values and TN B values with
// float4 LDS reads. Inside a warp the lanes form an LY x LX grid (lane = ly*LX + lx); the
// thread tile is split into VEC-wide chunks spaced LY*VEC rows (LX*VEC columns) apart, so
// that the lanes of one warp read contiguous LDS words (no bank conflicts) and the same
// address across a row or column of lanes (broadcast).
//
// Synchronisation. Single buffer: load -> store -> barrier -> compute -> barrier.
// Double buffer: the tile kt+1 is fetched into the other stage while stage kt&1 is read;
// one barrier per step separates (a) everyone's reads of a stage from the writes into it
// one step later and (b) the writes of a stage from its reads one step later.
// No standard headers: the file also compiles under NVRTC / hiprtc.
#include "gemm_port.h"

#ifndef BM
#define BM 128
#endif
#ifndef BN
#define BN 128
#endif
#ifndef BK
#define BK 8
#endif
#ifndef TM
#define TM 8
#endif
#ifndef TN
#define TN 8
#endif
#ifndef WM
#define WM 0
#endif
#ifndef WN
#define WN 0
#endif
#ifndef THREADS
#define THREADS ((BM * BN) / (TM * TN))
#endif
#ifndef VEC
#define VEC 4
#endif
#ifndef PAD
#define PAD 0
#endif
#ifndef DBUF
#define DBUF 0
#endif
#ifndef SWIZZLE
#define SWIZZLE 0
#endif
#ifndef EDGE
#define EDGE 0
#endif
#ifndef GM_BATCHED
#define GM_BATCHED 0
#endif

namespace gm_tile {

constexpr int kWave = GM_WAVE;
constexpr int kLX = (WN > 0) ? WN / TN : ((BN / TN) < 8 ? (BN / TN) : 8);  // lanes across
constexpr int kLY = (WM > 0) ? WM / TM : kWave / kLX;                       // lanes down
constexpr int kWM = kLY * TM;
constexpr int kWN = kLX * TN;
constexpr int kWarpsN = BN / kWN;
constexpr int kStages = DBUF ? 2 : 1;
constexpr int kLdA = BM + PAD;  // LDS row length (floats) of the transposed A tile
constexpr int kLdB = BN + PAD;
constexpr int kLoadsA = (BM * BK) / (VEC * THREADS);  // VEC-wide global loads per thread
constexpr int kLoadsB = (BK * BN) / (VEC * THREADS);

static_assert(THREADS == (BM * BN) / (TM * TN), "THREADS must equal BM*BN/(TM*TN)");
static_assert(VEC == 1 || VEC == 4, "VEC must be 1 or 4");
static_assert(BM % TM == 0 && BN % TN == 0, "thread tile must divide the block tile");
static_assert(TM % VEC == 0 && TN % VEC == 0 && BK % VEC == 0, "VEC must divide TM, TN, BK");
static_assert(PAD % VEC == 0, "PAD must keep LDS rows VEC-aligned");
static_assert(kLX * kLY == kWave, "warp tile must hold exactly one wave of thread tiles");
static_assert(kWM * kWN == kWave * TM * TN, "warp tile size");
static_assert(BM % kWM == 0 && BN % kWN == 0, "warp tiles must cover the block tile");
static_assert(THREADS % kWave == 0, "THREADS must be a multiple of the wave size");
static_assert(kLoadsA * VEC * THREADS == BM * BK, "A tile loads must divide evenly");
static_assert(kLoadsB * VEC * THREADS == BK * BN, "B tile loads must divide evenly");

// The block's tile coordinates (bx: column of tiles, by: row of tiles) after SWIZZLE.
GM_DEVICE void block_coords(int& bx, int& by) {
#if SWIZZLE > 0
  const int gx = gridDim.x, gy = gridDim.y;
  const int id = blockIdx.y * gx + blockIdx.x;
  const int per_group = SWIZZLE * gx;
  const int group = id / per_group;
  const int first = group * SWIZZLE;
  const int rows = (gy - first) < SWIZZLE ? (gy - first) : SWIZZLE;
  const int in_group = id - group * per_group;
  by = first + in_group % rows;
  bx = in_group / rows;
#else
  bx = blockIdx.x;
  by = blockIdx.y;
#endif
}

GM_DEVICE bool aligned16(const void* p) {
  return (reinterpret_cast<unsigned long long>(p) & 15ull) == 0ull;
}

// A scheduling fence: the AMDGPU scheduler may not move instructions across it (without
// it, hipcc hoists every LDS read of a k-step loop to the top, which costs 2-3x the
// registers, and sinks the double-buffer stores before the FMAs). ptxas needs none.
#if defined(GM_AMD) && defined(__has_builtin)
#if __has_builtin(__builtin_amdgcn_sched_barrier)
#define GM_SCHED_FENCE() __builtin_amdgcn_sched_barrier(0)
#endif
#endif
#ifndef GM_SCHED_FENCE
#define GM_SCHED_FENCE() ((void)0)
#endif

// VEC consecutive floats of a stored row-major matrix (leading dimension ld) from
// (row, col); the caller guarantees the chunk is inside and VEC-aligned.
GM_DEVICE void load_chunk(float (&v)[VEC], const float* __restrict__ p, int row, int col,
                          int ld) {
#if VEC == 4
  const float4 t = GM_LD4(p + row * ld + col);
  v[0] = t.x; v[1] = t.y; v[2] = t.z; v[3] = t.w;
#else
  v[0] = p[row * ld + col];
#endif
}

// The same chunk with bounds checks against a rows x cols matrix: scalar loads, zero
// outside. Branch-free: an outside element loads p[0] (valid, M, N, K >= 1) and is
// replaced by 0, so no divergent control flow holds up the prefetch.
GM_DEVICE void load_chunk_checked(float (&v)[VEC], const float* __restrict__ p, int row,
                                  int col, int rows, int cols, int ld) {
#pragma unroll
  for (int e = 0; e < VEC; ++e) {
    const bool ok = row < rows && col + e < cols;
    const float x = p[ok ? row * ld + col + e : 0];
    v[e] = ok ? x : 0.0f;
  }
}

GM_DEVICE void store_lds_vec(float* dst, const float (&v)[VEC]) {
#if VEC == 4
  float4 t;
  t.x = v[0]; t.y = v[1]; t.z = v[2]; t.w = v[3];
  GM_ST4(dst, t);
#else
  dst[0] = v[0];
#endif
}

// Coordinates of the c-th VEC chunk of a tile. The chunks run along the stored matrix's
// contiguous dimension (k for a row-major A, m for a transposed A, and so on).
// A tile chunk -> (m, k) offsets inside the BM x BK tile.
template <bool TA>
GM_DEVICE void a_chunk(int c, int& m, int& k) {
  if (!TA) { m = c / (BK / VEC); k = (c % (BK / VEC)) * VEC; }   // A stored [m][k]
  else     { k = c / (BM / VEC); m = (c % (BM / VEC)) * VEC; }   // A stored [k][m]
}
// B tile chunk -> (k, n) offsets inside the BK x BN tile.
template <bool TB>
GM_DEVICE void b_chunk(int c, int& k, int& n) {
  if (!TB) { k = c / (BN / VEC); n = (c % (BN / VEC)) * VEC; }   // B stored [k][n]
  else     { n = c / (BK / VEC); k = (c % (BK / VEC)) * VEC; }   // B stored [n][k]
}

struct Operands {
  const float* __restrict__ A;
  const float* __restrict__ B;
  int M, N, K, lda, ldb;
  int m0, n0;      // first row / column of C of this block
  bool fast_mn;    // EDGE only: block tile inside M x N and float4 loads aligned
                   // (never with EDGE == 2)
};

// Global -> registers for k-tile kt. With EG, a tile that lies wholly inside the matrices
// (a block-uniform test) takes the unchecked path; edge tiles take the checked loads.
template <bool TA, bool TB, bool EG>
GM_DEVICE void fetch(const Operands& op, int kt, int tid, float (&ra)[kLoadsA][VEC],
                     float (&rb)[kLoadsB][VEC]) {
  const int k0 = kt * BK;
  if (EG && !(op.fast_mn && k0 + BK <= op.K)) {
#pragma unroll
    for (int i = 0; i < kLoadsA; ++i) {
      int m, k;
      a_chunk<TA>(tid + i * THREADS, m, k);
      if (!TA) load_chunk_checked(ra[i], op.A, op.m0 + m, k0 + k, op.M, op.K, op.lda);
      else     load_chunk_checked(ra[i], op.A, k0 + k, op.m0 + m, op.K, op.M, op.lda);
    }
#pragma unroll
    for (int i = 0; i < kLoadsB; ++i) {
      int k, n;
      b_chunk<TB>(tid + i * THREADS, k, n);
      if (!TB) load_chunk_checked(rb[i], op.B, k0 + k, op.n0 + n, op.K, op.N, op.ldb);
      else     load_chunk_checked(rb[i], op.B, op.n0 + n, k0 + k, op.N, op.K, op.ldb);
    }
    return;
  }
#pragma unroll
  for (int i = 0; i < kLoadsA; ++i) {
    int m, k;
    a_chunk<TA>(tid + i * THREADS, m, k);
    if (!TA) load_chunk(ra[i], op.A, op.m0 + m, k0 + k, op.lda);
    else     load_chunk(ra[i], op.A, k0 + k, op.m0 + m, op.lda);
  }
#pragma unroll
  for (int i = 0; i < kLoadsB; ++i) {
    int k, n;
    b_chunk<TB>(tid + i * THREADS, k, n);
    if (!TB) load_chunk(rb[i], op.B, k0 + k, op.n0 + n, op.ldb);
    else     load_chunk(rb[i], op.B, op.n0 + n, k0 + k, op.ldb);
  }
}

// Registers -> one LDS stage (A transposed into [k][m]).
template <bool TA, bool TB>
GM_DEVICE void stash(float (*As)[kLdA], float (*Bs)[kLdB], int tid,
                     const float (&ra)[kLoadsA][VEC], const float (&rb)[kLoadsB][VEC]) {
#pragma unroll
  for (int i = 0; i < kLoadsA; ++i) {
    int m, k;
    a_chunk<TA>(tid + i * THREADS, m, k);
    if (!TA) {
#pragma unroll
      for (int e = 0; e < VEC; ++e) As[k + e][m] = ra[i][e];
    } else {
      store_lds_vec(&As[k][m], ra[i]);
    }
  }
#pragma unroll
  for (int i = 0; i < kLoadsB; ++i) {
    int k, n;
    b_chunk<TB>(tid + i * THREADS, k, n);
    if (!TB) {
      store_lds_vec(&Bs[k][n], rb[i]);
    } else {
#pragma unroll
      for (int e = 0; e < VEC; ++e) Bs[k + e][n] = rb[i][e];
    }
  }
}

#if defined(GM_CP_ASYNC)
// Global -> LDS stage by cp.async (EDGE == 0 only: whole, aligned tiles).
template <bool TA, bool TB>
GM_DEVICE void fetch_async(const Operands& op, int kt, int tid, float (*As)[kLdA],
                           float (*Bs)[kLdB]) {
  const int k0 = kt * BK;
#pragma unroll
  for (int i = 0; i < kLoadsA; ++i) {
    int m, k;
    a_chunk<TA>(tid + i * THREADS, m, k);
    if (!TA) {
      const float* src = op.A + (op.m0 + m) * op.lda + k0 + k;
#pragma unroll
      for (int e = 0; e < VEC; ++e) gm_cp_async4(&As[k + e][m], src + e);
    } else {
      const float* src = op.A + (k0 + k) * op.lda + op.m0 + m;
      if (VEC == 4) gm_cp_async16(&As[k][m], src);
      else gm_cp_async4(&As[k][m], src);
    }
  }
#pragma unroll
  for (int i = 0; i < kLoadsB; ++i) {
    int k, n;
    b_chunk<TB>(tid + i * THREADS, k, n);
    if (!TB) {
      const float* src = op.B + (k0 + k) * op.ldb + op.n0 + n;
      if (VEC == 4) gm_cp_async16(&Bs[k][n], src);
      else gm_cp_async4(&Bs[k][n], src);
    } else {
      const float* src = op.B + (op.n0 + n) * op.ldb + k0 + k;
#pragma unroll
      for (int e = 0; e < VEC; ++e) gm_cp_async4(&Bs[k + e][n], src + e);
    }
  }
  gm_cp_async_commit();
}
#endif

// The thread's A and B fragments at depth kk of an LDS stage (VEC-wide LDS reads).
// row_t / col_t: the thread's first row / column inside the block tile.
GM_DEVICE void load_frags(const float (*As)[kLdA], const float (*Bs)[kLdB], int kk,
                          int row_t, int col_t, float (&a)[TM], float (&b)[TN]) {
#pragma unroll
  for (int i = 0; i < TM / VEC; ++i) {
#if VEC == 4
    const float4 t = GM_LD4(&As[kk][row_t + i * kLY * 4]);
    a[4 * i] = t.x; a[4 * i + 1] = t.y; a[4 * i + 2] = t.z; a[4 * i + 3] = t.w;
#else
    a[i] = As[kk][row_t + i * kLY];
#endif
  }
#pragma unroll
  for (int j = 0; j < TN / VEC; ++j) {
#if VEC == 4
    const float4 t = GM_LD4(&Bs[kk][col_t + j * kLX * 4]);
    b[4 * j] = t.x; b[4 * j + 1] = t.y; b[4 * j + 2] = t.z; b[4 * j + 3] = t.w;
#else
    b[j] = Bs[kk][col_t + j * kLX];
#endif
  }
}

// One BK-deep step of outer products from an LDS stage into the accumulators, with the
// fragments of depth kk+1 read while the FMAs of depth kk run (register double buffer).
GM_DEVICE void compute(const float (*As)[kLdA], const float (*Bs)[kLdB], int row_t,
                       int col_t, float (&acc)[TM][TN]) {
  float a[2][TM], b[2][TN];
  load_frags(As, Bs, 0, row_t, col_t, a[0], b[0]);
#pragma unroll
  for (int kk = 0; kk < BK; ++kk) {
    if (kk + 1 < BK) load_frags(As, Bs, kk + 1, row_t, col_t, a[(kk + 1) & 1], b[(kk + 1) & 1]);
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
      for (int j = 0; j < TN; ++j) acc[i][j] = fmaf(a[kk & 1][i], b[kk & 1][j], acc[i][j]);
    GM_SCHED_FENCE();
  }
}

// C = alpha * acc + beta * C for the thread's outputs; beta == 0: C is never read.
// vec_c: float4 stores allowed (ldc % 4 == 0 and C 16-byte aligned; always with !EG).
template <bool EG>
GM_DEVICE void epilogue(float* __restrict__ C, int ldc, int M, int N, int row0, int col0,
                        float alpha, float beta, bool vec_c, const float (&acc)[TM][TN]) {
#pragma unroll
  for (int i = 0; i < TM; ++i) {
    const int row = row0 + (i / VEC) * (kLY * VEC) + (i % VEC);
    if (EG && row >= M) continue;
    float* crow = C + row * ldc;
#pragma unroll
    for (int j = 0; j < TN / VEC; ++j) {
      const int col = col0 + j * (kLX * VEC);
      const float* r = &acc[i][j * VEC];
      if (VEC == 4 && (!EG || (vec_c && col + 4 <= N))) {
        float4 out;
        out.x = alpha * r[0]; out.y = alpha * r[1];
        out.z = alpha * r[VEC > 2 ? 2 : 0]; out.w = alpha * r[VEC > 3 ? 3 : 0];
        if (beta != 0.0f) {
          const float4 old = GM_LD4(crow + col);
          out.x = fmaf(beta, old.x, out.x); out.y = fmaf(beta, old.y, out.y);
          out.z = fmaf(beta, old.z, out.z); out.w = fmaf(beta, old.w, out.w);
        }
        GM_ST4(crow + col, out);
      } else {
#pragma unroll
        for (int e = 0; e < VEC; ++e) {
          if (EG && col + e >= N) continue;
          float v = alpha * r[e];
          if (beta != 0.0f) v = fmaf(beta, crow[col + e], v);
          crow[col + e] = v;
        }
      }
    }
  }
}

// The block's GEMM: C[m0:m0+BM, n0:n0+BN] of the row-major problem.
// TA: A stored transposed (element (m, k) at A[k*lda + m]); TB: B stored transposed
// (element (k, n) at B[n*ldb + k]). EG: bounds checks (EDGE). Every thread of the block
// runs every barrier (no early exit), so the function may be called in a loop.
template <bool TA, bool TB, bool EG>
GM_DEVICE void gemm(int M, int N, int K, float alpha, const float* __restrict__ A, int lda,
                    const float* __restrict__ B, int ldb, float beta, float* __restrict__ C,
                    int ldc, int bx, int by) {
  __shared__ __align__(16) float As[kStages][BK][kLdA];
  __shared__ __align__(16) float Bs[kStages][BK][kLdB];

  const int tid = threadIdx.x;
  const int warp = tid / kWave, lane = tid % kWave;
  const int row_t = (warp / kWarpsN) * kWM + (lane / kLX) * VEC;
  const int col_t = (warp % kWarpsN) * kWN + (lane % kLX) * VEC;

  Operands op;
  op.A = A; op.B = B; op.M = M; op.N = N; op.K = K; op.lda = lda; op.ldb = ldb;
  op.m0 = by * BM; op.n0 = bx * BN;
  const bool vec_ab = VEC == 1 || ((lda & 3) == 0 && (ldb & 3) == 0 && aligned16(A) &&
                                   aligned16(B));
  op.fast_mn = EDGE != 2 && op.m0 + BM <= M && op.n0 + BN <= N && vec_ab;

  float acc[TM][TN];
#pragma unroll
  for (int i = 0; i < TM; ++i)
#pragma unroll
    for (int j = 0; j < TN; ++j) acc[i][j] = 0.0f;

  const int n_tiles = EG ? (K + BK - 1) / BK : K / BK;

#if DBUF
#if defined(GM_CP_ASYNC)
  if (!EG) {
    if (n_tiles > 0) {
      fetch_async<TA, TB>(op, 0, tid, As[0], Bs[0]);
      gm_cp_async_wait<0>();
      __syncthreads();
    }
    for (int kt = 0; kt < n_tiles; ++kt) {
      const int s = kt & 1;
      if (kt + 1 < n_tiles) fetch_async<TA, TB>(op, kt + 1, tid, As[s ^ 1], Bs[s ^ 1]);
      compute(As[s], Bs[s], row_t, col_t, acc);
      gm_cp_async_wait<0>();
      __syncthreads();
    }
  } else
#endif
  {
    // The last step is peeled so that the loop body has no branch: a conditional store
    // lets hipcc sink the FMAs below the stores and wait for the prefetch at once.
    float ra[kLoadsA][VEC], rb[kLoadsB][VEC];
    if (n_tiles > 0) {
      fetch<TA, TB, EG>(op, 0, tid, ra, rb);
      stash<TA, TB>(As[0], Bs[0], tid, ra, rb);
      __syncthreads();
      for (int kt = 0; kt + 1 < n_tiles; ++kt) {
        const int s = kt & 1;
        fetch<TA, TB, EG>(op, kt + 1, tid, ra, rb);
        GM_SCHED_FENCE();
        compute(As[s], Bs[s], row_t, col_t, acc);
        GM_SCHED_FENCE();
        stash<TA, TB>(As[s ^ 1], Bs[s ^ 1], tid, ra, rb);
        __syncthreads();
      }
      const int s = (n_tiles - 1) & 1;
      compute(As[s], Bs[s], row_t, col_t, acc);
      __syncthreads();
    }
  }
#else
  for (int kt = 0; kt < n_tiles; ++kt) {
    float ra[kLoadsA][VEC], rb[kLoadsB][VEC];
    fetch<TA, TB, EG>(op, kt, tid, ra, rb);
    stash<TA, TB>(As[0], Bs[0], tid, ra, rb);
    __syncthreads();
    compute(As[0], Bs[0], row_t, col_t, acc);
    __syncthreads();
  }
#endif

  const bool vec_c = !EG || ((ldc & 3) == 0 && aligned16(C));
  epilogue<EG>(C, ldc, M, N, op.m0 + row_t, op.n0 + col_t, alpha, beta, vec_c, acc);
}

}  // namespace gm_tile

#if !GM_BATCHED
// The uniform catalogue entry (docs/design.md): lda = K, ldb = N, ldc = N.
// Grid: (ceil(N / BN), ceil(M / BM), 1); block: (THREADS, 1, 1).
GM_KERNEL void __launch_bounds__(THREADS)
sgemm_tile(int M, int N, int K, float alpha, const float* __restrict__ A,
           const float* __restrict__ B, float beta, float* __restrict__ C) {
  int bx, by;
  gm_tile::block_coords(bx, by);
  gm_tile::gemm<false, false, (EDGE != 0)>(M, N, K, alpha, A, K, B, N, beta, C, N, bx, by);
}
#if defined(GM_STAMPS) && GM_STAMPS && !defined(__HIP_PLATFORM_AMD__)
// Instrumented twin of sgemm_tile, built only with GM_STAMPS=1 on NVIDIA (tools/device/
// tail_stamps.py; never timed in a sweep): thread 0 of each block records its SM (%smid)
// and %globaltimer (ns) at entry and after the block's last barrier, 3 uint64 per block in
// `rec` at the linear block index blockIdx.y * gridDim.x + blockIdx.x.
GM_KERNEL void __launch_bounds__(THREADS)
sgemm_tile_stamped(int M, int N, int K, float alpha, const float* __restrict__ A,
                   const float* __restrict__ B, float beta, float* __restrict__ C,
                   unsigned long long* __restrict__ rec) {
  unsigned long long t0 = 0;
  if (threadIdx.x == 0) asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  int bx, by;
  gm_tile::block_coords(bx, by);
  gm_tile::gemm<false, false, (EDGE != 0)>(M, N, K, alpha, A, K, B, N, beta, C, N, bx, by);
  __syncthreads();
  if (threadIdx.x == 0) {
    unsigned int smid;
    unsigned long long t1;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t1));
    const unsigned long long b = blockIdx.y * gridDim.x + blockIdx.x;
    rec[3 * b] = smid;
    rec[3 * b + 1] = t0;
    rec[3 * b + 2] = t1;
  }
}
#endif
#else
// Strided-batched entries of the row-major problem C_z = alpha * A_z * B_z + beta * C_z,
// X_z = X + z * stride_x (elements). Grid: (ceil(N / BN), ceil(M / BM), min(batch, 65535));
// the z loop covers batch counts beyond the grid limit. Always bounds-checked.
#define GM_TILE_BATCHED_ENTRY(NAME, TA, TB)                                                   \
  GM_KERNEL void __launch_bounds__(THREADS)                                                  \
  NAME(int M, int N, int K, float alpha, const float* __restrict__ A, int lda,               \
       long long stride_a, const float* __restrict__ B, int ldb, long long stride_b,         \
       float beta, float* __restrict__ C, int ldc, long long stride_c, int batch_count) {    \
    int bx, by;                                                                              \
    gm_tile::block_coords(bx, by);                                                           \
    for (int z = blockIdx.z; z < batch_count; z += gridDim.z)                                \
      gm_tile::gemm<TA, TB, true>(M, N, K, alpha, A + z * stride_a, lda, B + z * stride_b,   \
                                  ldb, beta, C + z * stride_c, ldc, bx, by);                 \
  }
GM_TILE_BATCHED_ENTRY(sgemm_tile_batched_nn, false, false)
GM_TILE_BATCHED_ENTRY(sgemm_tile_batched_nt, false, true)
GM_TILE_BATCHED_ENTRY(sgemm_tile_batched_tn, true, false)
GM_TILE_BATCHED_ENTRY(sgemm_tile_batched_tt, true, true)
#endif
