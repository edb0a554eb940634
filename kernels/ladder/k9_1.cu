// Catalogue kernel 9.1 (aliases v8, best_gemm), parent 9: a CUDA-tutorial-style warp-tiled
// kernel, lightly adapted to AMD. Written for this project in the style of the tutorials'
// "warp tiling" step (block tile 128x128x8, 8x8 outputs per thread, float4 loads, fully
// unrolled inner loops), with the two adaptations an MI250 port makes:
//   * the warp tile follows the wavefront: a wave's lanes form a WM_L x WN_L grid with
//     WN_L = 8 and WM_L = GM_WAVE / 8 (8x8 lanes on AMD, 4x8 on NVIDIA, the tutorial's
//     4*TM x 8*TN warp tile), and a wave's region of C is (WM_L*8) x 64: 64x64 (2 x 2 waves)
//     or 32x64 (4 x 2 warps);
//   * __launch_bounds__(256), so hipcc may use more than 64 VGPRs (kernel 10 has none).
// Each lane's 8x8 tile is four 4x4 sub-tiles, one in each quadrant of its wave's region:
// rows row0 + {0, SUB_M} + 0..3, columns col0 + {0, SUB_N} + 0..3 (SUB_M = WM_L*4,
// SUB_N = 32), so a wave's float4 LDS reads of one k cover contiguous runs of As and Bs.
// A is stored transposed (As[k][m]) and B as Bs[k][n], both unpadded, one buffer.
// LDS: 2 * 8 * 128 * 4 B = 8192 B. Block (256,1,1), grid (N/128, M/128).
// Supported shapes: M, N multiples of 128, K a multiple of 8.
#include "gemm_port.h"

namespace {
constexpr int BM = 128, BN = 128, BK = 8;
constexpr int TM = 8, TN = 8;
constexpr int THREADS = 256;
constexpr int WN_L = 8, WM_L = GM_WAVE / WN_L;         // warp tile, lanes
constexpr int WAVE_M = WM_L * TM, WAVE_N = WN_L * TN;  // a wave's region of C
constexpr int SUB_M = WAVE_M / 2, SUB_N = WAVE_N / 2;  // quadrant of that region
constexpr int WAVES_N = BN / WAVE_N;
static_assert(WM_L * WN_L == GM_WAVE && BM % WAVE_M == 0 && BN % WAVE_N == 0, "waves tile");
static_assert((BM / WAVE_M) * WAVES_N * GM_WAVE == THREADS, "one region per wave");
static_assert(BM * BK / 4 == THREADS && BK * BN / 4 == THREADS, "one float4 of A and of B");
}  // namespace

GM_KERNEL void __launch_bounds__(THREADS)
    sgemm_9_1(int M, int N, int K, float alpha, const float* __restrict__ A,
              const float* __restrict__ B, float beta, float* __restrict__ C) {
  __shared__ float As[BK * BM];  // A transposed: (m, k) at k * BM + m
  __shared__ float Bs[BK * BN];  // (k, n) at k * BN + n
  const int tid = threadIdx.x;
  const int wave = tid / GM_WAVE, lane = tid % GM_WAVE;
  const int row0 = (wave / WAVES_N) * WAVE_M + (lane / WN_L) * 4;
  const int col0 = (wave % WAVES_N) * WAVE_N + (lane % WN_L) * 4;
  const int a_m = tid / (BK / 4), a_k = (tid % (BK / 4)) * 4;
  const int b_k = tid / (BN / 4), b_n = (tid % (BN / 4)) * 4;

  A += static_cast<long long>(blockIdx.y) * BM * K;
  B += blockIdx.x * BN;
  C += static_cast<long long>(blockIdx.y) * BM * N + blockIdx.x * BN;

  float acc[TM][TN] = {};
  for (int k0 = 0; k0 < K; k0 += BK) {
    const float4 va = GM_LD4(&A[static_cast<long long>(a_m) * K + k0 + a_k]);
    As[(a_k + 0) * BM + a_m] = va.x;
    As[(a_k + 1) * BM + a_m] = va.y;
    As[(a_k + 2) * BM + a_m] = va.z;
    As[(a_k + 3) * BM + a_m] = va.w;
    GM_ST4(&Bs[b_k * BN + b_n], GM_LD4(&B[static_cast<long long>(k0 + b_k) * N + b_n]));
    __syncthreads();
#pragma unroll
    for (int k = 0; k < BK; ++k) {
      float a[TM], b[TN];
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const float4 va4 = GM_LD4(&As[k * BM + row0 + h * SUB_M]);
        const float4 vb4 = GM_LD4(&Bs[k * BN + col0 + h * SUB_N]);
        a[4 * h + 0] = va4.x, a[4 * h + 1] = va4.y, a[4 * h + 2] = va4.z, a[4 * h + 3] = va4.w;
        b[4 * h + 0] = vb4.x, b[4 * h + 1] = vb4.y, b[4 * h + 2] = vb4.z, b[4 * h + 3] = vb4.w;
      }
#pragma unroll
      for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
    }
    __syncthreads();
  }
  // acc[4*h + r][4*g + c] is C(row0 + h*SUB_M + r, col0 + g*SUB_N + c).
#pragma unroll
  for (int i = 0; i < TM; ++i)
#pragma unroll
    for (int g = 0; g < 2; ++g)
      gm_store_c4(&C[static_cast<long long>(row0 + (i / 4) * SUB_M + i % 4) * N + col0 +
                     g * SUB_N],
                  make_float4(acc[i][4 * g], acc[i][4 * g + 1], acc[i][4 * g + 2],
                              acc[i][4 * g + 3]),
                  alpha, beta);
}
