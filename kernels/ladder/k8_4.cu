// Catalogue kernel 8.4, parent 8.3: "z-order" (maxas-style) lane -> tile mapping.
// Kernel 8.3 (warp tile WN_L = 4 lanes across N, WM_L = GM_WAVE / 4 down M, 4x4 per lane,
// scalar loads, unpadded LDS, operands named as LDS elements) with the lanes of a wave
// placed on the WM_L x WN_L grid of thread tiles in Morton (z) order instead of row-major:
// the lane id's bits are dealt alternately to the column and the row index (bit 0 ->
// column, bit 1 -> row, bit 2 -> column, ...; when one index is full the rest go to the
// other). The aim, as in maxas's SGEMM, is that the lanes served together by one LDS access
// phase read a compact patch of thread tiles: few distinct addresses (broadcasts) spread
// over distinct banks.
// What it changes here: with 4 lanes across N, aligned groups of 8 or more lanes cover the
// same tile rectangles as 8.3's row-major order (2x4, 4x4, 8x4, ...), pairs are unchanged
// (1x2), quads become 2x2 squares instead of 1x4 rows, and the irregular phase groups
// of AMD's ds_read_b128 (ARCH-FACTS: {0-3, 20-23}, ..., unconfirmed for gfx9) meet other
// addresses. The bank-conflict terms of the model, from the spec's lds_phases, say how much
// that matters on a given GPU.
// LDS: 8192 B. Block (256,1,1), grid (N/64, M/64).
// Supported shapes: M, N multiples of 64, K a multiple of 16.
#include "gemm_port.h"

namespace {
constexpr int BM = 64, BN = 64, BK = 16;
constexpr int TM = 4, TN = 4;
constexpr int THREADS = 256;
constexpr int WN_L = 4, WM_L = GM_WAVE / WN_L;  // warp tile in lanes
constexpr int WAVE_M = WM_L * TM, WAVE_N = WN_L * TN;
constexpr int WAVES_N = BN / WAVE_N;
static_assert(WM_L * WN_L == GM_WAVE && BN % WAVE_N == 0 && BM % WAVE_M == 0, "waves tile");
static_assert((BM / WAVE_M) * WAVES_N * GM_WAVE == THREADS, "one region per wave");
static_assert((BM * BK) % THREADS == 0 && (BK * BN) % THREADS == 0, "whole loads per thread");

__host__ __device__ constexpr int ilog2(int x) { return x <= 1 ? 0 : 1 + ilog2(x / 2); }
constexpr int LOG_WM = ilog2(WM_L), LOG_WN = ilog2(WN_L);
static_assert((1 << LOG_WM) == WM_L && (1 << LOG_WN) == WN_L, "powers of two");

// Morton split of a lane id into (row, column) of the wave's lane grid.
GM_DEVICE void zorder_lane(int lane, int& lr, int& lc) {
  lr = 0, lc = 0;
  int nr = 0, nc = 0;  // bits given to the row / column so far
#pragma unroll
  for (int bit = 0; bit < LOG_WM + LOG_WN; ++bit) {
    const int v = (lane >> bit) & 1;
    if (nc < LOG_WN && (nc <= nr || nr == LOG_WM))
      lc |= v << nc++;
    else
      lr |= v << nr++;
  }
}
}  // namespace

GM_KERNEL void __launch_bounds__(THREADS)
    sgemm_8_4(int M, int N, int K, float alpha, const float* __restrict__ A,
              const float* __restrict__ B, float beta, float* __restrict__ C) {
  __shared__ float As[BK * BM];  // A transposed, unpadded: (m, k) at k * BM + m
  __shared__ float Bs[BK * BN];  // (k, n) at k * BN + n
  const int tid = threadIdx.x;
  const int wave = tid / GM_WAVE, lane = tid % GM_WAVE;
  int lr, lc;
  zorder_lane(lane, lr, lc);
  const int row0 = (wave / WAVES_N) * WAVE_M + lr * TM;
  const int col0 = (wave % WAVES_N) * WAVE_N + lc * TN;
  const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
  const float* Ablk = A + static_cast<long long>(m0) * K;
  const float* Bblk = B + n0;

  float acc[TM][TN] = {};
  for (int k0 = 0; k0 < K; k0 += BK) {
#pragma unroll
    for (int r = 0; r < BM * BK / THREADS; ++r) {
      const int e = tid + r * THREADS;  // element e of the A tile: row e / BK, column e % BK
      As[(e % BK) * BM + e / BK] = Ablk[static_cast<long long>(e / BK) * K + k0 + e % BK];
    }
#pragma unroll
    for (int r = 0; r < BK * BN / THREADS; ++r) {
      const int e = tid + r * THREADS;  // element e of the B tile: row e / BN, column e % BN
      Bs[e] = Bblk[static_cast<long long>(k0 + e / BN) * N + e % BN];
    }
    __syncthreads();
#pragma unroll 1
    for (int k = 0; k < BK; ++k)
#pragma unroll
      for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j)
          acc[i][j] = fmaf(As[k * BM + row0 + i], Bs[k * BN + col0 + j], acc[i][j]);
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < TM; ++i)
#pragma unroll
    for (int j = 0; j < TN; ++j)
      gm_store_c1(C + static_cast<long long>(m0 + row0 + i) * N + n0 + col0 + j, acc[i][j],
                  alpha, beta);
}
