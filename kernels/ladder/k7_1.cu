// Catalogue kernel 7.1, parent 7: multi-dimensional LDS arrays.
// Kernel 7 unchanged except that the LDS tiles are declared as 2-D arrays
// (As[BK][BM + PAD], Bs[BK][BN + PAD]) and indexed as As[k][m], Bs[k][n], leaving the address
// arithmetic to the compiler instead of kernel 7's hand-written k * LD + m.
// Thread tile 4x4, TK = 2, block tile 64x64x16, 256 threads as 16x16, A transposed in LDS,
// rows padded by 4 floats, float4 global and LDS accesses, k-step loop rolled.
// LDS: 8704 B. Block (256,1,1), grid (N/64, M/64).
// Supported shapes: M, N multiples of 64, K a multiple of 16.
#include "gemm_port.h"

namespace {
constexpr int BM = 64, BN = 64, BK = 16;
constexpr int TM = 4, TN = 4, TK = 2;
constexpr int PAD = 4;                          // floats of row padding
constexpr int LDA = BM + PAD, LDB = BN + PAD;   // LDS row strides, floats
constexpr int THREADS = (BM / TM) * (BN / TN);
static_assert(THREADS == 256 && TM == 4 && TN == 4, "16x16 threads, float4 fragments");
static_assert(BM * BK / 4 == THREADS && BK * BN / 4 == THREADS, "one float4 of A and of B");
static_assert(BK % TK == 0 && PAD % 4 == 0, "whole steps, 16-byte aligned LDS rows");
}  // namespace

GM_KERNEL void __launch_bounds__(THREADS)
    sgemm_7_1(int M, int N, int K, float alpha, const float* __restrict__ A,
              const float* __restrict__ B, float beta, float* __restrict__ C) {
  alignas(16) __shared__ float As[BK][LDA];  // A transposed: As[k][m]
  alignas(16) __shared__ float Bs[BK][LDB];  // Bs[k][n]
  const int tid = threadIdx.x;
  const int tx = tid % (BN / TN), ty = tid / (BN / TN);
  const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
  // Global -> LDS copy: A[m0 + a_m][k0 + a_k .. +3] and B[k0 + b_k][n0 + b_n .. +3].
  const int a_m = tid / (BK / 4), a_k = (tid % (BK / 4)) * 4;
  const int b_k = tid / (BN / 4), b_n = (tid % (BN / 4)) * 4;
  const float* ga = A + static_cast<long long>(m0 + a_m) * K + a_k;
  const float* gb = B + static_cast<long long>(b_k) * N + n0 + b_n;

  float acc[TM][TN] = {};
  for (int k0 = 0; k0 < K; k0 += BK) {
    const float4 va = GM_LD4(ga + k0);
    const float4 vb = GM_LD4(gb + static_cast<long long>(k0) * N);
    As[a_k + 0][a_m] = va.x;
    As[a_k + 1][a_m] = va.y;
    As[a_k + 2][a_m] = va.z;
    As[a_k + 3][a_m] = va.w;
    GM_ST4(&Bs[b_k][b_n], vb);
    __syncthreads();
#pragma unroll 1
    for (int kk = 0; kk < BK; kk += TK) {
      float a[TK][TM], b[TK][TN];  // LDS -> registers, TK k-slices at once
#pragma unroll
      for (int t = 0; t < TK; ++t) {
        const float4 av = GM_LD4(&As[kk + t][ty * TM]);
        const float4 bv = GM_LD4(&Bs[kk + t][tx * TN]);
        a[t][0] = av.x, a[t][1] = av.y, a[t][2] = av.z, a[t][3] = av.w;
        b[t][0] = bv.x, b[t][1] = bv.y, b[t][2] = bv.z, b[t][3] = bv.w;
      }
#pragma unroll
      for (int t = 0; t < TK; ++t)
#pragma unroll
        for (int i = 0; i < TM; ++i)
#pragma unroll
          for (int j = 0; j < TN; ++j) acc[i][j] = fmaf(a[t][i], b[t][j], acc[i][j]);
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < TM; ++i)
    gm_store_c4(C + static_cast<long long>(m0 + ty * TM + i) * N + n0 + tx * TN,
                make_float4(acc[i][0], acc[i][1], acc[i][2], acc[i][3]), alpha, beta);
}
