#pragma once
// wgpu kernel entry points (one .cpp per op family, WGSL in kernels/<family>.wgsl: elementwise,
// reduce, gemm, softmax (softmax, layer norm, attention softmax), attention (tiled flash
// attention; false where not taken), random, optim, indexing, sort, rnn, batch_norm, conv);
// WgpuBackend (backend.cpp) exposes them through the Backend table.
#include "backend/backend.h"
#include "backend/common/kernel_decls.h"
#include "backend/wgpu/codegen.h"

namespace st::backend::wgpu {

// P words for N-d strided operands over `shape` (see strided() in codegen.cpp).
std::vector<int32_t> strided_params(const Shape& shape, const std::vector<const Tensor*>& ops);

ST_BACKEND_SHARED_KERNELS
ST_BACKEND_DEVICE_KERNELS

// Fused softmax cross-entropy rows (Backend::cross_entropy_rows); false where not taken.
bool cross_entropy_rows(const Tensor& x, const Tensor& t, int64_t ignore_index, double scale, Tensor& loss, Tensor& lse,
                        Tensor& dx);
bool cross_entropy_rows_backward(const Tensor& x, const Tensor& t, const Tensor& lse, const Tensor& g,
                                 int64_t ignore_index, double scale, Tensor& dx);
// SPIRALTORCH_WGPU_FLASH=0 turns the tiled flash attention off (flash_enabled() false):
// scaled_dot_product_attention then takes the composite with its (L, S) scores, the before of
// bench/bench_wgpu_attention_long.py.
bool flash_enabled();
// Backend::flash_attention_masked and its backward (attention.cpp): an additive (B, H, L, S) mask
// read through its strides and/or dropout on the probabilities; false where not taken.
bool flash_attention_masked(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask, double scale,
                            bool causal, const DropoutDraw& dropout, Tensor& out, Tensor& lse);
bool flash_attention_masked_backward(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask,
                                     const Tensor& out, const Tensor& dout, const Tensor& lse, const Tensor& delta,
                                     double scale, bool causal, const DropoutDraw& dropout, Tensor& dq, Tensor& dk,
                                     Tensor& dv);

}  // namespace st::backend::wgpu
