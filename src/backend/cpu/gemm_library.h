#pragma once
// Which library computes a GEMM on the CPU: OpenBLAS (scipy-openblas32, always built in), oneDNN's
// matmul (when the build found oneDNN) or Intel oneMKL (when libmkl_rt loads at run time,
// backend/cpu/mkl_runtime.h). The float32 rule, from bench/bench_gemm_dispatch.cpp and
// bench/bench_cpu.py (bench/results/gemm_dispatch_cpu.md, gemm_vs_torch_intel.md), 2 threads:
// - below 2^20 multiply-adds OpenBLAS (lowest call overhead: 64^3 took 0.005 vs oneDNN's 0.007 ms);
// - on Intel CPUs with MKL loadable, MKL: there PyTorch's MKL beat OpenBLAS and oneDNN at 10 of
//   the 12 measured transformer products and every square size from 256 (0.85-0.98x); on AMD
//   CPUs MKL is not used (OpenBLAS/oneDNN beat it there by 1.05-1.33x);
// - otherwise oneDNN (2x OpenBLAS at 256^3, 5-20% on transformer and attention shapes), except
//   products of 2^32 multiply-adds and more on AMX CPUs, where OpenBLAS was 26% faster at 2048^3.
// float64 always goes to OpenBLAS unless MKL is forced. SPIRALTORCH_GEMM_BACKEND (or
// set_gemm_backend) = auto | openblas | onednn | mkl; a forced library that is missing is an error.
#include <cstdint>
#include <string>

namespace st::backend::cpu {

enum class GemmLibrary { OpenBlas, OneDNN, Mkl };

inline constexpr double kGemmSmallWork = 1048576.0;          // 2^20 multiply-adds (m n k times the batch)
inline constexpr double kAmxOpenBlasMinWork = 4294967296.0;  // 2^32: on AMX CPUs, OpenBLAS from here

// "openblas", "onednn" or "mkl".
const char* gemm_library_name(GemmLibrary lib);
// The library for a float32 C = op(A) op(B) of this geometry under the switch and the rule above.
GemmLibrary f32_gemm_library(int64_t m, int64_t n, int64_t k, int64_t batch);
// The library for float64 products: MKL when forced, else OpenBLAS.
GemmLibrary f64_gemm_library();
// "auto", "openblas", "onednn" or "mkl".
std::string gemm_backend();
void set_gemm_backend(const std::string& name);
// The CPU's vendor is Intel (the rule's MKL condition).
bool cpu_is_intel();

}  // namespace st::backend::cpu
