#include "spiraltorch/storage.h"

#include <cstdlib>
#include <new>
#include <string>

#include "core/host_cache.h"
#include "spiraltorch/cuda.h"
#include "spiraltorch/error.h"
#include "spiraltorch/wgpu.h"

namespace st {

std::shared_ptr<Storage> Storage::allocate(size_t nbytes, Device device) {
  if (device.type == DeviceType::CUDA) {
    // The CUDA caching allocator (src/backend/cuda/runtime.cu); a build without CUDA throws
    // DeviceUnavailableError with the reason.
    const int index = device.index;
    void* p = cuda::allocate(nbytes, index);
    return std::make_shared<Storage>(p, nbytes, device, [p, index] { cuda::release(p, index); });
  }
  if (device.type == DeviceType::WGPU) {
    // The wgpu caching allocator (src/backend/wgpu/context.cpp): a device-virtual address that
    // the backend resolves to (buffer, offset); a build without wgpu throws with the reason.
    if (device.index != 0) throw DeviceUnavailableError("allocate: device " + device.str() + " does not exist");
    void* p = wgpu::allocate(nbytes);
    return std::make_shared<Storage>(p, nbytes, device, [p] { wgpu::release(p); });
  }
  if (device.type != DeviceType::CPU) {
    throw DeviceUnavailableError("allocate: device " + device.str() + " is not available in this build");
  }
  constexpr size_t kAlign = 64;
  const size_t padded = ((nbytes + kAlign - 1) / kAlign) * kAlign;
  void* p = nullptr;
  try {
    p = host_cache::acquire(padded);
  } catch (const std::bad_alloc&) {
    // A typed error the caller can catch next to the rest of the hierarchy.
    throw OutOfMemoryError("allocate: cannot allocate " + std::to_string(nbytes) + " bytes on cpu");
  }
  return std::make_shared<Storage>(p, nbytes, device, [p, padded] { host_cache::release(p, padded); });
}

std::shared_ptr<Storage> Storage::wrap(void* data, size_t nbytes, Device device, std::function<void()> release) {
  return std::make_shared<Storage>(data, nbytes, device, std::move(release));
}

Storage::~Storage() {
  if (release_) release_();
}

}  // namespace st
