// latency.cu: pointer chases through global memory (L1-, L2-, DRAM-sized footprints) and
// through shared memory (NVIDIA, NVRTC-clean). One thread walks a random cyclic permutation;
// each step is one dependent load and nothing else, so cycles / steps is the load latency.
#include "mb_timer.h"

// The host fills `chain` (64-bit slots) with slot indices: chain[s] = index of the next slot.
// This kernel turns each index into an absolute address once, so the chase itself needs no
// address arithmetic. Launch with any grid; grid-stride over n slots.
extern "C" __global__ void mb_chase_prepare(unsigned long long* chain, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    chain[i] = reinterpret_cast<unsigned long long>(chain + chain[i]);
  }
}

// One chase step: a <- *a as an explicit global load (ld.global, cached in L1 by default).
// A plain C++ dereference of a pointer read from memory compiles to a generic LD, whose
// address-space check is not what we want to time.
__device__ __forceinline__ unsigned long long mb_step(unsigned long long a) {
  asm volatile("ld.global.u64 %0, [%0];" : "+l"(a));
  return a;
}

// Launch <<<1, 1>>>. `warm_steps` steps bring the footprint into the caches first (the L1 is
// not kept between kernels); then `steps` timed steps. out = [last address, cycles, ns].
extern "C" __global__ void mb_chase(const unsigned long long* chain, int warm_steps, int steps,
                                    unsigned long long* out) {
  unsigned long long a = reinterpret_cast<unsigned long long>(chain);
  for (int i = 0; i < warm_steps; ++i) a = mb_step(a);
  const unsigned long long g0 = mb_globaltimer_ns();
  const unsigned long long c0 = mb_clock();
  for (int i = 0; i < steps; ++i) a = mb_step(a);
  const unsigned long long c1 = mb_clock();
  const unsigned long long g1 = mb_globaltimer_ns();
  out[0] = a;
  out[1] = c1 - c0;
  out[2] = g1 - g0;
}

#define MB_SMEM_CHASE_WORDS 8192

// Shared-memory chase: next[i] (word indices, n <= 8192) is copied into shared memory as
// 32-bit shared addresses; thread 0 then chases with ld.shared. Launch <<<1, 256>>>.
// out = [last address, cycles, ns].
extern "C" __global__ void mb_smem_chase(const unsigned* __restrict__ next, int n, int steps,
                                         unsigned long long* out) {
  __shared__ unsigned words[MB_SMEM_CHASE_WORDS];
  const unsigned base = static_cast<unsigned>(__cvta_generic_to_shared(words));
  for (int i = threadIdx.x; i < n; i += blockDim.x) words[i] = base + 4u * next[i];
  __syncthreads();
  if (threadIdx.x != 0) return;
  unsigned a = base;
  const unsigned long long g0 = mb_globaltimer_ns();
  const unsigned long long c0 = mb_clock();
  for (int i = 0; i < steps; ++i) asm volatile("ld.shared.u32 %0, [%0];" : "+r"(a));
  const unsigned long long c1 = mb_clock();
  const unsigned long long g1 = mb_globaltimer_ns();
  out[0] = a;
  out[1] = c1 - c0;
  out[2] = g1 - g0;
}

// Loaded shared-memory latency: warp 0's lane 0 chases 128-bit entries (ld.shared.v4; .x of
// each entry is the shared address of the next) while every other warp of the block runs a
// GEMM-like loop until the chase ends: per step two 128-bit fragment loads (lanes 8 apart
// share an address, as a 4x4 tile's reads do) and 16 FMAs that use them. Launch one block
// per SM, <<<SMs, 32 * (1 + background warps)>>>; `next` as for mb_smem_chase (n <= 2048
// entries). out = [last address, cycles, ns] of block 0; `sink` keeps the FMAs alive.
extern "C" __global__ void mb_smem_chase_loaded(const unsigned* __restrict__ next, int n,
                                                int steps, unsigned long long* out,
                                                float* __restrict__ sink) {
  __shared__ __align__(16) unsigned words[4 * 2048];
  __shared__ volatile int done;
  const unsigned base = static_cast<unsigned>(__cvta_generic_to_shared(words));
  for (int i = threadIdx.x; i < n; i += blockDim.x) {
    words[4 * i] = base + 16u * next[i];
    words[4 * i + 1] = __float_as_uint(1.0f);
    words[4 * i + 2] = __float_as_uint(0.5f);
    words[4 * i + 3] = __float_as_uint(0.25f);
  }
  if (threadIdx.x == 0) done = 0;
  __syncthreads();
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (warp == 0) {
    if (lane != 0) return;
    unsigned a = base, b, c, d;
    const unsigned long long g0 = mb_globaltimer_ns();
    const unsigned long long c0 = mb_clock();
    for (int i = 0; i < steps; ++i)
      asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%0];"
                   : "+r"(a), "=r"(b), "=r"(c), "=r"(d));
    const unsigned long long c1 = mb_clock();
    const unsigned long long g1 = mb_globaltimer_ns();
    done = 1;
    if (blockIdx.x == 0) {
      out[0] = a + b + c + d;
      out[1] = c1 - c0;
      out[2] = g1 - g0;
    }
    return;
  }
  float acc[16];
  for (int j = 0; j < 16; ++j) acc[j] = 0.0f;
  const float4* f4 = reinterpret_cast<const float4*>(words);
  int k = lane / 8;
  while (!done) {
    for (int s = 0; s < 16; ++s) {
      const float4 x = f4[(k + 4 * s) & 2047];
      const float4 y = f4[(k + 4 * s + 64) & 2047];
      const float xa[4] = {x.y, x.z, x.w, x.y}, ya[4] = {y.y, y.z, y.w, y.z};
      for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 4; ++j) acc[4 * i + j] = fmaf(xa[i], ya[j], acc[4 * i + j]);
    }
    k += 1;
  }
  float t = 0.0f;
  for (int j = 0; j < 16; ++j) t += acc[j];
  sink[blockIdx.x * blockDim.x + threadIdx.x] = t;
}

// Global-memory chase under load: one block per SM. Lane 0 of warp 0 in every block walks
// `chain` (prepared by mb_chase_prepare; ld.global.cg, so L2 and never L1) for `warm` and
// then `steps` timed steps, while every other warp of the block streams `ilp` independent
// 128-bit ld.global.cg loads per step from `stream` (n4 float4s, n4 a power of two) until
// its block's chase ends, as a tile loop's prefetch does. Launch <<<SMs, 32 * (1 + bg)>>>.
// out = [last address, cycles, ns] of block 0; `sink` keeps the streamed sums alive.
extern "C" __global__ void mb_global_chase_loaded(const unsigned long long* chain, int warm,
                                                  int steps, const float4* __restrict__ stream,
                                                  int n4, int ilp, unsigned long long* out,
                                                  float* __restrict__ sink) {
  __shared__ volatile int done;
  if (threadIdx.x == 0) done = 0;
  __syncthreads();
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (warp == 0) {
    if (lane != 0) return;
    unsigned long long a = reinterpret_cast<unsigned long long>(chain);
    for (int i = 0; i < warm; ++i) asm volatile("ld.global.cg.u64 %0, [%0];" : "+l"(a));
    const unsigned long long g0 = mb_globaltimer_ns();
    const unsigned long long c0 = mb_clock();
    for (int i = 0; i < steps; ++i) asm volatile("ld.global.cg.u64 %0, [%0];" : "+l"(a));
    const unsigned long long c1 = mb_clock();
    const unsigned long long g1 = mb_globaltimer_ns();
    done = 1;
    if (blockIdx.x == 0) {
      out[0] = a;
      out[1] = c1 - c0;
      out[2] = g1 - g0;
    }
    return;
  }
  const int stride = gridDim.x * blockDim.x;
  int idx = blockIdx.x * blockDim.x + threadIdx.x;
  float acc = 0.0f;
  while (!done) {
    float4 v[8];
#pragma unroll
    for (int j = 0; j < 8; ++j)
      if (j < ilp) v[j] = __ldcg(stream + ((idx + j * stride) & (n4 - 1)));
#pragma unroll
    for (int j = 0; j < 8; ++j)
      if (j < ilp) acc += v[j].x + v[j].y + v[j].z + v[j].w;
    idx += ilp * stride;
  }
  sink[blockIdx.x * blockDim.x + threadIdx.x] = acc;
}
