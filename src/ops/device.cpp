// Moving tensors between devices. The copy itself is the backend's copy entry of the
// non-CPU side (cudaMemcpyAsync for CUDA); the gradient is moved back.
#include "ops/common.h"

namespace st {

Tensor to_device(const Tensor& x, Device device) {
  if (x.device() == device) return x;
  Tensor out = Tensor::empty(x.shape(), x.dtype(), device);
  const Device side = x.device().type != DeviceType::CPU ? x.device() : device;
  backend::backend_for(side).copy(x, out);
  if (needs_grad({&x})) {
    const Device from = x.device();
    record(out, "ToDeviceBackward", {x}, [from](const Tensor& g) -> std::vector<Tensor> { return {to_device(g, from)}; });
  }
  return out;
}

}  // namespace st
