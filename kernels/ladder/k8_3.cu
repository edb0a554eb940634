// Catalogue kernel 8.3, parent 7.7: warp tiling without the other optimisations.
// Kernel 7.7's wavefront mapping (WN_L = 4 lanes across N, WM_L = GM_WAVE / 4 down M; each
// lane a 4x4 tile; wave64 region 64x16, warp32 32x16) on a plain tiled kernel: none of
// kernel 7's other steps remain -
//   * scalar global loads: 4 elements of A and 4 of B per thread per tile, consecutive
//     threads on consecutive addresses (no float4);
//   * no LDS padding: A is stored transposed into As[k][m] with row stride 64 floats, so the
//     16 threads that load one row of A write 16 addresses 64 floats apart;
//   * no register staging (no TK): the FMA loop names its operands as LDS elements,
//     As[k][row], Bs[k][col], and the compiler picks the loads (width and reuse);
//   * the k loop is not unrolled (#pragma unroll 1).
// LDS: 2 * 16 * 64 * 4 B = 8192 B. Block (256,1,1), grid (N/64, M/64).
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
}  // namespace

GM_KERNEL void __launch_bounds__(THREADS)
    sgemm_8_3(int M, int N, int K, float alpha, const float* __restrict__ A,
              const float* __restrict__ B, float beta, float* __restrict__ C) {
  __shared__ float As[BK * BM];  // A transposed, unpadded: (m, k) at k * BM + m
  __shared__ float Bs[BK * BN];  // (k, n) at k * BN + n
  const int tid = threadIdx.x;
  const int wave = tid / GM_WAVE, lane = tid % GM_WAVE;
  const int row0 = (wave / WAVES_N) * WAVE_M + (lane / WN_L) * TM;
  const int col0 = (wave % WAVES_N) * WAVE_N + (lane % WN_L) * TN;
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
