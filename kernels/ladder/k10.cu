// Catalogue kernel 10 (alias v7): a CUDA-tutorial-style kernel ported unchanged (the seed
// measured 0.74 TFLOP/s on MI100). Written for this project in the style of the CUDA
// tutorials' "2-D block tiling" step, with their warp32 habits kept as they are:
//   * block tile 128x128x8, 256 threads as 16x16, each thread an 8x8 tile of C with
//     contiguous rows ty*8 .. +7 and columns tx*8 .. +7;
//   * float4 global loads; A is stored transposed (As[k][m], no padding), B as Bs[k][n];
//     per k a thread reads its 8 A values and 8 B values as two float4 each, then 64 FMAs;
//   * the B copy is laid out per 32-lane warp: warp w (tid / 32) copies row w of the B tile
//     (32 lanes x float4 = 128 floats), lane l its columns 4l .. 4l+3. The constant 32 is the
//     tutorial's warp size; on a 64-lane wavefront one wave copies two rows, which is still
//     correct;
//   * no __launch_bounds__: nvcc needs none to give this kernel its registers, but hipcc
//     then assumes workgroups of up to 1024 threads and caps the VGPRs to fit them (see the
//     catalogue notes for what gfx908 gets).
// LDS: 2 * 8 * 128 * 4 B = 8192 B. Block (256,1,1), grid (N/128, M/128).
// Supported shapes: M, N multiples of 128, K a multiple of 8.
#include "gemm_port.h"

#define WARP_SIZE 32

namespace {
constexpr int BM = 128, BN = 128, BK = 8;
constexpr int TM = 8, TN = 8;
constexpr int THREADS = (BM / TM) * (BN / TN);
static_assert(THREADS == 256, "16x16 threads");
static_assert(BM * BK / 4 == THREADS && BK * BN / 4 == THREADS, "one float4 of A and of B");
static_assert(BN / 4 == WARP_SIZE && BK * WARP_SIZE == THREADS, "one warp per row of B");
}  // namespace

GM_KERNEL void sgemm_10(int M, int N, int K, float alpha, const float* __restrict__ A,
                        const float* __restrict__ B, float beta, float* __restrict__ C) {
  __shared__ float As[BK * BM];  // A transposed: (m, k) at k * BM + m
  __shared__ float Bs[BK * BN];  // (k, n) at k * BN + n
  const int tid = threadIdx.x;
  const int tx = tid % (BN / TN), ty = tid / (BN / TN);
  const int warp = tid / WARP_SIZE, lane = tid % WARP_SIZE;
  const int a_m = tid / (BK / 4), a_k = (tid % (BK / 4)) * 4;  // A: 2 threads per row
  const int b_k = warp, b_n = lane * 4;                        // B: one warp per row

  A += static_cast<long long>(blockIdx.y) * BM * K;
  B += blockIdx.x * BN;
  C += static_cast<long long>(blockIdx.y) * BM * N + blockIdx.x * BN;

  float acc[TM][TN] = {};
  float a_reg[TM], b_reg[TN];
  for (int k0 = 0; k0 < K; k0 += BK) {
    const float4 va = GM_LD4(&A[static_cast<long long>(a_m) * K + a_k]);
    As[(a_k + 0) * BM + a_m] = va.x;
    As[(a_k + 1) * BM + a_m] = va.y;
    As[(a_k + 2) * BM + a_m] = va.z;
    As[(a_k + 3) * BM + a_m] = va.w;
    GM_ST4(&Bs[b_k * BN + b_n], GM_LD4(&B[static_cast<long long>(b_k) * N + b_n]));
    __syncthreads();
    A += BK;
    B += static_cast<long long>(BK) * N;

    for (int k = 0; k < BK; ++k) {
      for (int i = 0; i < TM; i += 4) {
        const float4 v = GM_LD4(&As[k * BM + ty * TM + i]);
        a_reg[i + 0] = v.x, a_reg[i + 1] = v.y, a_reg[i + 2] = v.z, a_reg[i + 3] = v.w;
      }
      for (int j = 0; j < TN; j += 4) {
        const float4 v = GM_LD4(&Bs[k * BN + tx * TN + j]);
        b_reg[j + 0] = v.x, b_reg[j + 1] = v.y, b_reg[j + 2] = v.z, b_reg[j + 3] = v.w;
      }
      for (int i = 0; i < TM; ++i)
        for (int j = 0; j < TN; ++j) acc[i][j] += a_reg[i] * b_reg[j];
    }
    __syncthreads();
  }
  for (int i = 0; i < TM; ++i)
    for (int j = 0; j < TN; j += 4)
      gm_store_c4(&C[static_cast<long long>(ty * TM + i) * N + tx * TN + j],
                  make_float4(acc[i][j], acc[i][j + 1], acc[i][j + 2], acc[i][j + 3]), alpha,
                  beta);
}
