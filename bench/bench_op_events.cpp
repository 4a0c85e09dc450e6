// What the TensorOp event check costs a tiny op: 1e5 additions of two 4-element float32 tensors,
// timed in repeats. Built twice (see CMakeLists.txt): bench_op_events has the check (one atomic
// load per op when nobody listens), bench_op_events_baseline is the same library with the ops
// compiled without it. bench/bench_op_events.py runs both alternately and reports the ratio.
// Usage: bench_op_events [ops_per_repeat=100000] [repeats=15] [--listener]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "spiraltorch/ops.h"
#include "spiraltorch/runtime/events.h"

int main(int argc, char** argv) {
  const long n = argc > 1 ? std::atol(argv[1]) : 100000;
  const int repeats = argc > 2 ? std::atoi(argv[2]) : 15;
  const bool listener = argc > 3 && std::strcmp(argv[3], "--listener") == 0;
  long events = 0;
  if (listener) st::events::subscribe("TensorOp", [&events](const st::events::Event&) { ++events; });
  const st::Tensor a = st::Tensor::from_vector(std::vector<float>{1, 2, 3, 4}, {4});
  const st::Tensor b = st::Tensor::from_vector(std::vector<float>{4, 3, 2, 1}, {4});
  double sink = 0.0;
  for (long i = 0; i < n / 10; ++i) sink += st::add(a, b).numel();  // warm-up
  std::vector<double> ns_per_op;
  for (int r = 0; r < repeats; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    for (long i = 0; i < n; ++i) {
      const st::Tensor c = st::add(a, b);
      sink += static_cast<double>(c.numel());
    }
    const auto t1 = std::chrono::steady_clock::now();
    ns_per_op.push_back(std::chrono::duration<double, std::nano>(t1 - t0).count() / static_cast<double>(n));
  }
  std::sort(ns_per_op.begin(), ns_per_op.end());
#ifdef SPIRAL_BENCH_BASELINE
  const char* variant = "no-check";
#else
  const char* variant = listener ? "listener" : "check";
#endif
  std::printf("%s median_ns=%.2f min_ns=%.2f ops=%ld repeats=%d events=%ld sink=%.0f\n", variant,
              ns_per_op[ns_per_op.size() / 2], ns_per_op.front(), n, repeats, events, sink);
  return 0;
}
