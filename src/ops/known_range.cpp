#include "ops/known_range.h"

#include <deque>
#include <memory>
#include <mutex>
#include <type_traits>
#include <utility>

namespace st::detail {

namespace {

struct Entry {
  std::weak_ptr<Storage> storage;
  uint64_t version;
  int64_t lo, hi;
};

// The last kEntries copies; a training loop's targets and token ids are among the newest.
constexpr size_t kEntries = 256;
constexpr int64_t kMaxNumel = int64_t{1} << 20;  // one pass over at most 8 MiB of int64

std::mutex& table_mutex() {
  static std::mutex mu;
  return mu;
}
std::deque<Entry>& table() {
  static std::deque<Entry> entries;
  return entries;
}

template <typename T>
std::pair<int64_t, int64_t> min_max(const T* p, int64_t n) {
  T mn = p[0], mx = p[0];
  for (int64_t i = 0; i < n; ++i) {
    mn = p[i] < mn ? p[i] : mn;
    mx = p[i] > mx ? p[i] : mx;
  }
  return {static_cast<int64_t>(mn), static_cast<int64_t>(mx)};
}

}  // namespace

void remember_copied_range(const Tensor& src, const Tensor& dst) {
  if (src.device().type != DeviceType::CPU || dst.device().type == DeviceType::CPU) return;
  if (!is_integral(src.dtype()) || src.dtype() == Dtype::Bool) return;
  if (src.numel() == 0 || src.numel() > kMaxNumel) return;
  // A plain loop, not amin/amax: those would publish op events for a copy the user made.
  const Tensor c = src.is_contiguous() ? src : src.contiguous();
  std::pair<int64_t, int64_t> r{0, 0};
  ST_DISPATCH_ARITH(c.dtype(), [&] {
    if constexpr (std::is_integral_v<scalar_t>) r = min_max(c.data<scalar_t>(), c.numel());
  });
  const auto [lo, hi] = r;
  std::lock_guard<std::mutex> lock(table_mutex());
  auto& t = table();
  std::erase_if(t, [](const Entry& e) { return e.storage.expired(); });
  if (t.size() >= kEntries) t.pop_front();
  t.push_back(Entry{dst.storage(), dst.storage()->version(), lo, hi});
}

bool known_within(const Tensor& t, int64_t lo, int64_t hi_exclusive) {
  if (!t.defined() || t.device().type == DeviceType::CPU) return false;
  const Storage* s = t.storage().get();
  std::lock_guard<std::mutex> lock(table_mutex());
  for (auto it = table().rbegin(); it != table().rend(); ++it) {
    if (const auto held = it->storage.lock(); held.get() == s) {
      return it->version == s->version() && it->lo >= lo && it->hi < hi_exclusive;
    }
  }
  return false;
}

}  // namespace st::detail
