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
