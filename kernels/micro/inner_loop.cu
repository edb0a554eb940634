// mb_inner_loop: the template's inner loop alone (NVIDIA only; tools/device/inner_loop.py).
// Compiled with one template config's -D macros: each block fills its LDS tiles once, then
// runs `reps` times the template's compute() (kernels/template/sgemm_tile.cu: one BK-deep
// step of fragment reads and outer-product FMAs, next step's fragments read under this
// step's FMAs) with no global loads and no barriers. The empty asm with a "memory" clobber
// keeps the compiler from hoisting the loop-invariant fragment reads out of the rep loop.
// Each block writes its cycles, its start and end (%globaltimer ns) and its SM id, so the
// host checks how many blocks ran on an SM at once and times each SM from its first start
// to its last end. What it measures: the FMA issue rate of the FMA + LDS loop at a given
// number of warps per scheduler.
#include "mb_timer.h"
#include "template/sgemm_tile.cu"

GM_DEVICE unsigned mb_smid() {
  unsigned id;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
  return id;
}

using namespace gm_tile;

extern "C" __global__ void __launch_bounds__(THREADS)
mb_inner_loop(int reps, unsigned long long* timing, unsigned* smids, float* sink) {
  __shared__ __align__(16) float As[BK][kLdA];
  __shared__ __align__(16) float Bs[BK][kLdB];
  for (int i = threadIdx.x; i < BK * kLdA; i += THREADS) (&As[0][0])[i] = 1.0f + 1e-3f * (i & 7);
  for (int i = threadIdx.x; i < BK * kLdB; i += THREADS) (&Bs[0][0])[i] = 1.0f - 1e-3f * (i & 3);
  __syncthreads();
  const int tid = threadIdx.x;
  const int warp = tid / kWave, lane = tid % kWave;
  const int row_t = (warp / kWarpsN) * kWM + (lane / kLX) * VEC;
  const int col_t = (warp % kWarpsN) * kWN + (lane % kLX) * VEC;
  float acc[TM][TN];
#pragma unroll
  for (int i = 0; i < TM; ++i)
#pragma unroll
    for (int j = 0; j < TN; ++j) acc[i][j] = 0.0f;
  const unsigned long long g0 = mb_globaltimer_ns();
  const unsigned long long c0 = mb_clock();
  for (int r = 0; r < reps; ++r) {
    compute(As, Bs, row_t, col_t, acc);
    asm volatile("" ::: "memory");
  }
  const unsigned long long c1 = mb_clock();
  const unsigned long long g1 = mb_globaltimer_ns();
  if (tid == 0) {
    timing[4 * blockIdx.x + 0] = c1 - c0;
    timing[4 * blockIdx.x + 1] = g1 - g0;
    timing[4 * blockIdx.x + 2] = g0;
    timing[4 * blockIdx.x + 3] = g1;
    smids[blockIdx.x] = mb_smid();
  }
  float t = 0.0f;
#pragma unroll
  for (int i = 0; i < TM; ++i)
#pragma unroll
    for (int j = 0; j < TN; ++j) t += acc[i][j];
  sink[blockIdx.x * THREADS + tid] = t;
}
