#pragma once
// Mixed-precision regions, like torch.autocast. While a region is active for a device type,
// ops on the lower-precision list (matmul / bmm / linear / conv / einsum / attention) cast
// their float32 inputs on that device to the region's dtype (float16 or bfloat16), and ops on
// the float32 list (softmax, log_softmax, layer_norm, logsumexp, the losses) cast float16 /
// bfloat16 inputs up to float32. The casts are ordinary differentiable ops, so float32
// parameters stay the master weights and receive float32 gradients. The state is per thread.
#include "spiraltorch/tensor.h"

namespace st::autocast {

struct State {
  bool cpu_enabled = false, cuda_enabled = false;
  Dtype cpu_dtype = Dtype::BFloat16, cuda_dtype = Dtype::Float16;  // PyTorch's defaults
};

State state();  // this thread's state (saved by activation checkpointing)
void set_state(const State& s);
bool is_enabled(DeviceType type);
Dtype dtype(DeviceType type);

// Enters a region for one device type (dtype float16 or bfloat16; ValueError otherwise) and
// restores the previous state on destruction. enabled=false switches autocast off inside.
class Region {
 public:
  Region(DeviceType type, Dtype dtype, bool enabled = true);
  ~Region();
  Region(const Region&) = delete;
  Region& operator=(const Region&) = delete;

 private:
  State prev_;
};

// The op-list casts. to_lower: a float32 tensor on a device with an active region becomes
// the region's dtype; anything else is returned as is. to_float: a float16/bfloat16 tensor on
// such a device becomes float32.
Tensor to_lower(const Tensor& t);
Tensor to_float(const Tensor& t);

}  // namespace st::autocast
