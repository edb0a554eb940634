// mb_timer.h: in-kernel timers shared by the microbenchmarks (NVIDIA only).
// clock64() counts SM cycles; %globaltimer counts nanoseconds. A kernel that reads both
// around its measured region gives cycles, ns and so the SM clock it actually ran at.
// No standard headers: the sources are compiled with NVRTC.
#pragma once

__device__ __forceinline__ unsigned long long mb_globaltimer_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__device__ __forceinline__ unsigned long long mb_clock() {
  return static_cast<unsigned long long>(clock64());
}

// Slot layout of the `timing` output of every timed kernel: [cycles, ns] per block.
#define MB_TIMING_SLOTS 2

__device__ __forceinline__ void mb_store_timing(unsigned long long* timing, unsigned long long c0,
                                                unsigned long long c1, unsigned long long g0,
                                                unsigned long long g1) {
  timing[blockIdx.x * MB_TIMING_SLOTS + 0] = c1 - c0;
  timing[blockIdx.x * MB_TIMING_SLOTS + 1] = g1 - g0;
}

// The per-block stamps of the launch-placement microbenchmarks (mb_icache, mb_icache_phase):
// four slots per block [cycles, ns, start ns, end ns] and the SM the block ran on, written
// by thread 0 (its tools read the start/end times to prove how the blocks were placed).
__device__ __forceinline__ void mb_store_block_stamps(unsigned long long* timing,
                                                      unsigned* smids, unsigned long long c0,
                                                      unsigned long long c1,
                                                      unsigned long long g0,
                                                      unsigned long long g1) {
  if (threadIdx.x == 0) {
    unsigned id;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
    timing[4 * blockIdx.x + 0] = c1 - c0;
    timing[4 * blockIdx.x + 1] = g1 - g0;
    timing[4 * blockIdx.x + 2] = g0;
    timing[4 * blockIdx.x + 3] = g1;
    smids[blockIdx.x] = id;
  }
}
