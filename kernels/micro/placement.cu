// placement.cu: where the block scheduler puts the blocks of a partial last wave (NVIDIA,
// NVRTC-clean). Every block's thread 0 records its SM (%smid) and its start and end time
// (%globaltimer) around a fixed spin of `spin_ns`; the other threads wait at the barrier,
// so the block holds its slot for the spin. Dynamic shared memory (launch argument) sets
// how many blocks fit on one SM. `rec` needs 3 uint64 per block.
#include "mb_timer.h"

extern "C" __global__ void mb_placement(unsigned long long spin_ns,
                                        unsigned long long* __restrict__ rec) {
  extern __shared__ float mb_pad[];
  if (threadIdx.x == 0) {
    unsigned int smid;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
    unsigned long long t0 = mb_globaltimer_ns();
    unsigned long long t1 = t0;
    while (t1 - t0 < spin_ns) t1 = mb_globaltimer_ns();
    mb_pad[0] = static_cast<float>(smid);
    rec[blockIdx.x * 3 + 0] = smid;
    rec[blockIdx.x * 3 + 1] = t0;
    rec[blockIdx.x * 3 + 2] = t1;
  }
  __syncthreads();
}
