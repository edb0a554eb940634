// emu/gemm_port.h: a host (CPU) stand-in for kernels/gemm_port.h, used only by the tests.
// It lets g++ compile kernels/template/sgemm_tile.cu as plain C++: every GPU thread of a
// block runs as a std::thread, __syncthreads() is a std::barrier, __shared__ arrays are
// function statics (one block runs at a time). Built with -fsanitize=address it finds
// out-of-bounds global and LDS accesses; with -fsanitize=thread, missing barriers.
// GM_WAVE (32 or 64) and EMU_CP_ASYNC (1: emulate NVIDIA cp.async as immediate copies)
// come from the command line. Not a GPU model: no timing, no lanes in lock-step.
#pragma once
#include <barrier>
#include <cmath>
#include <cstring>

#ifndef GM_WAVE
#define GM_WAVE 32
#endif
#define GM_EMULATED 1

struct alignas(16) float4 {
  float x, y, z, w;
};
struct gm_dim3 {
  unsigned x = 0, y = 0, z = 0;
};

inline thread_local gm_dim3 threadIdx, blockIdx;
inline gm_dim3 gridDim, blockDim;
inline std::barrier<>* gm_emu_barrier = nullptr;

inline void __syncthreads() { gm_emu_barrier->arrive_and_wait(); }

#define __shared__ static
#define __align__(n) __attribute__((aligned(n)))
#define __launch_bounds__(n)
#define GM_DEVICE inline
#define GM_KERNEL extern "C"
#define GM_LD4(ptr) (*reinterpret_cast<const float4*>(ptr))
#define GM_ST4(ptr, v) (*reinterpret_cast<float4*>(ptr) = (v))

#if defined(EMU_CP_ASYNC) && EMU_CP_ASYNC
#define GM_NVIDIA 1
#define GM_CP_ASYNC 1
inline void gm_cp_async16(void* smem, const void* gmem) { std::memcpy(smem, gmem, 16); }
inline void gm_cp_async4(void* smem, const void* gmem) { std::memcpy(smem, gmem, 4); }
inline void gm_cp_async_commit() {}
template <int N>
inline void gm_cp_async_wait() {}
#endif
