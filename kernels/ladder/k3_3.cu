// Catalogue kernel 3.3, parent 3.2: A stored transposed in LDS, float4 loads.
// Block tile 64x64, BK = 16, 256 threads as 16x16, 4x4 outputs per thread (rows ty*4 .. +3,
// columns tx*4 .. +3). Each thread loads one float4 of A (row a_m, k = a_k .. +3) and one
// float4 of B per tile. A goes to LDS transposed, As[k][m], so the four A values a thread
// needs per k are contiguous; B stays [k][n]. Outer-product FMA loop as in 3.2: per k one
// float4 read of a row of B, and per row i one A value As[k][ty*4+i].
// Block (256,1,1), grid (N/64, M/64). Supported shapes: M, N multiples of 64, K of 16
// (16-byte aligned A, B, C).
#include "gemm_port.h"

constexpr int BM = 64, BN = 64, BK = 16;
constexpr int TM = 4, TN = 4;
constexpr int THREADS = (BM / TM) * (BN / TN);
static_assert(THREADS == 256 && TN == 4, "16x16 threads, float4 rows of B");
static_assert(BM * BK / 4 == THREADS && BK * BN / 4 == THREADS, "one float4 of A and of B");

GM_KERNEL void sgemm_3_3(int M, int N, int K, float alpha, const float* __restrict__ A,
                         const float* __restrict__ B, float beta, float* __restrict__ C) {
  alignas(16) __shared__ float As[BK][BM];  // A transposed: [k][m]
  alignas(16) __shared__ float Bs[BK][BN];  // [k][n]
  const int tid = threadIdx.x;
  const int tx = tid % (BN / TN), ty = tid / (BN / TN);
  const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
  const int a_m = tid / (BK / 4), a_k = (tid % (BK / 4)) * 4;  // this thread's float4 of A
  const int b_k = tid / (BN / 4), b_n = (tid % (BN / 4)) * 4;  // this thread's float4 of B
  const float* ga = A + (m0 + a_m) * K + a_k;
  const float* gb = B + b_k * N + n0 + b_n;
  float acc[TM][TN] = {};
  for (int k0 = 0; k0 < K; k0 += BK) {
    const float4 va = GM_LD4(ga + k0);
    const float4 vb = GM_LD4(gb + k0 * N);
    As[a_k + 0][a_m] = va.x;
    As[a_k + 1][a_m] = va.y;
    As[a_k + 2][a_m] = va.z;
    As[a_k + 3][a_m] = va.w;
    GM_ST4(&Bs[b_k][b_n], vb);
    __syncthreads();
#pragma unroll
    for (int k = 0; k < BK; ++k) {
      const float4 b = GM_LD4(&Bs[k][tx * TN]);  // a row of B
#pragma unroll
      for (int i = 0; i < TM; ++i) {
        const float a = As[k][ty * TM + i];  // one A value
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
    if (beta != 0.0f) {  // beta = 0: C is not read
      const float4 old = GM_LD4(c);
      r.x += beta * old.x;
      r.y += beta * old.y;
      r.z += beta * old.z;
      r.w += beta * old.w;
    }
    GM_ST4(c, r);
  }
}
