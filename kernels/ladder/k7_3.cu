// Catalogue kernel 7.3, parent 7: inner FMA loop fully unrolled, with the LDS stores of the
// next tile interleaved with the FMAs by hand.
// Kernel 7's tiles (64x64x16, thread tile 4x4, TK = 2, A transposed, rows padded by 4) with
// one LDS buffer, and per tile:
//   1. the float4s of the NEXT tile are requested from global memory into registers
//      (va, vb) before any FMA, so their latency hides behind the whole tile's arithmetic;
//   2. the BK/TK = 8 steps are fully unrolled; steps 0..6 read their operands from LDS and
//      do 32 FMAs each;
//   3. the last step reads its operands, then a barrier (after it no thread reads this tile
//      any more: each holds its last operands in registers), then its 32 FMAs are written
//      out row by row with one LDS store of the next tile after each row (A's four
//      transposed scalars, then B's float4): the store latency overlaps the FMAs;
//   4. a barrier, and the next tile is in LDS.
// The last tile requests a copy of itself (k clamped) so the loop body has no branch; that
// copy is stored but never read.
// LDS: 8704 B. Block (256,1,1), grid (N/64, M/64).
// Supported shapes: M, N multiples of 64, K a multiple of 16.
#include "gemm_port.h"

namespace {
constexpr int BM = 64, BN = 64, BK = 16;
constexpr int TM = 4, TN = 4, TK = 2;
constexpr int PAD = 4;
constexpr int LDA = BM + PAD, LDB = BN + PAD;
constexpr int THREADS = (BM / TM) * (BN / TN);
constexpr int STEPS = BK / TK;
static_assert(THREADS == 256 && TM == 4 && TN == 4, "16x16 threads, float4 fragments");
static_assert(BM * BK / 4 == THREADS && BK * BN / 4 == THREADS, "one float4 of A and of B");

// Operands of one step (k = kk .. kk+TK-1): thread's A column slice and B row slice.
GM_DEVICE void load_step(const float* As, const float* Bs, int kk, int tx, int ty,
                         float (&a)[TK][TM], float (&b)[TK][TN]) {
#pragma unroll
  for (int t = 0; t < TK; ++t) {
    const float4 av = GM_LD4(&As[(kk + t) * LDA + ty * TM]);
    const float4 bv = GM_LD4(&Bs[(kk + t) * LDB + tx * TN]);
    a[t][0] = av.x, a[t][1] = av.y, a[t][2] = av.z, a[t][3] = av.w;
    b[t][0] = bv.x, b[t][1] = bv.y, b[t][2] = bv.z, b[t][3] = bv.w;
  }
}

// The FMAs of one step for output row i.
GM_DEVICE void fma_row(const float (&a)[TK][TM], const float (&b)[TK][TN], int i,
                       float (&acc)[TM][TN]) {
#pragma unroll
  for (int t = 0; t < TK; ++t)
#pragma unroll
    for (int j = 0; j < TN; ++j) acc[i][j] = fmaf(a[t][i], b[t][j], acc[i][j]);
}
}  // namespace

GM_KERNEL void __launch_bounds__(THREADS)
    sgemm_7_3(int M, int N, int K, float alpha, const float* __restrict__ A,
              const float* __restrict__ B, float beta, float* __restrict__ C) {
  alignas(16) __shared__ float As[BK * LDA];  // A transposed: (m, k) at k * LDA + m
  alignas(16) __shared__ float Bs[BK * LDB];
  const int tid = threadIdx.x;
  const int tx = tid % (BN / TN), ty = tid / (BN / TN);
  const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
  const int a_m = tid / (BK / 4), a_k = (tid % (BK / 4)) * 4;
  const int b_k = tid / (BN / 4), b_n = (tid % (BN / 4)) * 4;
  const float* ga = A + static_cast<long long>(m0 + a_m) * K + a_k;
  const float* gb = B + static_cast<long long>(b_k) * N + n0 + b_n;
  float* sa = &As[a_k * LDA + a_m];  // this thread's store slots
  float* sb = &Bs[b_k * LDB + b_n];

  float4 va = GM_LD4(ga), vb = GM_LD4(gb);  // tile 0
  sa[0 * LDA] = va.x, sa[1 * LDA] = va.y, sa[2 * LDA] = va.z, sa[3 * LDA] = va.w;
  GM_ST4(sb, vb);
  __syncthreads();

  float acc[TM][TN] = {};
  for (int k0 = 0; k0 < K; k0 += BK) {
    const int k_next = k0 + BK < K ? k0 + BK : k0;
    va = GM_LD4(ga + k_next);
    vb = GM_LD4(gb + static_cast<long long>(k_next) * N);
    float a[TK][TM], b[TK][TN];
#pragma unroll
    for (int s = 0; s < STEPS - 1; ++s) {
      load_step(As, Bs, s * TK, tx, ty, a, b);
#pragma unroll
      for (int i = 0; i < TM; ++i) fma_row(a, b, i, acc);
    }
    load_step(As, Bs, (STEPS - 1) * TK, tx, ty, a, b);
    __syncthreads();  // all reads of this tile are done: its LDS may be overwritten
    fma_row(a, b, 0, acc);
    sa[0 * LDA] = va.x;
    GM_ST4(sb, vb);
    fma_row(a, b, 1, acc);
    sa[1 * LDA] = va.y;
    fma_row(a, b, 2, acc);
    sa[2 * LDA] = va.z;
    fma_row(a, b, 3, acc);
    sa[3 * LDA] = va.w;
    __syncthreads();  // the next tile is in LDS
  }
#pragma unroll
  for (int i = 0; i < TM; ++i)
    gm_store_c4(C + static_cast<long long>(m0 + ty * TM + i) * N + n0 + tx * TN,
                make_float4(acc[i][0], acc[i][1], acc[i][2], acc[i][3]), alpha, beta);
}
