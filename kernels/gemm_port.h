// gemm_port.h: the one portability header of the gemmmodel kernels.
// It maps HIP (AMD, wave64) and CUDA (NVIDIA, warp32) onto the same names, and compiles
// under hipcc (-x hip), nvcc and NVRTC. No standard headers: NVRTC has none.
#pragma once

#if defined(__HIP_PLATFORM_AMD__) || defined(__HIPCC__) && !defined(__CUDACC__)
#define GM_AMD 1
#include <hip/hip_runtime.h>
#define GM_WAVE 64
#else
#define GM_NVIDIA 1
#define GM_WAVE 32
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
#define GM_CP_ASYNC 1
#endif
#endif

#define GM_DEVICE __device__ __forceinline__
#define GM_KERNEL extern "C" __global__

// A float4 load/store that the compiler turns into one 128-bit access (address must be
// 16-byte aligned).
#define GM_LD4(ptr) (*reinterpret_cast<const float4*>(ptr))
#define GM_ST4(ptr, v) (*reinterpret_cast<float4*>(ptr) = (v))

#if defined(GM_NVIDIA)
// cp.async (sm_80+): the NVIDIA twin of AMD's asynchronous global->LDS copy with s_waitcnt.
GM_DEVICE unsigned gm_smem_addr(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}
#if defined(GM_CP_ASYNC)
GM_DEVICE void gm_cp_async16(void* smem, const void* gmem) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(gm_smem_addr(smem)), "l"(gmem));
}
GM_DEVICE void gm_cp_async4(void* smem, const void* gmem) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" ::"r"(gm_smem_addr(smem)), "l"(gmem));
}
GM_DEVICE void gm_cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N>
GM_DEVICE void gm_cp_async_wait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(N)); }
#endif
#endif
