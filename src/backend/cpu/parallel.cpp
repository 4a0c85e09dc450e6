// st::parallel_for (spiraltorch/threads.h): the host-side loops' one way to use the CPU threads.
#include <omp.h>

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>

#include "spiraltorch/threads.h"

namespace st {

void parallel_for(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& body, int threads) {
  if (n <= 0) return;
  grain = std::max<int64_t>(1, grain);
  const int64_t ranges = (n + grain - 1) / grain;
  const int team = static_cast<int>(std::min<int64_t>(ranges, threads > 0 ? threads : get_num_threads()));
  if (team <= 1) {
    body(0, n);
    return;
  }
  std::exception_ptr error;
  std::mutex error_mutex;
  std::atomic<bool> failed{false};
#pragma omp parallel for num_threads(team) schedule(dynamic, 1)
  for (int64_t r = 0; r < ranges; ++r) {
    if (failed.load(std::memory_order_relaxed)) continue;
    try {
      body(r * grain, std::min(n, (r + 1) * grain));
    } catch (...) {
      const std::lock_guard<std::mutex> lock(error_mutex);
      if (!error) error = std::current_exception();
      failed.store(true, std::memory_order_relaxed);
    }
  }
  if (error) std::rethrow_exception(error);
}

}  // namespace st
