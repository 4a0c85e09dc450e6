#pragma once
// What the oneDNN-backed kernels (conv_onednn.cpp, rnn_onednn.cpp, matmul_onednn.cpp) share: whether oneDNN is
// built in, the process-wide switch between oneDNN and a layer's own kernels, and (when
// built) the engine, the per-thread stream, argument layouts and the scratchpad mode.
// Included only by those files: they alone see the oneDNN headers and defines.
#include <array>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "spiraltorch/error.h"
#include "spiraltorch/tensor.h"

#ifdef SPIRALTORCH_WITH_ONEDNN
#include <oneapi/dnnl/dnnl.hpp>
#endif

namespace st::backend::onednn::detail {

#ifdef SPIRALTORCH_WITH_ONEDNN
inline constexpr bool kBuilt = true;
inline const char* const kReason = "";
#else
inline constexpr bool kBuilt = false;
#ifndef SPIRALTORCH_ONEDNN_REASON
#define SPIRALTORCH_ONEDNN_REASON "oneDNN is not compiled into this build"
#endif
inline const char* const kReason = SPIRALTORCH_ONEDNN_REASON;
#endif

// "auto" or "onednn" (oneDNN where it applies) or the fallback's name (the layer's own
// kernels). Read from the environment variable by the first use, so a bad value is
// reported by the first layer call rather than at import time.
class BackendSwitch {
 public:
  BackendSwitch(const char* env, const char* op, const char* fallback) : env_(env), op_(op), fallback_(fallback) {}

  std::string name() {
    switch (mode()) {
      case kFallback:
        return fallback_;
      case kOneDNN:
        return "onednn";
      default:
        return "auto";
    }
  }
  void set(const std::string& name, const char* setter) {
    const std::optional<int> m = parse(name);
    if (!m) throw ValueError(std::string(setter) + ": expected " + choices() + ", got '" + name + "'");
    if (*m == kOneDNN && !kBuilt) {
      throw DeviceUnavailableError(std::string(setter) + ": oneDNN is not available: " + kReason);
    }
    mode_.store(*m);
  }
  // mode() first: a bad environment value is reported even in builds without oneDNN.
  bool use_onednn() { return mode() != kFallback && kBuilt; }

 private:
  static constexpr int kAuto = 0, kFallback = 1, kOneDNN = 2;

  std::string choices() const { return std::string("'auto', '") + fallback_ + "' or 'onednn'"; }
  std::optional<int> parse(const std::string& s) const {
    if (s == "auto") return kAuto;
    if (s == fallback_) return kFallback;
    if (s == "onednn") return kOneDNN;
    return std::nullopt;
  }
  int from_env() const {
    const char* v = std::getenv(env_);
    if (v == nullptr || *v == '\0') return kAuto;
    const std::optional<int> m = parse(v);
    if (!m) throw ValueError(std::string(op_) + ": " + env_ + " must be " + choices() + ", got '" + v + "'");
    if (*m == kOneDNN && !kBuilt) {
      throw DeviceUnavailableError(std::string(op_) + ": " + env_ + "=onednn but oneDNN is not available: " + kReason);
    }
    return *m;
  }
  int mode() {
    const int m = mode_.load(std::memory_order_relaxed);
    if (m >= 0) return m;
    int expected = -1;
    mode_.compare_exchange_strong(expected, from_env());
    return mode_.load();
  }

  const char* env_;
  const char* op_;
  const char* fallback_;
  std::atomic<int> mode_{-1};  // -1 until the environment variable has been read
};

// The key of a cached primitive: its kind and dims, flattened.
template <size_t N>
struct Key {
  std::array<int64_t, N> v;
  bool operator==(const Key&) const = default;
};
template <size_t N>
struct KeyHash {
  size_t operator()(const Key<N>& k) const {
    size_t h = 0;
    for (const int64_t x : k.v) h = h * 1000003u ^ std::hash<int64_t>{}(x);
    return h;
  }
};

#ifdef SPIRALTORCH_WITH_ONEDNN

// One CPU engine for the process. The primitive caches refer to it, so it must outlive them:
// each cache accessor calls engine() before creating its cache (statics die in reverse order).
inline const dnnl::engine& engine() {
  static const dnnl::engine e(dnnl::engine::kind::cpu, 0);
  return e;
}

// A CPU stream only orders executions; one per thread keeps concurrent calls from different
// threads independent (a stream object is not meant to be shared across threads).
inline dnnl::stream& stream() {
  thread_local dnnl::stream s(engine());
  return s;
}

// How a primitive wants one argument laid out, and the reorder between that layout and our
// plain one (plain -> wanted for inputs, wanted -> plain for outputs).
struct Arg {
  dnnl::memory::desc plain, want;
  std::optional<dnnl::reorder> reorder;
};
inline Arg input_arg(const dnnl::memory::desc& plain, const dnnl::memory::desc& want) {
  Arg a{plain, want, std::nullopt};
  if (!(want == plain)) a.reorder = dnnl::reorder(dnnl::reorder::primitive_desc(engine(), plain, engine(), want));
  return a;
}
inline Arg output_arg(const dnnl::memory::desc& plain, const dnnl::memory::desc& want) {
  Arg a{plain, want, std::nullopt};
  if (!(want == plain)) a.reorder = dnnl::reorder(dnnl::reorder::primitive_desc(engine(), want, engine(), plain));
  return a;
}

// Scratch memory comes from our allocator per call, so concurrent executions of one cached
// primitive never share it.
inline dnnl::primitive_attr user_scratchpad() {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return attr;
}

// The memory of one primitive call: our tensors wrapped in place, plus the reorder buffers
// and the scratchpad, which live (as our float32 tensors) until the call's Staging dies.
class Staging {
 public:
  explicit Staging(dnnl::stream& s) : s_(s) {}

  // The input `t` in the layout `a` wants: `t` itself, or a reordered copy.
  dnnl::memory in(const Arg& a, const Tensor& t) {
    dnnl::memory user = wrap(a.plain, t);
    if (!a.reorder) return user;
    dnnl::memory m = fresh(a.want);
    a.reorder->execute(s_, user, m);
    return m;
  }
  // Where a primitive writes the output `t`: `t` itself, or a buffer that flush() reorders into `t`.
  dnnl::memory out(const Arg& a, const Tensor& t) { return a.reorder ? fresh(a.want) : wrap(a.plain, t); }
  // The same, zeroed (oneDNN's RNN backward accumulates weight gradients into it).
  dnnl::memory out_zeroed(const Arg& a, const Tensor& t) {
    dnnl::memory m = out(a, t);
    std::memset(m.get_data_handle(), 0, a.reorder ? a.want.get_size() : a.plain.get_size());
    return m;
  }
  void flush(const Arg& a, dnnl::memory m, const Tensor& t) {
    if (!a.reorder) return;
    dnnl::memory user = wrap(a.plain, t);
    a.reorder->execute(s_, m, user);
  }
  void add_scratchpad(const dnnl::memory::desc& md, std::unordered_map<int, dnnl::memory>& args) {
    if (md.get_size() > 0) args.emplace(DNNL_ARG_SCRATCHPAD, fresh(md));
  }
  // oneDNN takes a non-const handle even for the arguments it only reads.
  static dnnl::memory wrap(const dnnl::memory::desc& md, const Tensor& t) {
    return dnnl::memory(md, engine(), t.raw_data());
  }

 private:
  dnnl::memory fresh(const dnnl::memory::desc& md) {
    const auto floats = static_cast<int64_t>((md.get_size() + sizeof(float) - 1) / sizeof(float));
    bufs_.push_back(Tensor::empty({floats}, Dtype::Float32));
    return dnnl::memory(md, engine(), bufs_.back().raw_data());
  }
  dnnl::stream& s_;
  std::vector<Tensor> bufs_;
};

// A oneDNN failure as our error, naming the op, the stage and the operands.
[[noreturn]] inline void rethrow(const dnnl::error& e, const char* op, const char* stage, const std::string& operands) {
  throw SpiralError(std::string(op) + ": oneDNN " + stage + " failed for " + operands + ": " + e.what() +
                    " (dnnl status " + std::to_string(static_cast<int>(e.status)) + ")");
}

#endif

}  // namespace st::backend::onednn::detail
