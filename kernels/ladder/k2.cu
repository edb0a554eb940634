// Catalogue kernel 2, parent 1: block tile staged in LDS.
// The block computes a 16x16 tile of C, one output per thread; per step of BK = 16 along
// k every thread copies one element of A and one of B into LDS, the block synchronises,
// and each thread accumulates a 16-long dot product out of LDS.
// Block 16x16 threads, grid (N/16, M/16). Supported shapes: M, N, K multiples of 16.
#include "gemm_port.h"

constexpr int BM = 16;  // rows of C per block (= blockDim.y)
constexpr int BN = 16;  // columns of C per block (= blockDim.x)
constexpr int BK = 16;  // k extent of one LDS tile
static_assert(BM == BK && BN == BK, "each thread loads one A and one B element per tile");

GM_KERNEL void sgemm_2(int M, int N, int K, float alpha, const float* __restrict__ A,
                       const float* __restrict__ B, float beta, float* __restrict__ C) {
  __shared__ float As[BM][BK];  // A tile, [m][k]
  __shared__ float Bs[BK][BN];  // B tile, [k][n]
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int row = blockIdx.y * BM + ty;
  const int col = blockIdx.x * BN + tx;
  float acc = 0.0f;
  for (int k0 = 0; k0 < K; k0 += BK) {
    As[ty][tx] = A[row * K + k0 + tx];
    Bs[ty][tx] = B[(k0 + ty) * N + col];
    __syncthreads();
#pragma unroll
    for (int k = 0; k < BK; ++k) acc += As[ty][k] * Bs[k][tx];
    __syncthreads();
  }
  float* c = C + row * N + col;
  *c = beta == 0.0f ? alpha * acc : alpha * acc + beta * *c;  // beta = 0: C is not read
}
