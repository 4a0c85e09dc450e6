#include "core/op_observer.h"

namespace st::op_observer {

namespace detail {
std::atomic<Observer> g_observer{nullptr};
}  // namespace detail

Observer install(Observer observer) noexcept {
  return detail::g_observer.exchange(observer, std::memory_order_relaxed);
}

int& depth() noexcept {
  thread_local int d = 0;
  return d;
}

}  // namespace st::op_observer
