// Catalogue kernel 4, parent 3.3: LDS padding against bank conflicts, float4 reads.
// Kernel 3.3 with every LDS row padded by PAD = 4 floats: As[BK][BM+4], Bs[BK][BN+4].
// Without padding the transposed A store puts the four k rows a wave writes 256 B apart,
// i.e. on the same bank; a row stride of 68 floats moves them to different banks. PAD = 4
// keeps every row 16-byte aligned, so the float4 LDS reads stay single ds_read_b128 / LDS.128.
// Block (256,1,1), grid (N/64, M/64). Supported shapes: M, N multiples of 64, K of 16.
#include "gemm_port.h"

constexpr int BM = 64, BN = 64, BK = 16;
constexpr int TM = 4, TN = 4;
constexpr int PAD = 4;  // floats of padding per LDS row
constexpr int THREADS = (BM / TM) * (BN / TN);
static_assert(THREADS == 256 && TN == 4, "16x16 threads, float4 rows of B");
static_assert(BM * BK / 4 == THREADS && BK * BN / 4 == THREADS, "one float4 of A and of B");
static_assert(PAD % 4 == 0, "rows stay 16-byte aligned");

GM_KERNEL void sgemm_4(int M, int N, int K, float alpha, const float* __restrict__ A,
                       const float* __restrict__ B, float beta, float* __restrict__ C) {
  alignas(16) __shared__ float As[BK][BM + PAD];  // A transposed: [k][m]
  alignas(16) __shared__ float Bs[BK][BN + PAD];  // [k][n]
  const int tid = threadIdx.x;
  const int tx = tid % (BN / TN), ty = tid / (BN / TN);
  const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
  const int a_m = tid / (BK / 4), a_k = (tid % (BK / 4)) * 4;
  const int b_k = tid / (BN / 4), b_n = (tid % (BN / 4)) * 4;
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
