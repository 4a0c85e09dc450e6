#pragma once
#include <cstdint>
#include <string>
#include <vector>

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

// The instruction set of the vectorised CPU kernels in use: "baseline" (x86-64-v2), "avx2"
// (x86-64-v3) or "avx512" (x86-64-v4); the best one this CPU supports, chosen at first use, unless
// SPIRALTORCH_CPU_CAPABILITY names one (an unknown name or one this CPU lacks throws). Non-x86
// builds have "baseline" only.
std::string cpu_capability();
// The capabilities this build has and this CPU runs, baseline first.
std::vector<std::string> cpu_capabilities();

}  // namespace st
