// smem.cu: shared-memory bandwidth and bank-conflict cost (NVIDIA, NVRTC-clean).
//
// mb_smem_stride: lane l of every warp reads element l * stride of width VEC floats
// (-DVEC=1|2|4: 32-, 64-, 128-bit accesses) again and again. The loop body is 32 volatile
// ld.shared instructions, each followed by one FADD into one of 8 accumulators (so the loads
// have distinct destinations and stay alive); the FADDs take a quarter of the issue slots that
// the shared-memory pipe leaves idle, so the shared access is the only limiter.
// Launch one block of 1024 threads per SM; timing[block] = [cycles, ns] over the timed loop.
// Cycles per warp-level access = cycles / (warps * iters * 32).
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

extern "C" __global__ void mb_smem_stride(int stride, int iters, float never,
                                          float* __restrict__ sink,
                                          unsigned long long* timing) {
  __shared__ __align__(16) float buf[MB_SMEM_WORDS];
  for (int i = threadIdx.x; i < MB_SMEM_WORDS; i += blockDim.x) buf[i] = static_cast<float>(i & 7);
  const unsigned lane = threadIdx.x & 31u;
  const unsigned word = (lane * static_cast<unsigned>(stride) * VEC) & (MB_SMEM_WORDS - 1);
  const unsigned addr = static_cast<unsigned>(__cvta_generic_to_shared(buf + word));
  float acc[MB_ACCS];
#pragma unroll
  for (int k = 0; k < MB_ACCS; ++k) acc[k] = 0.0f;
  __syncthreads();
  const unsigned long long g0 = mb_globaltimer_ns();
  const unsigned long long c0 = mb_clock();
  for (int i = 0; i < iters; ++i) {
#pragma unroll
    for (int u = 0; u < MB_LOADS_PER_ITER; ++u) acc[u % MB_ACCS] += mb_lds(addr);
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
