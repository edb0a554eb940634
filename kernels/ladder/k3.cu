// Catalogue kernel 3, parent 2: a 4x4 register tile of C per
// thread, operands read straight from LDS.
// Block tile 64x64, BK = 16, 256 threads as 16x16; thread (tx, ty) owns rows ty*4 .. +3 and
// columns tx*4 .. +3 of the block tile. Global loads are scalar (4 of A and 4 of B per
// thread per tile); A is kept as [m][k] and B as [k][n] in LDS. The FMA loop names both
// operands as LDS elements: acc[i][j] += As[row i][k] * Bs[k][col j].
// Block (256,1,1), grid (N/64, M/64). Supported shapes: M, N multiples of 64, K of 16.
#include "gemm_port.h"

constexpr int BM = 64, BN = 64, BK = 16;  // block tile
constexpr int TM = 4, TN = 4;             // thread tile
constexpr int THREADS = (BM / TM) * (BN / TN);
static_assert(THREADS == 256, "16x16 threads");
static_assert((BM * BK) % THREADS == 0 && (BK * BN) % THREADS == 0, "whole loads per thread");

GM_KERNEL void sgemm_3(int M, int N, int K, float alpha, const float* __restrict__ A,
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
      const int e = tid + r * THREADS;  // consecutive threads: consecutive k of one row
      As[e / BK][e % BK] = Ablk[(e / BK) * K + k0 + e % BK];
    }
#pragma unroll
    for (int r = 0; r < BK * BN / THREADS; ++r) {
      const int e = tid + r * THREADS;  // consecutive threads: consecutive n of one row
      Bs[e / BN][e % BN] = Bblk[(k0 + e / BN) * N + e % BN];
    }
    __syncthreads();
#pragma unroll
    for (int k = 0; k < BK; ++k)
#pragma unroll
      for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] += As[ty * TM + i][k] * Bs[k][tx * TN + j];
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
