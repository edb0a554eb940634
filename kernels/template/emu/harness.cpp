// emu/harness.cpp: runs kernels/template/sgemm_tile.cu on the CPU (see emu/gemm_port.h).
// Build: g++ -std=c++20 -pthread -I kernels/template/emu -I kernels/template -D... harness.cpp
// Usage:
//   harness 0 M N K alpha beta lenA lenB lenC in.bin out.bin            (sgemm_tile)
//   harness 1 M N K alpha beta ta tb lda ldb ldc sa sb sc batch gz
//           lenA lenB lenC in.bin out.bin                               (batched, GM_BATCHED=1)
// in.bin holds A, B, C as float32 (lenA, lenB, lenC elements); out.bin receives C.
// Each array is its own exact-size allocation, so the address sanitizer sees any
// access outside it. Blocks run one after another; the threads of a block run together.
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <thread>
#include <vector>

#include "sgemm_tile.cu"

// One pool of `threads` std::threads runs every block in turn; a barrier after each block
// keeps blocks apart (the kernel's __shared__ arrays are statics shared by all blocks).
static void run_grid(unsigned gx, unsigned gy, unsigned gz, unsigned threads,
                     const std::function<void()>& body) {
  gridDim = {gx, gy, gz};
  blockDim = {threads, 1, 1};
  std::barrier<> bar(threads);
  gm_emu_barrier = &bar;
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      threadIdx = {t, 0, 0};
      for (unsigned z = 0; z < gz; ++z)
        for (unsigned y = 0; y < gy; ++y)
          for (unsigned x = 0; x < gx; ++x) {
            blockIdx = {x, y, z};
            body();
            bar.arrive_and_wait();
          }
    });
  for (auto& th : pool) th.join();
}

static float* read_array(FILE* f, long n) {
  float* p = static_cast<float*>(std::malloc(sizeof(float) * n));
  if (std::fread(p, sizeof(float), n, f) != static_cast<size_t>(n)) std::exit(3);
  return p;
}

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  const int mode = std::atoi(argv[1]);
  int a = 2;
  auto next_i = [&] { return std::atoll(argv[a++]); };
  auto next_f = [&] { return static_cast<float>(std::atof(argv[a++])); };
  const int M = next_i(), N = next_i(), K = next_i();
  const float alpha = next_f(), beta = next_f();
  int ta = 0, tb = 0, lda = 0, ldb = 0, ldc = 0, batch = 1, gz = 1;
  long long sa = 0, sb = 0, sc = 0;
  if (mode == 1) {
    if (argc != 22) return 2;
    ta = next_i(); tb = next_i(); lda = next_i(); ldb = next_i(); ldc = next_i();
    sa = next_i(); sb = next_i(); sc = next_i(); batch = next_i(); gz = next_i();
  } else if (argc != 12) {
    return 2;
  }
  const long lenA = next_i(), lenB = next_i(), lenC = next_i();
  FILE* in = std::fopen(argv[a++], "rb");
  if (!in) return 3;
  float* A = read_array(in, lenA);
  float* B = read_array(in, lenB);
  float* C = read_array(in, lenC);
  std::fclose(in);

  const unsigned gx = (N + BN - 1) / BN, gy = (M + BM - 1) / BM;
#if GM_BATCHED
  if (mode != 1) return 2;
  auto entry = ta ? (tb ? sgemm_tile_batched_tt : sgemm_tile_batched_tn)
                  : (tb ? sgemm_tile_batched_nt : sgemm_tile_batched_nn);
  run_grid(gx, gy, gz, THREADS, [&] {
    entry(M, N, K, alpha, A, lda, sa, B, ldb, sb, beta, C, ldc, sc, batch);
  });
#else
  if (mode != 0) return 2;
  run_grid(gx, gy, 1, THREADS, [&] { sgemm_tile(M, N, K, alpha, A, B, beta, C); });
#endif
  FILE* out = std::fopen(argv[a++], "wb");
  if (!out) return 3;
  std::fwrite(C, sizeof(float), lenC, out);
  std::fclose(out);
  std::free(A); std::free(B); std::free(C);
  return 0;
}
