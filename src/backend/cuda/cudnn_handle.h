#pragma once
// The cuDNN handle of the current device, bound to the current stream: one per device, made on
// first use (conv_cudnn.cu defines it; convolutions and attention share it). Builds with cuDNN only.
#include <cudnn.h>

namespace st::backend::cuda {

cudnnHandle_t cudnn_handle();

}  // namespace st::backend::cuda
