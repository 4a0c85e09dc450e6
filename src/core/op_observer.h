#pragma once
// The one slot through which built-in ops announce themselves. It lives in the core so that ops
// never include the runtime: the runtime's event bus (src/runtime/events.cpp) installs its
// TensorOp publisher here while someone listens and removes it when nobody does. An op pays one
// atomic load when no observer is installed.
#include <atomic>

#include "spiraltorch/tensor.h"

namespace st::op_observer {

// Called for each outermost observed op with its name and its input and output shapes. A plain
// function, not a std::function: ops load it with one relaxed atomic read.
using Observer = void (*)(const char* op_name, const Shape& input_shape, const Shape& output_shape);

namespace detail {
extern std::atomic<Observer> g_observer;
}  // namespace detail

// Installs `observer` (nullptr removes it); returns the one it replaced.
Observer install(Observer observer) noexcept;

// The installed observer, or nullptr.
inline Observer current() noexcept {
#ifdef SPIRALTORCH_NO_OP_EVENTS
  return nullptr;  // a build without op events, for measuring what the check costs
#else
  return detail::g_observer.load(std::memory_order_relaxed);
#endif
}

// Per thread: how many observed ops are running. Only depth 0 announces, so an op built from other
// ops is one event; an observer (or a caller that wants ops silent) raises it around its own work.
int& depth() noexcept;

// Scoped announcement of one built-in op: construct it on entry, call publish() with the result.
class OpEvent {
 public:
  explicit OpEvent(const char* name) noexcept : name_(name), observer_(current()) {
    if (observer_) [[unlikely]]
      outer_ = depth()++ == 0;
  }
  ~OpEvent() {
    if (observer_) [[unlikely]]
      --depth();
  }
  OpEvent(const OpEvent&) = delete;
  OpEvent& operator=(const OpEvent&) = delete;

  // The observer read on entry is called even if it was removed since: it is a plain function
  // that stays valid (the event bus then finds no listener).
  void publish(const Shape& input_shape, const Shape& output_shape) const {
    if (outer_) [[unlikely]]
      observer_(name_, input_shape, output_shape);
  }
  void publish(const Tensor& input, const Tensor& output) const {
    if (outer_) [[unlikely]]
      observer_(name_, input.shape(), output.shape());
  }

 private:
  const char* name_;
  Observer observer_;
  bool outer_ = false;
};

}  // namespace st::op_observer
