// spiraltorch._core host-memory counters (python/spiraltorch/cpu.py wraps them).
#include "convert.h"
#include "spiraltorch/memory.h"

namespace stpy {

void bind_cpu(nb::module_& m) {
  namespace mem = st::memory;
  m.def("_cpu_memory_allocated", &mem::cpu_allocated,
        "Bytes held by live CPU storages (memory wrapped from NumPy/DLPack excluded).");
  m.def("_cpu_max_memory_allocated", &mem::cpu_max_allocated,
        "The peak of _cpu_memory_allocated since start or the last reset.");
  m.def("_cpu_reset_peak_memory_stats", &mem::cpu_reset_peak, "Restarts the peak from the current value.");
  m.def("_cpu_memory_cached", &mem::cpu_cached, "Bytes of freed large blocks kept for reuse.");
  m.def("_cpu_empty_cache", &mem::cpu_empty_cache, "Releases the cached blocks; returns how many bytes were released.");
}

}  // namespace stpy
