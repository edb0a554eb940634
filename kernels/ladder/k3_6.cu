// Catalogue kernel 3.6, parent 3.5: register double buffer by hand-issued LDS reads (the
// source this id comes from left it unfinished; this version is complete).
// Kernel 3.5 (64x64x16 block, 4x4 per thread, A transposed in LDS without padding, LDS
// double buffer fed by hand-issued global loads, branch-free loop) with the LDS -> register
// step double-buffered too: the thread's float4 fragments of A and B for step k+1 are
// requested before the 16 FMAs of step k, into the other of two register sets.
//   AMD (gfx9): ds_read_b128 x2 by inline assembly per k, then the FMAs of step k, then
//     `s_waitcnt lgkmcnt(0)` that ties ("+v") the two fragments it validates. Global -> LDS
//     as in 3.5 (global_load_dwordx4, s_waitcnt vmcnt(1)/(0), ds_write_b32 x4 + ds_write_b128,
//     s_waitcnt lgkmcnt(0), barrier).
//   NVIDIA: inline PTX ld.shared.v4.f32 (synchronous in PTX: ptxas scoreboards it, no wait
//     needed) and, on sm_80+, cp.async + cp.async.wait_group for global -> LDS; without
//     cp.async, plain register prefetch and C++ stores.
//   Other targets: plain C++ float4 reads.
// Block (256,1,1), grid (N/64, M/64). Supported shapes: M, N multiples of 64, K of 16.
#include "gemm_port.h"

constexpr int BM = 64, BN = 64, BK = 16;
constexpr int TM = 4, TN = 4;
constexpr int THREADS = (BM / TM) * (BN / TN);
static_assert(THREADS == 256 && TM == 4 && TN == 4, "16x16 threads, float4 fragments");
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

// A register fragment: 4 consecutive floats of one LDS row (A column slice or B row slice).
// read_frag<OFF>(p) reads p[OFF .. OFF+3]; wait_frags makes two requested fragments valid;
// pin(acc) keeps the FMAs on acc from moving across it (without it hipcc scheduled the FMAs
// of step k before the reads of step k+1 and gave both steps the same registers: correct,
// but no longer a double buffer).
#if defined(GM_AMD)
typedef gm_v4f Frag;
template <int OFF>
GM_DEVICE Frag read_frag(const float* p) {
  return gm_asm_ds_read_b128<OFF * 4>(gm_lds_offset(p));  // in flight until wait_frags
}
GM_DEVICE void wait_frags(Frag& a, Frag& b) { gm_asm_wait_lgkmcnt<0>(a, b); }
GM_DEVICE void pin(float (&acc)[TM][TN]) { gm_asm_pin_4x4(acc); }
#elif defined(GM_NVIDIA)
typedef float4 Frag;
template <int OFF>
GM_DEVICE Frag read_frag(const float* p) {
  return gm_ld_shared_v4<OFF * 4>(gm_smem_addr(p));
}
GM_DEVICE void wait_frags(Frag&, Frag&) {}
GM_DEVICE void pin(float (&)[TM][TN]) {}
#else
typedef float4 Frag;
template <int OFF>
GM_DEVICE Frag read_frag(const float* p) {
  return GM_LD4(p + OFF);
}
GM_DEVICE void wait_frags(Frag&, Frag&) {}
GM_DEVICE void pin(float (&)[TM][TN]) {}
#endif

GM_DEVICE void fma_4x4(const Frag& a, const Frag& b, float (&acc)[TM][TN]) {
  const float av[TM] = {a.x, a.y, a.z, a.w};
  const float bv[TN] = {b.x, b.y, b.z, b.w};
#pragma unroll
  for (int i = 0; i < TM; ++i)
#pragma unroll
    for (int j = 0; j < TN; ++j) acc[i][j] += av[i] * bv[j];
}

// Step k of one tile: request the fragments of step k+1 into set (k+1)&1, do the FMAs of
// step k from set k&1, then wait for the requested set. Templated on k so that every LDS
// offset is an instruction immediate and every register set a fixed register tuple.
template <int k>
struct KStep {
  GM_DEVICE static void run(const float* as, const float* bs, Frag (&a)[2], Frag (&b)[2],
                            float (&acc)[TM][TN]) {
    if (k + 1 < BK) {
      a[(k + 1) & 1] = read_frag<(k + 1) * BM>(as);
      b[(k + 1) & 1] = read_frag<(k + 1) * BN>(bs);
    }
    pin(acc);  // AMD: the FMAs of step k stay between the reads and the wait of step k+1
    fma_4x4(a[k & 1], b[k & 1], acc);
    pin(acc);
    if (k + 1 < BK) wait_frags(a[(k + 1) & 1], b[(k + 1) & 1]);
    KStep<k + 1>::run(as, bs, a, b, acc);
  }
};
template <>
struct KStep<BK> {
  GM_DEVICE static void run(const float*, const float*, Frag (&)[2], Frag (&)[2],
                            float (&)[TM][TN]) {}
};

// The FMAs of one tile; as = &As[buf][0][ty*TM], bs = &Bs[buf][0][tx*TN].
GM_DEVICE void fma_tile(const float* as, const float* bs, float (&acc)[TM][TN]) {
  Frag a[2], b[2];
  a[0] = read_frag<0>(as);
  b[0] = read_frag<0>(bs);
  wait_frags(a[0], b[0]);
  KStep<0>::run(as, bs, a, b, acc);
}

GM_KERNEL void sgemm_3_6(int M, int N, int K, float alpha, const float* __restrict__ A,
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
    fma_tile(&As[cur][0][ty * TM], &Bs[cur][0][tx * TN], acc);
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
