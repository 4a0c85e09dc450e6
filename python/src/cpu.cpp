// spiraltorch._core host-memory counters (python/spiraltorch/cpu.py wraps them).
#include "convert.h"
#include "spiraltorch/memory.h"

namespace stpy {

void bind_cpu(nb::module_& m) {
  namespace mem = st::memory;
  m.def("_cpu_memory_allocated", &mem::cpu_allocated);
  m.def("_cpu_max_memory_allocated", &mem::cpu_max_allocated);
  m.def("_cpu_reset_peak_memory_stats", &mem::cpu_reset_peak);
  m.def("_cpu_memory_cached", &mem::cpu_cached);
  m.def("_cpu_empty_cache", &mem::cpu_empty_cache);
}

}  // namespace stpy
