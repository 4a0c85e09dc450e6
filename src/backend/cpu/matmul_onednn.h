#pragma once
// bfloat16 matrix products on the CPU through oneDNN (src/backend/cpu/matmul_onednn.cpp): bf16 operands,
// float32 accumulation, one bf16 rounding of the result, on CPUs whose instruction set multiplies
// bf16 natively (AVX512-BF16, AMX). Elsewhere, and in builds without oneDNN, available() is false
// and matmul keeps its float32 path.
#include <cstdint>
#include <string>

namespace st::backend::onednn {

// Built with oneDNN and the CPU has native bf16 dot products (oneDNN's effective ISA).
bool bf16_matmul_available();

// C[b] = op(A[b]) @ op(B[b]) for `batch` products: A is (m, k) (transposed: stored (k, m)) with
// leading dimension lda and batch stride sa (0: one A for every b), B likewise (k, n); C is
// contiguous (batch, m, n). Returns false (nothing written) when oneDNN has no implementation.
bool bf16_matmul(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const void* a, int64_t lda, int64_t sa,
                 const void* b, int64_t ldb, int64_t sb, void* c, int64_t batch);

// The same for float32 operands (float32 C); used by the CPU backend's gemm where its dispatch
// (backend/cpu/gemm_library.h) picks oneDNN.
bool f32_matmul(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const void* a, int64_t lda, int64_t sa,
                const void* b, int64_t ldb, int64_t sb, void* c, int64_t batch);

// oneDNN's effective instruction set on this CPU ("avx512_core_bf16", ...).
std::string effective_isa();

}  // namespace st::backend::onednn
