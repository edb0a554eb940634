// mb_icache: the FMA issue rate of a loop whose straight-line body is NBODY FFMAs (NVIDIA
// only; tools/device/icache.py). The body's code is about NBODY x 16 bytes on sm_90, so a
// sweep of NBODY sweeps the loop's code size past the instruction caches. Eight independent
// accumulators keep one warp's FFMAs free of dependency stalls (FFMA latency < 8 issue
// slots), no memory instruction runs inside the timed loop, so what slows a large body is
// fetching its instructions. Each block writes its cycles, its start and end
// (%globaltimer ns) and its SM id, as mb_inner_loop does. With BARRIER=1 the block's warps
// meet at a __syncthreads after every pass of the body, as a GEMM's warps do at each tile:
// they then fetch the same code together (tools/device/icache.py --barrier, run AO).
#include "mb_timer.h"

#ifndef BARRIER
#define BARRIER 0
#endif

#ifndef NBODY
#define NBODY 1024
#endif

extern "C" __global__ void mb_icache(int reps, float x, float y, unsigned long long* timing,
                                     unsigned* smids, float* sink) {
  float a0 = threadIdx.x, a1 = a0 + 1.f, a2 = a0 + 2.f, a3 = a0 + 3.f;
  float a4 = a0 + 4.f, a5 = a0 + 5.f, a6 = a0 + 6.f, a7 = a0 + 7.f;
  __syncthreads();
  const unsigned long long g0 = mb_globaltimer_ns();
  const unsigned long long c0 = mb_clock();
  for (int r = 0; r < reps; ++r) {
#pragma unroll
    for (int j = 0; j < NBODY / 8; ++j) {
      a0 = fmaf(a0, x, y); a1 = fmaf(a1, x, y); a2 = fmaf(a2, x, y); a3 = fmaf(a3, x, y);
      a4 = fmaf(a4, x, y); a5 = fmaf(a5, x, y); a6 = fmaf(a6, x, y); a7 = fmaf(a7, x, y);
    }
#if BARRIER
    __syncthreads();
#endif
  }
  const unsigned long long c1 = mb_clock();
  const unsigned long long g1 = mb_globaltimer_ns();
  mb_store_block_stamps(timing, smids, c0, c1, g0, g1);
  sink[blockIdx.x * blockDim.x + threadIdx.x] = a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7;
}
