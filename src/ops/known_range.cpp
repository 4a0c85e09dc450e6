#include "ops/known_range.h"

#include <deque>
#include <memory>
#include <mutex>

#include "spiraltorch/autograd.h"
#include "spiraltorch/ops.h"

namespace st::detail {

namespace {

struct Entry {
  std::weak_ptr<Storage> storage;
  uint64_t version;
  int64_t lo, hi;
};

// The last kEntries copies; a training loop's targets and token ids are among the newest.
constexpr size_t kEntries = 256;
constexpr int64_t kMaxNumel = int64_t{1} << 20;  // two passes over at most 8 MiB of int64

std::mutex& table_mutex() {
  static std::mutex mu;
  return mu;
}
std::deque<Entry>& table() {
  static std::deque<Entry> entries;
  return entries;
}

}  // namespace

void remember_copied_range(const Tensor& src, const Tensor& dst) {
  if (src.device().type != DeviceType::CPU || dst.device().type == DeviceType::CPU) return;
  if (!is_integral(src.dtype()) || src.dtype() == Dtype::Bool) return;
  if (src.numel() == 0 || src.numel() > kMaxNumel) return;
  NoGradGuard ng;
  const auto lo = static_cast<int64_t>(amin(src).item()), hi = static_cast<int64_t>(amax(src).item());
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
