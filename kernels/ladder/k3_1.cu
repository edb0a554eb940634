// Catalogue kernel 3.1, parent 3: inner-product form with one-dimensional
// register arrays. Same tiles and loads as kernel 3 (64x64x16 block, 4x4 per thread, scalar
// global loads, A [m][k] and B [k][n] in LDS). The FMA loop changes: for each output (i, j)
// the thread copies a row of the A tile, a[BK], and a column of the B tile, b[BK], into
// register arrays and accumulates their inner product over k.
// Block (256,1,1), grid (N/64, M/64). Supported shapes: M, N multiples of 64, K of 16.
#include "gemm_port.h"

constexpr int BM = 64, BN = 64, BK = 16;
constexpr int TM = 4, TN = 4;
constexpr int THREADS = (BM / TM) * (BN / TN);
static_assert(THREADS == 256, "16x16 threads");
static_assert((BM * BK) % THREADS == 0 && (BK * BN) % THREADS == 0, "whole loads per thread");

GM_KERNEL void sgemm_3_1(int M, int N, int K, float alpha, const float* __restrict__ A,
                         const float* __restrict__ B, float beta, float* __restrict__ C) {
  __shared__ float As[BM][BK];  // [m][k]
  __shared__ float Bs[BK][BN];  // [k][n]
  const int tid = threadIdx.x;
  const int tx = tid % (BN / TN), ty = tid / (BN / TN);
  const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
  const float* Ablk = A + m0 * K;
  const float* Bblk = B + n0;
  float acc[TM][TN] = {};
  for (int k0 = 0; k0 < K; k0 += BK) {
#pragma unroll
    for (int r = 0; r < BM * BK / THREADS; ++r) {
      const int e = tid + r * THREADS;
      As[e / BK][e % BK] = Ablk[(e / BK) * K + k0 + e % BK];
    }
#pragma unroll
    for (int r = 0; r < BK * BN / THREADS; ++r) {
      const int e = tid + r * THREADS;
      Bs[e / BN][e % BN] = Bblk[(k0 + e / BN) * N + e % BN];
    }
    __syncthreads();
#pragma unroll
    for (int i = 0; i < TM; ++i) {
      float a[BK];  // row ty*TM+i of the A tile
#pragma unroll
      for (int k = 0; k < BK; ++k) a[k] = As[ty * TM + i][k];
#pragma unroll
      for (int j = 0; j < TN; ++j) {
        float b[BK];  // column tx*TN+j of the B tile
#pragma unroll
        for (int k = 0; k < BK; ++k) b[k] = Bs[k][tx * TN + j];
#pragma unroll
        for (int k = 0; k < BK; ++k) acc[i][j] += a[k] * b[k];
      }
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < TM; ++i)
#pragma unroll
    for (int j = 0; j < TN; ++j) {
      float* c = C + (m0 + ty * TM + i) * N + n0 + tx * TN + j;
      *c = beta == 0.0f ? alpha * acc[i][j] : alpha * acc[i][j] + beta * *c;
    }
}
