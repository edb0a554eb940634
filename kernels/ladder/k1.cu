// Catalogue kernel 1: the naive SGEMM.
// One thread per element of C; each thread reads a row of A and a column of B straight
// from global memory (no LDS). Block 16x16 threads, grid (ceil(N/16), ceil(M/16)).
// Row-major: A is MxK (lda = K), B is KxN (ldb = N), C is MxN (ldc = N).
// Any M, N, K >= 1 (bounds checked); int indexing: M*K, K*N, M*N < 2^31.
#include "gemm_port.h"

constexpr int BM = 16;  // rows of C per block (blockDim.y)
constexpr int BN = 16;  // columns of C per block (blockDim.x)

GM_KERNEL void sgemm_1(int M, int N, int K, float alpha, const float* __restrict__ A,
                       const float* __restrict__ B, float beta, float* __restrict__ C) {
  const int col = blockIdx.x * BN + threadIdx.x;
  const int row = blockIdx.y * BM + threadIdx.y;
  if (row >= M || col >= N) return;
  float acc = 0.0f;
  for (int k = 0; k < K; ++k) acc += A[row * K + k] * B[k * N + col];
  float* c = C + row * N + col;
  *c = beta == 0.0f ? alpha * acc : alpha * acc + beta * *c;  // beta = 0: C is not read
}
