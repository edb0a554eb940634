// cold_touch.cu: tile loads in series, as a single-buffered tile loop waits them (NVIDIA,
// NVRTC-clean; device run BF, session 65). Each block loads `rounds` tiles one after the
// other: a tile is `rows` rows of `row_f4` float4 (one per thread), `pitch_f4` float4 apart,
// and round r moves `row_f4` float4 along the rows, as a GEMM's A tile moves along K. Each
// round stores its tile to shared memory, waits at a barrier, reads one value back and makes
// the next round's address depend on it, so the rounds cannot overlap. Blocks b and b' with
// b / share == b' / share load the same tiles at about the same time (a tile shared by the
// blocks of one block row). Thread 0 stamps clock64() before the first round and after each.
#include "mb_timer.h"

extern "C" __global__ void mb_cold_rounds(const float4* __restrict__ src, int rows, int row_f4,
                                          long long pitch_f4, int rounds, int share,
                                          unsigned long long* stamps, float* sink) {
  extern __shared__ float4 stage[];
  const int group = blockIdx.x / share;
  const int row = threadIdx.x / row_f4;
  const int col = threadIdx.x % row_f4;
  long long off = (static_cast<long long>(group) * rows + row) * pitch_f4 + col;
  float acc = 0.0f;
  __syncthreads();
  const unsigned long long c0 = mb_clock();
  unsigned long long* out = stamps + static_cast<long long>(blockIdx.x) * (rounds + 2);
  if (threadIdx.x == 0) out[0] = mb_globaltimer_ns();
  for (int r = 0; r < rounds; ++r) {
    if (row < rows) stage[threadIdx.x] = src[off + static_cast<long long>(r) * row_f4];
    __syncthreads();
    acc += stage[(threadIdx.x * 7 + r) % blockDim.x].x;
    if (acc != acc) off += 1;   // never taken for finite data; the address depends on it
    if (threadIdx.x == 0) out[r + 2] = mb_clock() - c0;
    __syncthreads();
  }
  if (threadIdx.x == 0) out[1] = mb_globaltimer_ns();
  if (acc == -1.0f) sink[blockIdx.x] = acc;
}
