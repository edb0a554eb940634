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

// ---------------------------------------------------------------------------------------
// Appended for catalogue kernels 3.5 / 3.6: hand-issued memory instructions.
// The compiler treats an inline-asm load as an opaque instruction: it does not count it in
// vmcnt / lgkmcnt and inserts no s_waitcnt before the loaded registers are used (seen in
// hipcc 5.2 / clang 15 gfx906 ISA: `ds_read_b32 v0, v0` followed at once by a VALU read
// of v0). So each gm_asm_*_load returns a value that is still IN FLIGHT, and the matching
// gm_asm_wait_* names the same variables as "+v" operands: to the compiler the wait is what
// defines them, so nothing can read them (or copy them) before the wait has executed.
// Counters: gfx9 returns vector-memory loads, and LDS operations, in issue order, so
// vmcnt(N) / lgkmcnt(N) = "all but the N most recent are done".
#if defined(GM_AMD)
// A 128-bit VGPR tuple for "v" operands (HIP's float4 is a struct, which asm cannot take).
typedef float gm_v4f __attribute__((ext_vector_type(4)));

// LDS byte offset (32 bits) of a __shared__ object: the address operand of ds_* is this
// offset, not the 64-bit generic pointer (a generic pointer becomes a VGPR pair there).
GM_DEVICE unsigned gm_lds_offset(const void* p) {
  typedef __attribute__((address_space(3))) const void* gm_lds_ptr;
  return static_cast<unsigned>(reinterpret_cast<__SIZE_TYPE__>((gm_lds_ptr)p));
}
// global_load_dwordx4 (16-byte aligned address): in flight until gm_asm_wait_vmcnt.
GM_DEVICE gm_v4f gm_asm_global_load_b128(const float* p) {
  gm_v4f v;
  asm volatile("global_load_dwordx4 %0, %1, off" : "=v"(v) : "v"(p) : "memory");
  return v;
}
// s_waitcnt vmcnt(N): afterwards `v` (loaded before the N most recent loads) is valid.
template <int N>
GM_DEVICE void gm_asm_wait_vmcnt(gm_v4f& v) {
  asm volatile("s_waitcnt vmcnt(%1)" : "+v"(v) : "n"(N) : "memory");
}
// ds_read_b128 at LDS byte offset addr + OFF: in flight until gm_asm_wait_lgkmcnt.
template <int OFF>
GM_DEVICE gm_v4f gm_asm_ds_read_b128(unsigned addr) {
  gm_v4f v;
  asm volatile("ds_read_b128 %0, %1 offset:%2" : "=v"(v) : "v"(addr), "n"(OFF) : "memory");
  return v;
}
// s_waitcnt lgkmcnt(N) validating two in-flight ds_read results.
template <int N>
GM_DEVICE void gm_asm_wait_lgkmcnt(gm_v4f& a, gm_v4f& b) {
  asm volatile("s_waitcnt lgkmcnt(%2)" : "+v"(a), "+v"(b) : "n"(N) : "memory");
}
// s_waitcnt lgkmcnt(N) for hand-issued LDS writes (e.g. before a barrier).
template <int N>
GM_DEVICE void gm_asm_wait_lgkmcnt() {
  asm volatile("s_waitcnt lgkmcnt(%0)" ::"n"(N) : "memory");
}
template <int OFF>
GM_DEVICE void gm_asm_ds_write_b32(unsigned addr, float v) {
  asm volatile("ds_write_b32 %0, %1 offset:%2" ::"v"(addr), "v"(v), "n"(OFF) : "memory");
}
template <int OFF>
GM_DEVICE void gm_asm_ds_write_b128(unsigned addr, gm_v4f v) {
  asm volatile("ds_write_b128 %0, %1 offset:%2" ::"v"(addr), "v"(v), "n"(OFF) : "memory");
}
// An empty asm that "modifies" a 4x4 register tile: arithmetic on the tile cannot move
// across it. Placed around a block of FMAs it pins them between two hand-issued
// instructions (the compiler would otherwise hoist or sink them: no data dependence ties
// FMAs to an asm load of other registers).
GM_DEVICE void gm_asm_pin_4x4(float (&r)[4][4]) {
  asm volatile(""
               : "+v"(r[0][0]), "+v"(r[0][1]), "+v"(r[0][2]), "+v"(r[0][3]),
                 "+v"(r[1][0]), "+v"(r[1][1]), "+v"(r[1][2]), "+v"(r[1][3]),
                 "+v"(r[2][0]), "+v"(r[2][1]), "+v"(r[2][2]), "+v"(r[2][3]),
                 "+v"(r[3][0]), "+v"(r[3][1]), "+v"(r[3][2]), "+v"(r[3][3]));
}
#endif
#if defined(GM_NVIDIA)
// ld.shared.v4.f32 at shared-window byte address addr + OFF (addr from gm_smem_addr).
// PTX loads are synchronous to the program: ptxas inserts the scoreboard waits itself.
template <int OFF>
GM_DEVICE float4 gm_ld_shared_v4(unsigned addr) {
  float4 v;
  asm volatile("ld.shared.v4.f32 {%0, %1, %2, %3}, [%4+%5];\n"
               : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
               : "r"(addr), "n"(OFF)
               : "memory");
  return v;
}
#endif

// ---------------------------------------------------------------------------------------
// Appended for catalogue kernels 7 ... 10.
// GM_AMD_ASM: AMD *device* compilation, where gfx9 inline assembly can be emitted. The host
// pass of a full hipcc compile (and a CPU emulation of the kernels) takes the plain C++ path.
#if defined(GM_AMD) && defined(__HIP_DEVICE_COMPILE__)
#define GM_AMD_ASM 1
#endif

// Epilogue for four consecutive elements of C (16-byte aligned address):
// C = alpha * acc + beta * C, and C is not read when beta == 0 (BLAS rule: NaN or Inf in C
// must not leak into the result).
GM_DEVICE void gm_store_c4(float* c, float4 acc, float alpha, float beta) {
  float4 r = make_float4(alpha * acc.x, alpha * acc.y, alpha * acc.z, alpha * acc.w);
  if (beta != 0.0f) {
    const float4 old = GM_LD4(c);
    r.x = fmaf(beta, old.x, r.x);
    r.y = fmaf(beta, old.y, r.y);
    r.z = fmaf(beta, old.z, r.z);
    r.w = fmaf(beta, old.w, r.w);
  }
  GM_ST4(c, r);
}
// The same for one element.
GM_DEVICE void gm_store_c1(float* c, float acc, float alpha, float beta) {
  *c = beta != 0.0f ? fmaf(beta, *c, alpha * acc) : alpha * acc;
}
