// Catalogue kernel 6, parent 5: double buffering in plain C++ (no
// assembly). Kernel 5's tiles and FMA loop (64x64x16 block, 4x4 per thread, A transposed,
// rows padded by 4 floats, float4 global loads, LDS -> register arrays per k) with two LDS
// buffers per operand and register prefetch arrays: while the block computes on tile t from
// buffer t&1, each thread loads its float4s of tile t+1 from global memory into a_next[] /
// b_next[], and stores them into the other buffer after the FMAs; one barrier per tile.
// Block (256,1,1), grid (N/64, M/64). Supported shapes: M, N multiples of 64, K of 16.
#include "gemm_port.h"

constexpr int BM = 64, BN = 64, BK = 16;
constexpr int TM = 4, TN = 4;
constexpr int PAD = 4;
constexpr int THREADS = (BM / TM) * (BN / TN);
static_assert(THREADS == 256 && TM == 4 && TN == 4, "16x16 threads, float4 fragments");
static_assert(BM * BK / 4 == THREADS && BK * BN / 4 == THREADS, "one float4 of A and of B");

GM_KERNEL void sgemm_6(int M, int N, int K, float alpha, const float* __restrict__ A,
                       const float* __restrict__ B, float beta, float* __restrict__ C) {
  alignas(16) __shared__ float As[2][BK][BM + PAD];  // A transposed: [buffer][k][m]
  alignas(16) __shared__ float Bs[2][BK][BN + PAD];  // [buffer][k][n]
  const int tid = threadIdx.x;
  const int tx = tid % (BN / TN), ty = tid / (BN / TN);
  const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
  const int a_m = tid / (BK / 4), a_k = (tid % (BK / 4)) * 4;
  const int b_k = tid / (BN / 4), b_n = (tid % (BN / 4)) * 4;
  const float* ga = A + (m0 + a_m) * K + a_k;
  const float* gb = B + b_k * N + n0 + b_n;

  float a_next[4], b_next[4];  // register prefetch arrays
  {
    const float4 va = GM_LD4(ga);
    const float4 vb = GM_LD4(gb);
    a_next[0] = va.x, a_next[1] = va.y, a_next[2] = va.z, a_next[3] = va.w;
    b_next[0] = vb.x, b_next[1] = vb.y, b_next[2] = vb.z, b_next[3] = vb.w;
  }
  for (int c = 0; c < 4; ++c) As[0][a_k + c][a_m] = a_next[c];
  for (int c = 0; c < 4; ++c) Bs[0][b_k][b_n + c] = b_next[c];
  __syncthreads();

  float acc[TM][TN] = {};
  int buf = 0;
  for (int k0 = 0; k0 < K; k0 += BK) {
    const bool more = k0 + BK < K;
    if (more) {  // prefetch tile t+1 into registers
      const float4 va = GM_LD4(ga + k0 + BK);
      const float4 vb = GM_LD4(gb + (k0 + BK) * N);
      a_next[0] = va.x, a_next[1] = va.y, a_next[2] = va.z, a_next[3] = va.w;
      b_next[0] = vb.x, b_next[1] = vb.y, b_next[2] = vb.z, b_next[3] = vb.w;
    }
#pragma unroll
    for (int k = 0; k < BK; ++k) {
      float a[TM], b[TN];
      const float4 av = GM_LD4(&As[buf][k][ty * TM]);
      const float4 bv = GM_LD4(&Bs[buf][k][tx * TN]);
      a[0] = av.x, a[1] = av.y, a[2] = av.z, a[3] = av.w;
      b[0] = bv.x, b[1] = bv.y, b[2] = bv.z, b[3] = bv.w;
#pragma unroll
      for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] += a[i] * b[j];
    }
    if (more) {  // fill the other buffer; it was last read before the previous barrier
      for (int c = 0; c < 4; ++c) As[buf ^ 1][a_k + c][a_m] = a_next[c];
      for (int c = 0; c < 4; ++c) Bs[buf ^ 1][b_k][b_n + c] = b_next[c];
    }
    __syncthreads();
    buf ^= 1;
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
