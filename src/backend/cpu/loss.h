#pragma once
// The CPU's fused loss kernels (Backend::pointwise_loss, Backend::cross_entropy_rows and its
// backward; contracts in src/backend/backend.h). Compiled once, for the baseline; the float32
// and half cross-entropy rows call the capability-dispatched SIMD row kernels (loss_rows.cpp).
#include "backend/backend.h"

namespace st::backend::cpu {

bool pointwise_loss(backend::PointwiseLoss op, const Tensor& p, const Tensor& t, const Tensor& aux, double p0,
                    double p1, Tensor& out, Tensor& dp, Tensor& dt);
bool cross_entropy_rows(const Tensor& x, const Tensor& t, int64_t ignore_index, double scale, Tensor& loss, Tensor& lse,
                        Tensor& dx);
bool cross_entropy_rows_backward(const Tensor& x, const Tensor& t, const Tensor& lse, const Tensor& g,
                                 int64_t ignore_index, double scale, Tensor& dx);

}  // namespace st::backend::cpu
