// Catalogue kernel 7.6, parent 7.5: register double buffer in assembly (finished).
// Kernel 7.5 (64x64x16 block, thread tile 4x4, TK = 2, A transposed, rows padded by 4, one
// LDS buffer, next tile prefetched into registers and stored during the last step) with the
// LDS -> register reads of the double buffer hand-issued:
//   AMD (gfx9, device compile): per step four ds_read_b128 (A for k, k+1, then B for k, k+1)
//     of the NEXT step are issued by inline assembly with immediate byte offsets, the FMAs of
//     the current step follow, then `s_waitcnt lgkmcnt(2)` validates the two A reads and
//     `s_waitcnt lgkmcnt(0)` the two B reads. The waits name the destination registers as
//     "+v" operands. That tie is the fix of the unfinished original, whose ds_read_b32 "read
//     wrong lanes": an inline-asm load is opaque to the compiler, which neither counts it
//     in lgkmcnt nor waits for it, and takes its "=v" output as valid as soon as the asm
//     statement ends; any read or copy of that register before a wait the compiler knows
//     about sees the old contents, in some lanes or waves and not others, as timing goes.
//     Tied outputs make the wait, not the ds_read, the definition the compiler sees.
//     Empty asm fences on the accumulators keep each step's FMAs between its reads and its
//     waits; without them the scheduler hoists the FMAs and folds the two register sets
//     into one (as it does to kernel 7.5).
//     The next tile's global loads are hand-issued too (global_load_dwordx4 at the top of
//     the tile, `s_waitcnt vmcnt(1)` / `vmcnt(0)` tied to the registers before the stores):
//     hipcc sinks kernel 7.5's plain C++ prefetch to just before its stores, after the last
//     step, where its latency is no longer hidden.
//   NVIDIA (device compile): the same schedule with inline-PTX ld.shared.v4.f32; PTX loads
//     are ordinary register definitions (the hardware scoreboard and ptxas handle the
//     wait), so there is no waitcnt to get wrong.
//   Other targets: kernel 7.5's plain float4 reads and prefetch.
// The step loop is unrolled by template recursion (Steps<S>), so every LDS offset is an
// instruction immediate.
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
static_assert(THREADS == 256 && TM == 4 && TN == 4 && TK == 2, "16x16 threads, 2 x float4");
static_assert(BM * BK / 4 == THREADS && BK * BN / 4 == THREADS, "one float4 of A and of B");

#if defined(GM_AMD_ASM)
typedef gm_v4f V4;
#else
typedef float4 V4;
#endif

// Operands of one step: a[t] = A(ty*4 .. +3, k+t), b[t] = B(k+t, tx*4 .. +3).
struct Frag {
  V4 a[TK], b[TK];
};

// Where a thread reads: LDS byte addresses (assembly paths) and pointers (plain path) of its
// A column slice and B row slice at k = 0.
struct ReadBase {
  unsigned a_addr, b_addr;
  const float* a_ptr;
  const float* b_ptr;
};

// Issue the reads of step S into f. On AMD they are still in flight when this returns.
template <int S>
GM_DEVICE void request(Frag& f, const ReadBase& r) {
  constexpr int k = S * TK;
#if defined(GM_AMD_ASM)
  f.a[0] = gm_asm_ds_read_b128<(k + 0) * LDA * 4>(r.a_addr);
  f.a[1] = gm_asm_ds_read_b128<(k + 1) * LDA * 4>(r.a_addr);
  f.b[0] = gm_asm_ds_read_b128<(k + 0) * LDB * 4>(r.b_addr);
  f.b[1] = gm_asm_ds_read_b128<(k + 1) * LDB * 4>(r.b_addr);
#elif defined(GM_NVIDIA) && defined(__CUDA_ARCH__)
  f.a[0] = gm_ld_shared_v4<(k + 0) * LDA * 4>(r.a_addr);
  f.a[1] = gm_ld_shared_v4<(k + 1) * LDA * 4>(r.a_addr);
  f.b[0] = gm_ld_shared_v4<(k + 0) * LDB * 4>(r.b_addr);
  f.b[1] = gm_ld_shared_v4<(k + 1) * LDB * 4>(r.b_addr);
#else
  f.a[0] = GM_LD4(r.a_ptr + (k + 0) * LDA);
  f.a[1] = GM_LD4(r.a_ptr + (k + 1) * LDA);
  f.b[0] = GM_LD4(r.b_ptr + (k + 0) * LDB);
  f.b[1] = GM_LD4(r.b_ptr + (k + 1) * LDB);
#endif
}

// Make f's registers valid (AMD: the four ds_reads were issued A, A, B, B).
GM_DEVICE void wait(Frag& f) {
#if defined(GM_AMD_ASM)
  gm_asm_wait_lgkmcnt<2>(f.a[0], f.a[1]);
  gm_asm_wait_lgkmcnt<0>(f.b[0], f.b[1]);
#else
  (void)f;
#endif
}

GM_DEVICE void fma_row(const Frag& f, int i, float (&acc)[TM][TN]) {
#pragma unroll
  for (int t = 0; t < TK; ++t) {
    const float a = i == 0 ? f.a[t].x : i == 1 ? f.a[t].y : i == 2 ? f.a[t].z : f.a[t].w;
    acc[i][0] = fmaf(a, f.b[t].x, acc[i][0]);
    acc[i][1] = fmaf(a, f.b[t].y, acc[i][1]);
    acc[i][2] = fmaf(a, f.b[t].z, acc[i][2]);
    acc[i][3] = fmaf(a, f.b[t].w, acc[i][3]);
  }
}

// The next tile's float4 of A and of B, requested at the top of a tile and stored into LDS
// in its last step (A's four elements go to the transposed column sa[0], sa[LDA], ...).
struct NextTile {
#if defined(GM_AMD_ASM)
  gm_v4f a, b;
  GM_DEVICE void request(const float* ga, const float* gb) {
    a = gm_asm_global_load_b128(ga);
    b = gm_asm_global_load_b128(gb);
  }
  GM_DEVICE void store(float* sa, float* sb) {
    gm_asm_wait_vmcnt<1>(a);  // the older load (A) is back
    sa[0 * LDA] = a.x, sa[1 * LDA] = a.y, sa[2 * LDA] = a.z, sa[3 * LDA] = a.w;
    gm_asm_wait_vmcnt<0>(b);
    GM_ST4(sb, make_float4(b.x, b.y, b.z, b.w));
  }
#else
  float4 a, b;
  GM_DEVICE void request(const float* ga, const float* gb) {
    a = GM_LD4(ga);
    b = GM_LD4(gb);
  }
  GM_DEVICE void store(float* sa, float* sb) {
    sa[0 * LDA] = a.x, sa[1 * LDA] = a.y, sa[2 * LDA] = a.z, sa[3 * LDA] = a.w;
    GM_ST4(sb, b);
  }
#endif
};

// Scheduling fence (AMD): an empty asm statement that, to the compiler, reads and rewrites
// the accumulators. FMAs cannot move across it, and being volatile it stays in order with
// the ds_read / s_waitcnt statements. Without it the scheduler hoists each step's FMAs
// above the next step's ds_reads and folds the two register sets into one (the plain C++
// double buffer of kernel 7.5 ends up that way).
GM_DEVICE void fence(float (&acc)[TM][TN]) {
#if defined(GM_AMD_ASM)
  asm volatile(""
               : "+v"(acc[0][0]), "+v"(acc[0][1]), "+v"(acc[0][2]), "+v"(acc[0][3]),
                 "+v"(acc[1][0]), "+v"(acc[1][1]), "+v"(acc[1][2]), "+v"(acc[1][3]),
                 "+v"(acc[2][0]), "+v"(acc[2][1]), "+v"(acc[2][2]), "+v"(acc[2][3]),
                 "+v"(acc[3][0]), "+v"(acc[3][1]), "+v"(acc[3][2]), "+v"(acc[3][3]));
#else
  (void)acc;
#endif
}

// Steps S .. STEPS-2: request step S+1 into the other set, FMAs of step S, wait.
template <int S>
struct Steps {
  static GM_DEVICE void run(Frag (&f)[2], const ReadBase& r, float (&acc)[TM][TN]) {
    request<S + 1>(f[(S + 1) & 1], r);
    fence(acc);  // the FMAs below stay after the reads above ...
#pragma unroll
    for (int i = 0; i < TM; ++i) fma_row(f[S & 1], i, acc);
    fence(acc);  // ... and before the wait below
    wait(f[(S + 1) & 1]);
    Steps<S + 1>::run(f, r, acc);
  }
};
template <>
struct Steps<STEPS - 1> {
  static GM_DEVICE void run(Frag (&)[2], const ReadBase&, float (&)[TM][TN]) {}
};
}  // namespace

GM_KERNEL void __launch_bounds__(THREADS)
    sgemm_7_6(int M, int N, int K, float alpha, const float* __restrict__ A,
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
  ReadBase r;
  r.a_ptr = &As[ty * TM];
  r.b_ptr = &Bs[tx * TN];
#if defined(GM_AMD_ASM)
  r.a_addr = gm_lds_offset(r.a_ptr);
  r.b_addr = gm_lds_offset(r.b_ptr);
#elif defined(GM_NVIDIA) && defined(__CUDA_ARCH__)
  r.a_addr = gm_smem_addr(r.a_ptr);
  r.b_addr = gm_smem_addr(r.b_ptr);
#else
  r.a_addr = r.b_addr = 0;
#endif

  NextTile next;
  next.request(ga, gb);  // tile 0
  next.store(sa, sb);
  __syncthreads();

  float acc[TM][TN] = {};
  for (int k0 = 0; k0 < K; k0 += BK) {
    const int k_next = k0 + BK < K ? k0 + BK : k0;
    next.request(ga + k_next, gb + static_cast<long long>(k_next) * N);
    Frag f[2];  // register double buffer
    request<0>(f[0], r);
    wait(f[0]);
    Steps<0>::run(f, r, acc);
    const Frag& last = f[(STEPS - 1) & 1];
    __syncthreads();  // all reads of this tile are done: its LDS may be overwritten
#pragma unroll
    for (int i = 0; i < TM; ++i) fma_row(last, i, acc);
    next.store(sa, sb);
    __syncthreads();  // the next tile is in LDS
  }
#pragma unroll
  for (int i = 0; i < TM; ++i)
    gm_store_c4(C + static_cast<long long>(m0 + ty * TM + i) * N + n0 + tx * TN,
                make_float4(acc[i][0], acc[i][1], acc[i][2], acc[i][3]), alpha, beta);
}
