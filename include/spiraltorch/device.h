#pragma once
#include <cstdint>
#include <string>

namespace st {

enum class DeviceType : uint8_t { CPU, CUDA, WGPU };

struct Device {
  DeviceType type = DeviceType::CPU;
  int index = 0;
  Device() = default;
  Device(DeviceType t, int i = 0) : type(t), index(i) {}
  // Parses "cpu", "cuda", "cuda:1", "wgpu".
  static Device parse(const std::string& spec);
  std::string str() const;
  bool operator==(const Device&) const = default;
  // Whether float64 tensors live here (not on wgpu: WGSL has no 64-bit floats).
  bool has_float64() const { return type != DeviceType::WGPU; }
};

}  // namespace st
