#pragma once
// Which dtypes a kernel object compiles. Integer and bool loops gain little from wider vectors, yet
// every op x integer dtype x loop shape instantiated per capability was most of the kernels' build
// time (binary.cpp: 76 s of CPU for the baseline, 101 s for avx2). So only the baseline objects
// compile them, and the avx2/avx512 kernels hand integer, bool and comparison work to the baseline
// table: the same results (the baseline kernels are the reference the others are tested against).
#include "backend/cpu/dispatch.h"

extern "C" const st::backend::cpu::Kernels* SPIRALTORCH_CPU_KERNELS_SYMBOL(baseline)();

namespace st::backend::cpu::CPU_CAPABILITY {

// ST_CPU_BASELINE_OBJECT is defined when compiling the baseline objects (SpiralCpuKernels.cmake). The
// kernels test it with #ifdef, not `if constexpr`: outside a template both branches would be
// instantiated, which is the cost this saves.
#ifdef ST_CPU_BASELINE_OBJECT
inline constexpr bool kBaselineObject = true;
#else
inline constexpr bool kBaselineObject = false;
#endif

// The baseline table, for the work this object leaves to it (never called from the baseline itself).
inline const Kernels& baseline_kernels() { return *SPIRALTORCH_CPU_KERNELS_SYMBOL(baseline)(); }

}  // namespace st::backend::cpu::CPU_CAPABILITY
