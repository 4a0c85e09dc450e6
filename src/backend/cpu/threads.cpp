#include "spiraltorch/threads.h"

#include <cblas.h>
#include <omp.h>

#include <algorithm>
#include <string>

#include "spiraltorch/error.h"

namespace st {

int get_num_threads() { return omp_get_max_threads(); }

int max_num_threads() { return 4 * std::max(1, omp_get_num_procs()); }

void set_num_threads(int64_t n) {
  const int limit = max_num_threads();
  if (n < 1 || n > limit) {
    throw ValueError("set_num_threads: " + std::to_string(n) + " threads requested; the count must be in [1, " +
                     std::to_string(limit) + "] (4 per processor, " + std::to_string(omp_get_num_procs()) +
                     " processors here); the setting stays " + std::to_string(get_num_threads()));
  }
  omp_set_num_threads(static_cast<int>(n));
  scipy_openblas_set_num_threads(static_cast<int>(n));
}

}  // namespace st
