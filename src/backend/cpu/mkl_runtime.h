#pragma once
// Intel oneMKL's GEMMs: linked from MKL's static archives when the build found them
// (cmake/SpiralMKL.cmake; PyPI's mkl-static is a build requirement on Linux x86-64), else loaded at
// run time with dlopen from PyPI's `mkl` wheel (libmkl_rt, about 720 MB installed, so an extra:
// `pip install "spiraltorch[mkl]"`) or any libmkl_rt on the loader's path. A machine without
// either imports fine and says why.
// MKL runs on GNU OpenMP (its gnu_thread layer), the same runtime as every other CPU kernel here,
// with omp_get_max_threads() threads (one inside another parallel region).
#include <cstdint>
#include <string>

namespace st::backend::cpu::mkl {

// Whether MKL can be called. When SPIRALTORCH_MKL_LIBRARY names a file, that file alone is loaded
// (even in a build with MKL linked in); else the linked copy, else libmkl_rt.so.3 / .so.2 in the
// Python environment's lib/ next to the installed module, in the lib/ of the environment the build
// saw, then on the loader's search path.
bool available();
// "2026.2"-style version, or "" when unavailable.
std::string version();
// The libmkl_rt file loaded; "" when unavailable or linked statically.
std::string library_path();
// Whether the calls go to the copy linked into this library.
bool linked_statically();
// Why available() is false ("" when it is true).
std::string unavailable_reason();

// C[b] = alpha op(A[b]) op(B[b]) + beta C[b] for b < batch, row-major, float32 (f64 false) or
// float64, with leading dimensions and batch strides as the CPU backend's gemm entry. Throws
// DeviceUnavailableError when MKL is unavailable.
void gemm(bool f64, bool ta, bool tb, int64_t m, int64_t n, int64_t k, double alpha, const void* a, int64_t lda,
          int64_t sa, const void* b, int64_t ldb, int64_t sb, double beta, void* c, int64_t ldc, int64_t sc,
          int64_t batch);

}  // namespace st::backend::cpu::mkl
