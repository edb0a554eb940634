// smem.cu: shared-memory bandwidth and bank-conflict cost (NVIDIA, NVRTC-clean).
//
// mb_smem_stride: lane l of every warp reads element l * stride of width VEC floats
// (-DVEC=1|2|4: 32-, 64-, 128-bit accesses) again and again. The loop body is 32 volatile
// ld.shared instructions, each followed by one FADD into one of 8 accumulators (so the loads
// have distinct destinations and stay alive); the FADDs take a quarter of the issue slots that
// the shared-memory pipe leaves idle, so the shared access is the only limiter.
// Launch one block of 1024 threads per SM; timing[block] = [cycles, ns] over the timed loop.
// Cycles per warp-level access = cycles / (warps * iters * 32).
//
// mb_smem_pattern: the same loop, but lane l reads element pattern[l] (in VEC-float
// elements, a table of 32 ints in global memory), so broadcast and partial-broadcast
// patterns (several lanes on one 16-byte word) can be timed and counted by ncu.
// mb_cp_async (sm_80+, -DCP_BYTES=4|16): every lane issues cp.async copies of CP_BYTES from
// a small global window (L1/L2-resident after the first pass) into shared memory, 8 per
// iteration, then commit + wait_group 0; cycles per warp copy instruction per SM.
#include "mb_timer.h"

#ifndef VEC
#define VEC 1
#endif
#define MB_SMEM_WORDS 8192   // 32 KiB; lane 31 at stride 64 of 128-bit reads: word 7936
#define MB_LOADS_PER_ITER 32
#define MB_ACCS 8

__device__ __forceinline__ float mb_lds(unsigned addr) {
  float x;
#if VEC == 1
  asm volatile("ld.volatile.shared.f32 %0, [%1];" : "=f"(x) : "r"(addr));
#elif VEC == 2
  float y;
  asm volatile("ld.volatile.shared.v2.f32 {%0, %1}, [%2];" : "=f"(x), "=f"(y) : "r"(addr));
  x += y;
#else
  float y, z, w;
  asm volatile("ld.volatile.shared.v4.f32 {%0, %1, %2, %3}, [%4];"
               : "=f"(x), "=f"(y), "=f"(z), "=f"(w)
               : "r"(addr));
  x += (y + z) + w;
#endif
  return x;
}

// A timed loop of loads into MB_ACCS accumulators: load(i, u) for u < PER_ITER per
// iteration; thread 0 writes the block's timing; the sum goes to `sink` only if it equals
// `never` (it does not), which keeps the loads alive.
template <int PER_ITER, class Load>
__device__ __forceinline__ void mb_acc_loop(Load load, int iters, float never,
                                            float* __restrict__ sink,
                                            unsigned long long* timing) {
  float acc[MB_ACCS];
#pragma unroll
  for (int k = 0; k < MB_ACCS; ++k) acc[k] = 0.0f;
  __syncthreads();
  const unsigned long long g0 = mb_globaltimer_ns();
  const unsigned long long c0 = mb_clock();
  for (int i = 0; i < iters; ++i) {
#pragma unroll
    for (int u = 0; u < PER_ITER; ++u) acc[u % MB_ACCS] += load(i, u);
  }
  __syncthreads();
  const unsigned long long c1 = mb_clock();
  const unsigned long long g1 = mb_globaltimer_ns();
  if (threadIdx.x == 0) mb_store_timing(timing, c0, c1, g0, g1);
  float s = 0.0f;
#pragma unroll
  for (int k = 0; k < MB_ACCS; ++k) s += acc[k];
  if (s == never) sink[blockIdx.x * blockDim.x + threadIdx.x] = s;
}

// The timed loop of both read kernels: every lane reads float element `word` of the
// shared buffer MB_LOADS_PER_ITER times per iteration.
__device__ __forceinline__ void mb_smem_read_loop(unsigned word, int iters, float never,
                                                  float* __restrict__ sink,
                                                  unsigned long long* timing) {
  __shared__ __align__(16) float buf[MB_SMEM_WORDS];
  for (int i = threadIdx.x; i < MB_SMEM_WORDS; i += blockDim.x) buf[i] = static_cast<float>(i & 7);
  const unsigned addr =
      static_cast<unsigned>(__cvta_generic_to_shared(buf + (word & (MB_SMEM_WORDS - 1))));
  mb_acc_loop<MB_LOADS_PER_ITER>([=](int, int) { return mb_lds(addr); }, iters, never, sink,
                                 timing);
}

extern "C" __global__ void mb_smem_stride(int stride, int iters, float never,
                                          float* __restrict__ sink,
                                          unsigned long long* timing) {
  const unsigned lane = threadIdx.x & 31u;
  mb_smem_read_loop(lane * static_cast<unsigned>(stride) * VEC, iters, never, sink, timing);
}

extern "C" __global__ void mb_smem_pattern(const int* __restrict__ pattern, int iters, float never,
                                           float* __restrict__ sink,
                                           unsigned long long* timing) {
  const unsigned lane = threadIdx.x & 31u;
  mb_smem_read_loop(static_cast<unsigned>(pattern[lane]) * VEC, iters, never, sink, timing);
}

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
#ifndef CP_BYTES
#define CP_BYTES 4
#endif
#define MB_CP_PER_ITER 8
// The timed cp.async loop of mb_cp_async and mb_cp_async_rows: MB_CP_PER_ITER copies of
// CP_BYTES per iteration from src_at(u, i) into shared word t * dst_stride (+ u * 8),
// modulo the buffer, then commit + wait_group 0; thread 0 writes the block's timing.
template <class Src>
__device__ __forceinline__ void mb_cp_async_loop(Src src_at, unsigned dst_stride, int iters,
                                                 unsigned long long* timing) {
  __shared__ __align__(16) float buf[MB_SMEM_WORDS];
  const unsigned t = threadIdx.x;
  __syncthreads();
  const unsigned long long g0 = mb_globaltimer_ns();
  const unsigned long long c0 = mb_clock();
  for (int i = 0; i < iters; ++i) {
#pragma unroll
    for (int u = 0; u < MB_CP_PER_ITER; ++u) {
      const float* g = src_at(static_cast<unsigned>(u), static_cast<unsigned>(i));
      float* d = buf + ((t * dst_stride * (CP_BYTES / 4) + u * 8u) & (MB_SMEM_WORDS - 1)
                        & ~static_cast<unsigned>(CP_BYTES / 4 - 1));
      const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(d));
#if CP_BYTES == 16
      asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(s), "l"(g));
#else
      asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" ::"r"(s), "l"(g));
#endif
    }
    asm volatile("cp.async.commit_group;\n" ::);
    asm volatile("cp.async.wait_group 0;\n" ::);
  }
  __syncthreads();
  const unsigned long long c1 = mb_clock();
  const unsigned long long g1 = mb_globaltimer_ns();
  if (t == 0) mb_store_timing(timing, c0, c1, g0, g1);
}

// Lane l of warp w copies CP_BYTES from src + (w * 32 + l) * src_stride bytes (+ u * 4 KiB)
// into shared word (w * 32 + l) * dst_stride (+ u * 32 * dst_stride), modulo the buffer.
extern "C" __global__ void mb_cp_async(const float* __restrict__ src, int src_stride_words,
                                       int dst_stride_words, int iters,
                                       unsigned long long* timing) {
  const unsigned t = threadIdx.x;
  const unsigned stride = static_cast<unsigned>(src_stride_words);
  const float* base = src + static_cast<size_t>(blockIdx.x % 8u) * 65536u;
  mb_cp_async_loop([=](unsigned u, unsigned) { return base + ((t * stride + u * 1024u) & 65535u); },
                   static_cast<unsigned>(dst_stride_words), iters, timing);
}

// mb_cp_async_rows / mb_ldg_rows (sm_80+, -DCP_ROW_LANES=G, -DCP_BYTES=4|16): the tile
// template's global access pattern (kernels/template/sgemm_tile.cu a_chunk / b_chunk)
// with G lanes on each row: lane t of the block reads the 16-byte chunk (t % G) of row
// t / G, rows `pitch_words` apart, so one warp instruction spans 32 / G rows (a row of
// 4 G words stays in one 128-byte line for G <= 8). The 8 copies of an iteration are
// the template's: with 4-byte copies, u & 3 is the word inside the chunk (VEC
// consecutive cp.async of 4 B, the A tile's path) and u >> 2 the next chunk group; with
// 16-byte copies or loads, u is the chunk group. Each chunk group and each iteration
// moves the rows (37 and 64 rows on), so no two loads of a thread repeat an address
// within an iteration and none is loop-invariant (ptxas would merge or hoist them). Rows
// wrap at 256, so the source (at most 256 rows of one line) stays L1-resident. mb_cp_async_rows
// writes contiguous shared words (no bank conflicts); mb_ldg_rows loads the same chunks
// into registers with ld.global.v4 (the register-staged path's load) and sums them.
#ifdef CP_ROW_LANES
#define MB_ROW_WINDOW (1u << 21)
__device__ __forceinline__ unsigned mb_row_offset(unsigned t, unsigned u, unsigned i,
                                                 unsigned pitch) {
  const unsigned groups = (CP_BYTES == 4) ? (u >> 2) : u;
  const unsigned row = (t / CP_ROW_LANES + groups * 37u + i * 64u) & 255u;
  const unsigned word = (CP_BYTES == 4) ? (u & 3u) : 0u;
  return row * pitch + (t % CP_ROW_LANES) * 4u + word;
}

extern "C" __global__ void mb_cp_async_rows(const float* __restrict__ src, int pitch_words,
                                            int iters, unsigned long long* timing) {
  const unsigned t = threadIdx.x, pitch = static_cast<unsigned>(pitch_words);
  const float* base = src + static_cast<size_t>(blockIdx.x % 8u) * MB_ROW_WINDOW;
  mb_cp_async_loop([=](unsigned u, unsigned i) { return base + mb_row_offset(t, u, i, pitch); },
                   1u, iters, timing);
}

extern "C" __global__ void mb_ldg_rows(const float* __restrict__ src, int pitch_words,
                                       int iters, float never, float* __restrict__ sink,
                                       unsigned long long* timing) {
  const unsigned t = threadIdx.x, pitch = static_cast<unsigned>(pitch_words);
  const float* base = src + static_cast<size_t>(blockIdx.x % 8u) * MB_ROW_WINDOW;
  mb_acc_loop<MB_CP_PER_ITER>([=](int i, int u) {
    const float* g = base + mb_row_offset(t, u, static_cast<unsigned>(i), pitch);
    float x, y, z, w;
    asm volatile("ld.global.ca.v4.f32 {%0, %1, %2, %3}, [%4];"
                 : "=f"(x), "=f"(y), "=f"(z), "=f"(w) : "l"(g));
    return (x + y) + (z + w);
  }, iters, never, sink, timing);
}
#endif
#endif
