#pragma once
// bfloat16 matrix products on the CPU through oneDNN (src/nn/matmul_onednn.cpp): bf16 operands,
// float32 accumulation, one bf16 rounding of the result, on CPUs whose instruction set multiplies
// bf16 natively (AVX512-BF16, AMX). Elsewhere, and in builds without oneDNN, available() is false
// and matmul keeps its float32 path.
#include <cstdint>
#include <string>

namespace st::nn::onednn {

// Built with oneDNN and the CPU has native bf16 dot products (oneDNN's effective ISA).
bool bf16_matmul_available();

// C[b] = op(A[b]) @ op(B[b]) for `batch` products: A is (m, k) (transposed: stored (k, m)) with
// leading dimension lda and batch stride sa (0: one A for every b), B likewise (k, n); C is
// contiguous (batch, m, n). Returns false (nothing written) when oneDNN has no implementation.
bool bf16_matmul(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const void* a, int64_t lda,
                 int64_t sa, const void* b, int64_t ldb, int64_t sb, void* c, int64_t batch);

// The same for float32 operands (float32 C); used by the CPU backend's gemm where the dispatch
// below picks oneDNN.
bool f32_matmul(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const void* a, int64_t lda,
                int64_t sa, const void* b, int64_t ldb, int64_t sb, void* c, int64_t batch);

// float32 GEMM dispatch between OpenBLAS and oneDNN's matmul, measured on an AMD EPYC (Zen 4,
// AVX512-BF16) with 2 threads by bench/bench_gemm_dispatch.cpp (bench/results/gemm_dispatch_cpu.md):
// oneDNN was faster from about 2^20 multiply-adds per call (2x at 256^3, 5-15% on the transformer
// shapes, 10-20% on attention's batched 128x128x64 products and an LSTM step's 16x1024x256) and tied
// or won by up to 8% at 2048^3; OpenBLAS was faster on smaller products (call overhead: 64^3 took
// 0.005 vs 0.007 ms). On an Intel Xeon with AMX (oneDNN ISA avx512_core_amx, the H200 machine's host;
// bench/results/cpu_models_intel.md) the same held up to 1024^3, but at 2048^3 OpenBLAS was 26% faster
// (67.8 vs 92.0 ms), so there products of 2^32 multiply-adds and more go back to OpenBLAS.
// "auto" applies the rule; SPIRALTORCH_GEMM_BACKEND=openblas|onednn (or set_gemm_backend) forces
// one library.
inline constexpr double kF32OneDNNMinWork = 1048576.0;  // 2^20: m n k (times the batch) from here
inline constexpr double kF32AmxOpenBlasMinWork = 4294967296.0;  // 2^32: on AMX CPUs, OpenBLAS from here
// Whether a float32 C = op(A) op(B) of this geometry goes to oneDNN (built in, switch allows it, rule).
bool f32_gemm_prefers_onednn(int64_t m, int64_t n, int64_t k, int64_t batch);
// "auto", "openblas" or "onednn" (SPIRALTORCH_GEMM_BACKEND, or set_gemm_backend).
std::string gemm_backend();
void set_gemm_backend(const std::string& name);
// oneDNN's effective instruction set on this CPU ("avx512_core_bf16", ...).
std::string effective_isa();

}  // namespace st::nn::onednn
