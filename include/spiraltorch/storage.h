#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>

#include "spiraltorch/device.h"

namespace st {

// A flat byte buffer shared by a tensor and all of its views. It either owns
// 64-byte aligned memory or wraps foreign memory (NumPy, DLPack) whose owner is
// kept alive by `release` until the last view is gone.
class Storage {
 public:
  static std::shared_ptr<Storage> allocate(size_t nbytes, Device device = {});
  static std::shared_ptr<Storage> wrap(void* data, size_t nbytes, Device device, std::function<void()> release);
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;
  ~Storage();

  void* data() const { return data_; }
  size_t nbytes() const { return nbytes_; }
  Device device() const { return device_; }
  // Bumped by every in-place write; autograd checks saved tensors against it.
  uint64_t version() const { return version_; }
  void bump_version() { ++version_; }
  // Memory its producer forbids writing (a read-only NumPy array or memmap, bytes, a JAX
  // buffer). In-place ops and optimizer steps refuse tensors on it instead of writing
  // through, which would fault on a read-only mapping or change an immutable object.
  bool read_only() const { return read_only_; }
  void set_read_only() { read_only_ = true; }

  Storage(void* data, size_t nbytes, Device device, std::function<void()> release)
      : data_(data), nbytes_(nbytes), device_(device), release_(std::move(release)) {}

 private:
  void* data_;
  size_t nbytes_;
  Device device_;
  std::function<void()> release_;
  uint64_t version_ = 0;
  bool read_only_ = false;
};

}  // namespace st
