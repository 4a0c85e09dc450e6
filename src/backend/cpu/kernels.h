#pragma once
// CPU kernel entry points; CpuBackend (cpu_backend.cpp) exposes them through the
// Backend table. The vectorised ones are compiled once per CPU capability and called through
// the table chosen at run time (dispatch.h); the rest are compiled once, for the baseline.
#include "backend/backend.h"
#include "backend/common/kernel_decls.h"
#include "backend/cpu/dispatch.h"

namespace st::backend::cpu {

// ---- dispatched per CPU capability (dispatch.h): elementwise (binary.cpp, unary.cpp, copy.cpp),
// reductions (reduce.cpp), softmax (softmax.cpp), layer norm (layer_norm.cpp), batch norm
// (batch_norm.cpp), attention softmax and tiled flash attention (attention.cpp),
// Adam/AdamW over every slot, contiguous float32 or float64 tensors of one dtype (optim.cpp),
// LSTM/GRU recurrences (rnn.cpp), the cross-entropy rows (loss_rows.cpp) ----
ST_CPU_DISPATCHED_KERNELS(ST_CPU_DECLARE_KERNEL)

// ---- compiled once: GEMM, random fills, the scans other than cumsum and Poisson sampling
// (scan.cpp), indexing and sorting (indexing.cpp), convolution and pooling (conv.cpp) ----
ST_BACKEND_SHARED_KERNELS
// Backend::index_range (indexing.cpp): a host scan of the int64 entries.
void index_range(const Tensor& idx, int64_t& lo, int64_t& hi);
// Backend::index_add (indexing.cpp); the CPU has it for every dtype.
void index_add(Tensor& out, const Tensor& index, const Tensor& src, int64_t outer, int64_t n, int64_t k, int64_t inner);

}  // namespace st::backend::cpu
