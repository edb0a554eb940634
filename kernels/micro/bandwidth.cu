// bandwidth.cu: DRAM read / write / copy and L2 read bandwidth (NVIDIA, NVRTC-clean).
//
// Every kernel is a grid-stride loop over n4 float4 elements (16 B each), unrolled by 4 so
// that each thread has four 16-byte loads in flight. Loads use __ldcg (cache in L2 only):
// the L2 sweep must not be served by the per-SM L1.
// Bytes moved: read 16*n4, write 16*n4, copy 32*n4 (read + write), l2_read 16*n4*reps.

#define MB_UNROLL 4

// Reads src and folds it into a sum; the sum is stored only if it equals `never`, which the
// host chooses so that it cannot happen (the buffer is zero-filled), so no store is issued in
// practice but the compiler must keep every load.
extern "C" __global__ void mb_dram_read(const float4* __restrict__ src, int n4, float never,
                                        float* __restrict__ sink) {
  const int stride = gridDim.x * blockDim.x;
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float acc = 0.0f;
  for (; i + (MB_UNROLL - 1) * stride < n4; i += MB_UNROLL * stride) {
    float4 v[MB_UNROLL];
#pragma unroll
    for (int u = 0; u < MB_UNROLL; ++u) v[u] = __ldcg(src + i + u * stride);
#pragma unroll
    for (int u = 0; u < MB_UNROLL; ++u) acc += (v[u].x + v[u].y) + (v[u].z + v[u].w);
  }
  for (; i < n4; i += stride) {
    float4 v = __ldcg(src + i);
    acc += (v.x + v.y) + (v.z + v.w);
  }
  if (acc == never) sink[0] = acc;
}

extern "C" __global__ void mb_dram_write(float4* __restrict__ dst, int n4, float value) {
  const int stride = gridDim.x * blockDim.x;
  const float4 v = make_float4(value, value, value, value);
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  for (; i + (MB_UNROLL - 1) * stride < n4; i += MB_UNROLL * stride) {
#pragma unroll
    for (int u = 0; u < MB_UNROLL; ++u) dst[i + u * stride] = v;
  }
  for (; i < n4; i += stride) dst[i] = v;
}

extern "C" __global__ void mb_dram_copy(const float4* __restrict__ src, float4* __restrict__ dst,
                                        int n4) {
  const int stride = gridDim.x * blockDim.x;
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  for (; i + (MB_UNROLL - 1) * stride < n4; i += MB_UNROLL * stride) {
    float4 v[MB_UNROLL];
#pragma unroll
    for (int u = 0; u < MB_UNROLL; ++u) v[u] = __ldcg(src + i + u * stride);
#pragma unroll
    for (int u = 0; u < MB_UNROLL; ++u) dst[i + u * stride] = v[u];
  }
  for (; i < n4; i += stride) dst[i] = __ldcg(src + i);
}

// Reads an n4-element working set `total / n4` times over: load number g (0 <= g < total)
// reads element g mod n4. Consecutive loads of one thread are independent, so even a small
// working set keeps many loads in flight. When the working set fits in L2 the repeats are L2
// hits; past the L2 size they come from DRAM: the sweep shows the knee. Bytes = 16 * total.
extern "C" __global__ void mb_l2_read(const float4* __restrict__ src, int n4, int total,
                                      float never, float* __restrict__ sink) {
  const int stride = gridDim.x * blockDim.x;
  const int step = stride % n4;  // e advances by stride modulo n4
  int g = blockIdx.x * blockDim.x + threadIdx.x;
  int e = g % n4;
  float acc = 0.0f;
  for (; g + (MB_UNROLL - 1) * stride < total; g += MB_UNROLL * stride) {
    float4 v[MB_UNROLL];
#pragma unroll
    for (int u = 0; u < MB_UNROLL; ++u) {
      v[u] = __ldcg(src + e);
      e += step;
      if (e >= n4) e -= n4;
    }
#pragma unroll
    for (int u = 0; u < MB_UNROLL; ++u) acc += (v[u].x + v[u].y) + (v[u].z + v[u].w);
  }
  for (; g < total; g += stride) {
    float4 v = __ldcg(src + e);
    acc += (v.x + v.y) + (v.z + v.w);
    e += step;
    if (e >= n4) e -= n4;
  }
  if (acc == never) sink[0] = acc;
}
