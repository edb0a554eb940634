// Catalogue kernel 5, parent 4: operands copied from LDS
// into register arrays before the FMA loop. Kernel 4 (64x64x16 block, 4x4 per thread, A
// transposed, rows padded by 4 floats, float4 global loads) with the per-k step split in
// two: first the thread's A column slice and B row slice are read as float4 into a[4] and
// b[4], then the 16 FMAs acc[i][j] += a[i] * b[j] use registers only.
// Block (256,1,1), grid (N/64, M/64). Supported shapes: M, N multiples of 64, K of 16.
#include "gemm_port.h"

constexpr int BM = 64, BN = 64, BK = 16;
constexpr int TM = 4, TN = 4;
constexpr int PAD = 4;
constexpr int THREADS = (BM / TM) * (BN / TN);
static_assert(THREADS == 256 && TM == 4 && TN == 4, "16x16 threads, float4 fragments");
static_assert(BM * BK / 4 == THREADS && BK * BN / 4 == THREADS, "one float4 of A and of B");

GM_KERNEL void sgemm_5(int M, int N, int K, float alpha, const float* __restrict__ A,
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
      float a[TM], b[TN];  // LDS -> registers
      const float4 av = GM_LD4(&As[k][ty * TM]);
      const float4 bv = GM_LD4(&Bs[k][tx * TN]);
      a[0] = av.x, a[1] = av.y, a[2] = av.z, a[3] = av.w;
      b[0] = bv.x, b[1] = bv.y, b[2] = bv.z, b[3] = bv.w;
#pragma unroll
      for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] += a[i] * b[j];
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
