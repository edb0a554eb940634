// Catalogue kernel 3.5, parent 3.3: LDS double buffer driven by hand-issued memory
// instructions. Kernel 3.3's tiles and FMA loop (64x64x16 block, 4x4 per thread, A
// transposed in LDS without padding, float4 rows of B) with two LDS buffers per operand.
// Tile t+1 is requested from global memory before the FMAs of tile t and put into the other
// buffer after them; one barrier per tile. The loop body is branch-free: the last iteration
// requests the last tile again (one redundant tile load per block).
//   AMD (gfx9): global_load_dwordx4 issued by inline assembly before the FMAs; after them
//     `s_waitcnt vmcnt(1)` (A's load is back, B's may not be), four ds_write_b32 of the A
//     column into the transposed buffer, `s_waitcnt vmcnt(0)`, one ds_write_b128 of B,
//     `s_waitcnt lgkmcnt(0)`, barrier. The waits tie the loaded registers ("+v"), so the
//     compiler cannot read them early (see gemm_port.h).
//   NVIDIA sm_80+: the native twin, cp.async (4 x 4 B for the A column, 16 B for B) straight
//     into the other buffer, committed as one group; cp.async.wait_group 0 + barrier.
//   Other targets: plain float4 prefetch into registers and C++ stores.
// Block (256,1,1), grid (N/64, M/64). Supported shapes: M, N multiples of 64, K of 16.
#include "gemm_port.h"

constexpr int BM = 64, BN = 64, BK = 16;
constexpr int TM = 4, TN = 4;
constexpr int THREADS = (BM / TM) * (BN / TN);
static_assert(THREADS == 256 && TN == 4, "16x16 threads, float4 rows of B");
static_assert(BM * BK / 4 == THREADS && BK * BN / 4 == THREADS, "one float4 of A and of B");

// The part of one tile a thread moves: a float4 of A (4 consecutive k of row a_m) that goes
// to As[a_k .. a_k+3][a_m] (stride BM floats), and a float4 of B that goes to Bs[b_k][b_n].
#if defined(GM_AMD)
struct TileCopy {
  gm_v4f a, b;
  GM_DEVICE void issue(const float* ga, const float* gb, float*, float*) {
    a = gm_asm_global_load_b128(ga);
    b = gm_asm_global_load_b128(gb);
  }
  GM_DEVICE void land(float* as, float* bs) {
    const unsigned a_lds = gm_lds_offset(as), b_lds = gm_lds_offset(bs);
    gm_asm_wait_vmcnt<1>(a);  // the older load (A) has returned
    gm_asm_ds_write_b32<0 * BM * 4>(a_lds, a.x);
    gm_asm_ds_write_b32<1 * BM * 4>(a_lds, a.y);
    gm_asm_ds_write_b32<2 * BM * 4>(a_lds, a.z);
    gm_asm_ds_write_b32<3 * BM * 4>(a_lds, a.w);
    gm_asm_wait_vmcnt<0>(b);
    gm_asm_ds_write_b128<0>(b_lds, b);
    gm_asm_wait_lgkmcnt<0>();  // the writes are done before the barrier
  }
};
#elif defined(GM_CP_ASYNC)
struct TileCopy {
  GM_DEVICE void issue(const float* ga, const float* gb, float* as, float* bs) {
#pragma unroll
    for (int c = 0; c < 4; ++c) gm_cp_async4(as + c * BM, ga + c);
    gm_cp_async16(bs, gb);
    gm_cp_async_commit();
  }
  GM_DEVICE void land(float*, float*) { gm_cp_async_wait<0>(); }
};
#else
struct TileCopy {
  float4 a, b;
  GM_DEVICE void issue(const float* ga, const float* gb, float*, float*) {
    a = GM_LD4(ga);
    b = GM_LD4(gb);
  }
  GM_DEVICE void land(float* as, float* bs) {
    as[0 * BM] = a.x;
    as[1 * BM] = a.y;
    as[2 * BM] = a.z;
    as[3 * BM] = a.w;
    GM_ST4(bs, b);
  }
};
#endif

// The FMAs of one tile: kernel 3.3's outer-product loop on buffer (as, bs).
GM_DEVICE void fma_tile(const float (*as)[BM], const float (*bs)[BN], int tx, int ty,
                        float (&acc)[TM][TN]) {
#pragma unroll
  for (int k = 0; k < BK; ++k) {
    const float4 b = GM_LD4(&bs[k][tx * TN]);
#pragma unroll
    for (int i = 0; i < TM; ++i) {
      const float a = as[k][ty * TM + i];
      acc[i][0] += a * b.x;
      acc[i][1] += a * b.y;
      acc[i][2] += a * b.z;
      acc[i][3] += a * b.w;
    }
  }
}

GM_KERNEL void sgemm_3_5(int M, int N, int K, float alpha, const float* __restrict__ A,
                         const float* __restrict__ B, float beta, float* __restrict__ C) {
  alignas(16) __shared__ float As[2][BK][BM];  // A transposed: [buffer][k][m]
  alignas(16) __shared__ float Bs[2][BK][BN];  // [buffer][k][n]
  const int tid = threadIdx.x;
  const int tx = tid % (BN / TN), ty = tid / (BN / TN);
  const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
  const int a_m = tid / (BK / 4), a_k = (tid % (BK / 4)) * 4;
  const int b_k = tid / (BN / 4), b_n = (tid % (BN / 4)) * 4;
  const float* ga = A + (m0 + a_m) * K + a_k;
  const float* gb = B + b_k * N + n0 + b_n;

  TileCopy copy;
  copy.issue(ga, gb, &As[0][a_k][a_m], &Bs[0][b_k][b_n]);
  copy.land(&As[0][a_k][a_m], &Bs[0][b_k][b_n]);
  __syncthreads();

  float acc[TM][TN] = {};
  const int tiles = K / BK;
  for (int t = 0; t < tiles; ++t) {
    const int cur = t & 1, nxt = cur ^ 1;
    // The next tile, or on the last iteration the last tile again (landing in the buffer
    // nobody reads any more): the body has no branch, so an in-flight register never
    // meets a branch join, where the compiler could copy it before its wait.
    const int t_next = t + 1 < tiles ? t + 1 : t;
    copy.issue(ga + t_next * BK, gb + t_next * BK * N, &As[nxt][a_k][a_m],
               &Bs[nxt][b_k][b_n]);
    fma_tile(As[cur], Bs[cur], tx, ty, acc);
    copy.land(&As[nxt][a_k][a_m], &Bs[nxt][b_k][b_n]);
    __syncthreads();  // buffer nxt is complete; buffer cur may be overwritten next
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
