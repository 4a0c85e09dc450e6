#pragma once
// Whether work queued now for a device is being captured into a CUDA graph. Host reads of device
// values (index bounds checks, the optimizers' non-finite check) would invalidate the capture, so
// callers skip or refuse them while this is true.
#include "spiraltorch/cuda.h"
#include "spiraltorch/device.h"

namespace st::detail {

inline bool capturing(const Device& d) {
  return d.type == DeviceType::CUDA && cuda::is_current_stream_capturing(d.index);
}

}  // namespace st::detail
