#include "spiraltorch/autocast.h"

#include <string>

#include "spiraltorch/error.h"

namespace st::autocast {

namespace {
thread_local State t_state;

bool active_for(const Tensor& t) {
  if (!t.defined()) return false;
  const DeviceType type = t.device().type;
  return type == DeviceType::CPU ? t_state.cpu_enabled : type == DeviceType::CUDA && t_state.cuda_enabled;
}
}  // namespace

State state() { return t_state; }
void set_state(const State& s) { t_state = s; }

bool is_enabled(DeviceType type) {
  return type == DeviceType::CPU ? t_state.cpu_enabled : type == DeviceType::CUDA && t_state.cuda_enabled;
}

Dtype dtype(DeviceType type) { return type == DeviceType::CPU ? t_state.cpu_dtype : t_state.cuda_dtype; }

Region::Region(DeviceType type, Dtype dt, bool enabled) : prev_(t_state) {
  if (dt != Dtype::Float16 && dt != Dtype::BFloat16) {
    throw ValueError(std::string("autocast: dtype must be float16 or bfloat16, got ") + dtype_name(dt));
  }
  if (type == DeviceType::CPU) {
    t_state.cpu_enabled = enabled;
    t_state.cpu_dtype = dt;
  } else if (type == DeviceType::CUDA) {
    t_state.cuda_enabled = enabled;
    t_state.cuda_dtype = dt;
  } else {
    throw ValueError("autocast: device_type must be 'cpu' or 'cuda'");
  }
}

Region::~Region() { t_state = prev_; }

Tensor to_lower(const Tensor& t) {
  if (!active_for(t) || t.dtype() != Dtype::Float32) return t;
  return t.to(dtype(t.device().type));
}

Tensor to_float(const Tensor& t) {
  if (!active_for(t) || (t.dtype() != Dtype::Float16 && t.dtype() != Dtype::BFloat16)) return t;
  return t.to(Dtype::Float32);
}

}  // namespace st::autocast
