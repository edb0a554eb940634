// mb_icache_phase: the FMA issue rate of a loop of NHOT straight-line FFMAs (the "hot" code,
// about NHOT x 16 bytes on sm_90) that runs `trips` times per pass, followed once per pass
// by NCOLD straight-line FFMAs (the "cold" code, as a GEMM's prologue, peeled last tile and
// epilogue follow its main loop once per block). NVIDIA only; tools/device/icache_phase.py.
// The question (docs/model.md "Session 69"): when the hot loop fits an instruction cache
// that the whole code does not, is the fetch rate that of the whole code, of the loop, or
// between, and does it depend on how many blocks of the SM are outside their loop at once?
// `skew` > 0 starts each block's first pass `(blockIdx.x * skew) % trips` trips in, so the
// blocks that share an SM reach their cold code at different times (0: all together). Eight
// independent accumulators keep one warp's FFMAs free of dependency stalls; no memory
// instruction runs in the timed part. Each block writes its cycles, %globaltimer span, start,
// end and SM id, as mb_icache does.
#include "mb_timer.h"

#ifndef NHOT
#define NHOT 1024
#endif

#ifndef NCOLD
#define NCOLD 0
#endif

#define MB_FMA8()                                                                         \
  a0 = fmaf(a0, x, y); a1 = fmaf(a1, x, y); a2 = fmaf(a2, x, y); a3 = fmaf(a3, x, y);   \
  a4 = fmaf(a4, x, y); a5 = fmaf(a5, x, y); a6 = fmaf(a6, x, y); a7 = fmaf(a7, x, y)

extern "C" __global__ void mb_icache_phase(int passes, int trips, int skew, float x, float y,
                                           unsigned long long* timing, unsigned* smids,
                                           float* sink) {
  float a0 = threadIdx.x, a1 = a0 + 1.f, a2 = a0 + 2.f, a3 = a0 + 3.f;
  float a4 = a0 + 4.f, a5 = a0 + 5.f, a6 = a0 + 6.f, a7 = a0 + 7.f;
  int t0 = skew > 0 ? (int)((blockIdx.x * (unsigned)skew) % (unsigned)trips) : 0;
  __syncthreads();
  const unsigned long long g0 = mb_globaltimer_ns();
  const unsigned long long c0 = mb_clock();
  for (int p = 0; p < passes; ++p) {
    for (int t = t0; t < trips; ++t) {
#pragma unroll
      for (int j = 0; j < NHOT / 8; ++j) { MB_FMA8(); }
    }
    t0 = 0;
#if NCOLD > 0
#pragma unroll
    for (int j = 0; j < NCOLD / 8; ++j) { MB_FMA8(); }
#endif
  }
  const unsigned long long c1 = mb_clock();
  const unsigned long long g1 = mb_globaltimer_ns();
  mb_store_block_stamps(timing, smids, c0, c1, g0, g1);
  sink[blockIdx.x * blockDim.x + threadIdx.x] = a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7;
}
