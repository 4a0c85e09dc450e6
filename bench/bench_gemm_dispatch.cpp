// float32 GEMM on the CPU, OpenBLAS (the CPU backend's gemm with SPIRALTORCH_GEMM_BACKEND's switch
// set to "openblas", OpenMP-split as in a training step) against oneDNN's matmul (the cached
// primitives of src/backend/cpu/matmul_onednn.cpp) and Intel MKL (when libmkl_rt loads: pip install mkl),
// all on the same threads, and the backend's gemm under the "auto" rule. Prints one table row per
// shape with the fastest library; bench/results/gemm_dispatch_cpu.md holds a run and
// src/backend/cpu/gemm_library.h the rule drawn from it (issue #20).
//
// Build: cmake -DSPIRALTORCH_BUILD_BENCH=ON ... && ninja bench_gemm_dispatch
// Run:   OMP_NUM_THREADS=2 ./bench_gemm_dispatch
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "backend/cpu/gemm_library.h"
#include "backend/cpu/mkl_runtime.h"
#include "backend/cpu/matmul_onednn.h"
#include "spiraltorch/spiraltorch.h"

namespace {

struct Shape3 {
  const char* what;
  int64_t m, n, k;
  bool ta, tb;
  int64_t batch = 1;
};

template <typename F>
double median_ms(F f, int reps) {
  f();
  std::vector<double> t;
  for (int r = 0; r < 7; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < reps; ++i) f();
    t.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count() / reps);
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

}  // namespace

int main() {
  std::vector<Shape3> shapes;
  for (int64_t n : {256, 512, 1024, 2048}) shapes.push_back({"square", n, n, n, false, false});
  // The LM of bench_cpu_models.py (tokens 1024, d 256, FF 1024, vocab 4096): forward x W^T, input
  // gradient g W, weight gradient g^T x.
  for (auto [o, i] : {std::pair<int64_t, int64_t>{768, 256}, {1024, 256}, {256, 1024}, {4096, 256}}) {
    shapes.push_back({"linear fwd", 1024, o, i, false, true});
    shapes.push_back({"linear dgrad", 1024, i, o, false, false});
    shapes.push_back({"linear wgrad", o, i, 1024, true, false});
  }
  // Attention's batched products (B*heads = 32, T = 128, head dim 64), an LSTM step's gate GEMM
  // and small squares, where call overhead matters.
  shapes.push_back({"attn q k^T", 128, 128, 64, false, true, 32});
  shapes.push_back({"attn p v", 128, 64, 128, false, false, 32});
  shapes.push_back({"lstm step", 16, 1024, 256, false, true});
  for (int64_t n : {32, 64, 128}) shapes.push_back({"square", n, n, n, false, false});
  const bool mkl = st::backend::cpu::mkl::available();
  std::printf(
      "threads %d, oneDNN ISA %s, MKL %s\n"
      "| shape | m | n | k | OpenBLAS ms | oneDNN ms | MKL ms | fastest | dispatch (auto) ms |\n"
      "|---|---:|---:|---:|---:|---:|---:|---|---:|\n",
      omp_get_max_threads(), st::backend::onednn::effective_isa().c_str(),
      mkl ? st::backend::cpu::mkl::version().c_str() : st::backend::cpu::mkl::unavailable_reason().c_str());
  auto& be = st::backend::cpu_backend();
  for (const Shape3& s : shapes) {
    const int64_t B = s.batch;
    std::vector<float> a(B * s.m * s.k, 0.5f), b(B * s.k * s.n, 0.25f), c(B * s.m * s.n);
    const int64_t lda = s.ta ? s.m : s.k, ldb = s.tb ? s.k : s.n;
    const int64_t sa = B > 1 ? s.m * s.k : 0, sb = B > 1 ? s.k * s.n : 0;
    const double flops = 2.0 * s.m * s.n * s.k * B;
    const int reps = std::max<int>(1, static_cast<int>(2e9 / flops));
    auto backend_gemm = [&] {
      be.gemm(st::Dtype::Float32, s.ta, s.tb, s.m, s.n, s.k, 1.0, a.data(), lda, s.m * s.k, b.data(), ldb, s.k * s.n,
              0.0, c.data(), s.n, s.m * s.n, B);
    };
    st::backend::cpu::set_gemm_backend("openblas");
    const double blas = median_ms(backend_gemm, reps);
    double mkl_ms = -1;
    if (mkl) {
      st::backend::cpu::set_gemm_backend("mkl");
      mkl_ms = median_ms(backend_gemm, reps);
    }
    st::backend::cpu::set_gemm_backend("auto");
    double dnn = -1;
    if (st::backend::onednn::f32_matmul(s.ta, s.tb, s.m, s.n, s.k, a.data(), lda, sa, b.data(), ldb, sb, c.data(), B)) {
      dnn = median_ms([&] {
        st::backend::onednn::f32_matmul(s.ta, s.tb, s.m, s.n, s.k, a.data(), lda, sa, b.data(), ldb, sb, c.data(), B);
      }, reps);
    }
    const double autod = median_ms(backend_gemm, reps);
    const char* fastest = "OpenBLAS";
    double best = blas;
    if (dnn > 0 && dnn < best) {
      best = dnn;
      fastest = "oneDNN";
    }
    if (mkl_ms > 0 && mkl_ms < best) fastest = "MKL";
    std::printf("| %s%s | %lld | %lld | %lld | %.3f | %.3f | %.3f | %s | %.3f |\n", s.what,
                B > 1 ? (" x" + std::to_string(B)).c_str() : "", static_cast<long long>(s.m),
                static_cast<long long>(s.n), static_cast<long long>(s.k), blas, dnn, mkl_ms, fastest, autod);
  }
  return 0;
}
