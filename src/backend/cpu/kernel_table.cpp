// One capability's kernel table (dispatch.h): compiled with the kernels, once per capability.
#include "backend/cpu/dispatch.h"

namespace st::backend::cpu::CPU_CAPABILITY {  // compiled once per CPU capability (dispatch.h)
namespace {
#define ST_CPU_TABLE_ENTRY(name, ret, params, args) &name,
constexpr Kernels kTable{ST_CPU_DISPATCHED_KERNELS(ST_CPU_TABLE_ENTRY)};
#undef ST_CPU_TABLE_ENTRY
}  // namespace
}  // namespace st::backend::cpu::CPU_CAPABILITY

extern "C" const st::backend::cpu::Kernels* SPIRALTORCH_CPU_KERNELS_SYMBOL(CPU_CAPABILITY)() {
  return &st::backend::cpu::CPU_CAPABILITY::kTable;
}
