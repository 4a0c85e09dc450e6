#include "spiraltorch/device.h"

#include "spiraltorch/error.h"

namespace st {

Device Device::parse(const std::string& spec) {
  const auto colon = spec.find(':');
  const std::string kind = spec.substr(0, colon);
  int index = 0;
  if (colon != std::string::npos) {
    try {
      index = std::stoi(spec.substr(colon + 1));
    } catch (const std::exception&) {
      throw ValueError("device: bad device index in '" + spec + "'");
    }
  }
  if (kind == "cpu") return {DeviceType::CPU, index};
  if (kind == "cuda") return {DeviceType::CUDA, index};
  if (kind == "wgpu") return {DeviceType::WGPU, index};
  throw ValueError("device: unknown device '" + spec + "' (expected 'cpu', 'cuda[:N]' or 'wgpu')");
}

std::string Device::str() const {
  // A host device other than 0 (a stand-in used to test device placement) keeps its index.
  if (type == DeviceType::CPU) return index == 0 ? std::string("cpu") : "cpu:" + std::to_string(index);
  if (type == DeviceType::WGPU) return index == 0 ? std::string("wgpu") : "wgpu:" + std::to_string(index);
  return "cuda:" + std::to_string(index);
}

}  // namespace st
