// Catalogue kernel 3.4, parent 3.3: split loaders. The first half of the threads (0..127)
// load the A tile, the second half (128..255) the B tile, two float4 each; everything else
// is kernel 3.3 (64x64x16 block, 4x4 per thread, A transposed in LDS, float4 rows of B).
// On wave64 the split falls on wave boundaries (waves 0-1 load A, 2-3 load B); on warp32
// warps 0-3 load A and 4-7 load B: no thread diverges inside a wave.
// Block (256,1,1), grid (N/64, M/64). Supported shapes: M, N multiples of 64, K of 16.
#include "gemm_port.h"

constexpr int BM = 64, BN = 64, BK = 16;
constexpr int TM = 4, TN = 4;
constexpr int THREADS = (BM / TM) * (BN / TN);
constexpr int HALF = THREADS / 2;
constexpr int LOADS = BM * BK / 4 / HALF;  // float4 loads per loader thread
static_assert(THREADS == 256 && TN == 4, "16x16 threads, float4 rows of B");
static_assert(BM * BK == BK * BN && LOADS * HALF * 4 == BM * BK, "equal A and B shares");

GM_KERNEL void sgemm_3_4(int M, int N, int K, float alpha, const float* __restrict__ A,
                         const float* __restrict__ B, float beta, float* __restrict__ C) {
  alignas(16) __shared__ float As[BK][BM];  // A transposed: [k][m]
  alignas(16) __shared__ float Bs[BK][BN];  // [k][n]
  const int tid = threadIdx.x;
  const int tx = tid % (BN / TN), ty = tid / (BN / TN);
  const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
  const bool loads_a = tid < HALF;
  const int u = loads_a ? tid : tid - HALF;  // index among the loaders of one operand
  float acc[TM][TN] = {};
  for (int k0 = 0; k0 < K; k0 += BK) {
    if (loads_a) {
#pragma unroll
      for (int r = 0; r < LOADS; ++r) {
        const int f = u + r * HALF;  // float4 number in the A tile
        const int m = f / (BK / 4), k = (f % (BK / 4)) * 4;
        const float4 v = GM_LD4(A + (m0 + m) * K + k0 + k);
        As[k + 0][m] = v.x;
        As[k + 1][m] = v.y;
        As[k + 2][m] = v.z;
        As[k + 3][m] = v.w;
      }
    } else {
#pragma unroll
      for (int r = 0; r < LOADS; ++r) {
        const int f = u + r * HALF;  // float4 number in the B tile
        const int k = f / (BN / 4), n = (f % (BN / 4)) * 4;
        GM_ST4(&Bs[k][n], GM_LD4(B + (k0 + k) * N + n0 + n));
      }
    }
    __syncthreads();
#pragma unroll
    for (int k = 0; k < BK; ++k) {
      const float4 b = GM_LD4(&Bs[k][tx * TN]);
#pragma unroll
      for (int i = 0; i < TM; ++i) {
        const float a = As[k][ty * TM + i];
        acc[i][0] += a * b.x;
        acc[i][1] += a * b.y;
        acc[i][2] += a * b.z;
        acc[i][3] += a * b.w;
      }
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < TM; ++i) {
    float* c = C + (m0 + ty * TM + i) * N + n0 + tx * TN;
    float4 r = make_float4(alpha * acc[i][0], alpha * acc[i][1], alpha * acc[i][2],
                           alpha * acc[i][3]);
    if (beta != 0.0f) {
      const float4 old = GM_LD4(c);
      r.x += beta * old.x;
      r.y += beta * old.y;
      r.z += beta * old.z;
      r.w += beta * old.w;
    }
    GM_ST4(c, r);
  }
}
