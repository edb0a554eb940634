// Catalogue kernel 7.2, parent 7: element access through helper functions.
// Kernel 7's tiles, mapping and k-pair register staging, but every operand access goes
// through a small accessor (at(), put()) that takes (row, column, leading dimension) and
// touches ONE float: the float4 global loads and float4 LDS reads of kernel 7 become four
// scalar accesses each, and whether they are merged back into wide accesses is left to the
// compiler (the compile facts' instruction mix shows what it did). The helpers are plain
// __device__ functions (no forceinline): inlining is also the compiler's decision.
// Thread tile 4x4, TK = 2, block tile 64x64x16, 256 threads as 16x16, A transposed in LDS,
// rows padded by 4 floats, k-step loop rolled. LDS: 8704 B. Block (256,1,1), grid (N/64, M/64).
// Supported shapes: M, N multiples of 64, K a multiple of 16.
#include "gemm_port.h"

namespace {
constexpr int BM = 64, BN = 64, BK = 16;
constexpr int TM = 4, TN = 4, TK = 2;
constexpr int PAD = 4;
constexpr int LDA = BM + PAD, LDB = BN + PAD;
constexpr int THREADS = (BM / TM) * (BN / TN);
static_assert(THREADS == 256, "16x16 threads");
static_assert(BM * BK / 4 == THREADS && BK * BN / 4 == THREADS, "four A and four B per thread");

// Element (row, col) of a row-major matrix with leading dimension ld.
__device__ float at(const float* p, long long ld, int row, int col) { return p[row * ld + col]; }
__device__ void put(float* p, int ld, int row, int col, float v) { p[row * ld + col] = v; }
}  // namespace

GM_KERNEL void __launch_bounds__(THREADS)
    sgemm_7_2(int M, int N, int K, float alpha, const float* __restrict__ A,
              const float* __restrict__ B, float beta, float* __restrict__ C) {
  __shared__ float As[BK * LDA];  // A transposed: (m, k) at row k, column m
  __shared__ float Bs[BK * LDB];
  const int tid = threadIdx.x;
  const int tx = tid % (BN / TN), ty = tid / (BN / TN);
  const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
  const int a_m = tid / (BK / 4), a_k = (tid % (BK / 4)) * 4;
  const int b_k = tid / (BN / 4), b_n = (tid % (BN / 4)) * 4;
  const float* Ablk = A + static_cast<long long>(m0) * K;  // block's rows of A
  const float* Bblk = B + n0;                              // block's columns of B

  float acc[TM][TN] = {};
  for (int k0 = 0; k0 < K; k0 += BK) {
#pragma unroll
    for (int c = 0; c < 4; ++c) {
      put(As, LDA, a_k + c, a_m, at(Ablk, K, a_m, k0 + a_k + c));
      put(Bs, LDB, b_k, b_n + c, at(Bblk, N, k0 + b_k, b_n + c));
    }
    __syncthreads();
#pragma unroll 1
    for (int kk = 0; kk < BK; kk += TK) {
      float a[TK][TM], b[TK][TN];
#pragma unroll
      for (int t = 0; t < TK; ++t) {
#pragma unroll
        for (int i = 0; i < TM; ++i) a[t][i] = at(As, LDA, kk + t, ty * TM + i);
#pragma unroll
        for (int j = 0; j < TN; ++j) b[t][j] = at(Bs, LDB, kk + t, tx * TN + j);
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
#pragma unroll
    for (int j = 0; j < TN; ++j)
      gm_store_c1(C + static_cast<long long>(m0 + ty * TM + i) * N + n0 + tx * TN + j,
                  acc[i][j], alpha, beta);
}
