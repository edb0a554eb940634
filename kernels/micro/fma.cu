// fma.cu: FP32 FMA throughput and the SM clock (NVIDIA, NVRTC-clean).
//
// mb_fma: each thread runs ILP independent FMA chains a = a * b + c; the loop body holds
// 256 FMAs whatever ILP is (256 / ILP rounds), so the loop overhead (about 3 instructions)
// is near 1% of the issue slots. FLOP = 2 * 256 * iters per thread.
// -DILP=1|2|4|8 (default 4). With b in (0, 1) and c > 0 the chains converge to c / (1 - b):
// no overflow, no denormals.
#include "mb_timer.h"

#ifndef ILP
#define ILP 4
#endif
#define MB_FMA_PER_ITER 256
#define MB_ROUNDS (MB_FMA_PER_ITER / ILP)

extern "C" __global__ void mb_fma(int iters, float b, float c, float never,
                                  float* __restrict__ sink, unsigned long long* timing) {
  float a[ILP];
#pragma unroll
  for (int k = 0; k < ILP; ++k) a[k] = 1.0e-3f * static_cast<float>(threadIdx.x + k);
  __syncthreads();
  const unsigned long long g0 = mb_globaltimer_ns();
  const unsigned long long c0 = mb_clock();
  for (int i = 0; i < iters; ++i) {
#pragma unroll
    for (int r = 0; r < MB_ROUNDS; ++r) {
#pragma unroll
      for (int k = 0; k < ILP; ++k) a[k] = fmaf(a[k], b, c);
    }
  }
  float s = 0.0f;
#pragma unroll
  for (int k = 0; k < ILP; ++k) s += a[k];
  __syncthreads();
  const unsigned long long c1 = mb_clock();
  const unsigned long long g1 = mb_globaltimer_ns();
  if (threadIdx.x == 0) mb_store_timing(timing, c0, c1, g0, g1);
  if (s == never) sink[blockIdx.x * blockDim.x + threadIdx.x] = s;
}

// Spins one thread for `spin_cycles` SM cycles and reports [cycles, ns]: the SM clock in Hz
// is cycles / ns * 1e9. Launch <<<1, 1>>>.
extern "C" __global__ void mb_clock_spin(int spin_cycles, unsigned long long* timing) {
  const unsigned long long g0 = mb_globaltimer_ns();
  const unsigned long long c0 = mb_clock();
  unsigned long long c1 = c0;
  while (c1 - c0 < static_cast<unsigned long long>(spin_cycles)) c1 = mb_clock();
  const unsigned long long g1 = mb_globaltimer_ns();
  mb_store_timing(timing, c0, c1, g0, g1);
}
