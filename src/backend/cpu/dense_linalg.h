#pragma once
// The CPU's dense factorizations (Backend::lu_inverse ... Backend::svd; contracts in
// src/backend/backend.h): LAPACK (lapack.h) once per matrix, the batch spread over the OpenMP pool
// by lapack::for_each_matrix. Compiled once, for the baseline.
#include <cstdint>
#include <span>

#include "spiraltorch/tensor.h"

namespace st::backend::cpu {

void lu_inverse(Tensor& a, int64_t batch, int64_t n, std::span<int> info);
void lu_solve(Tensor& a, Tensor& b, int64_t batch, int64_t n, int64_t k, std::span<int> info);
void lu_determinant(Tensor& a, int64_t batch, int64_t n, Tensor& det, Tensor& sign, Tensor& logabsdet);
void determinant_backward(const Tensor& a, const Tensor& g, int64_t batch, int64_t n, Tensor& out, std::span<int> info);
void triangular_solve(const Tensor& a, Tensor& b, int64_t batch, int64_t n, int64_t k, bool upper, bool unit);
void cholesky(Tensor& a, int64_t batch, int64_t n, bool upper, std::span<int> info);
void eigh(Tensor& a, int64_t batch, int64_t n, bool upper, bool vectors, Tensor& w, std::span<int> info);
void qr(Tensor& a, int64_t batch, int64_t m, int64_t n, bool complete, Tensor& q, Tensor& r, std::span<int> info);
void svd(Tensor& a, int64_t batch, int64_t m, int64_t n, bool full, Tensor& s, Tensor& u, Tensor& vh,
         std::span<int> info);

}  // namespace st::backend::cpu
