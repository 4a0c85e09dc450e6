// The choice of the CPU kernels' capability (dispatch.h) and the st::backend::cpu entry points that
// forward to the chosen table. Compiled once, for the baseline.
#include "backend/cpu/dispatch.h"

#include <cctype>
#include <cstdlib>

#include "backend/cpu/kernels.h"
#include "spiraltorch/device.h"
#include "spiraltorch/error.h"

// The tables of the capabilities this build compiled (CMake defines SPIRALTORCH_CPU_HAS_<CAP>).
extern "C" {
#if SPIRALTORCH_CPU_HAS_BASELINE
const st::backend::cpu::Kernels* SPIRALTORCH_CPU_KERNELS_SYMBOL(baseline)();
#endif
#if SPIRALTORCH_CPU_HAS_AVX2
const st::backend::cpu::Kernels* SPIRALTORCH_CPU_KERNELS_SYMBOL(avx2)();
#endif
#if SPIRALTORCH_CPU_HAS_AVX512
const st::backend::cpu::Kernels* SPIRALTORCH_CPU_KERNELS_SYMBOL(avx512)();
#endif
}

namespace st::backend::cpu {

namespace {

constexpr Capability kAll[] = {Capability::Baseline, Capability::Avx2, Capability::Avx512};

const Kernels* compiled_table(Capability c) {
  switch (c) {
#if SPIRALTORCH_CPU_HAS_BASELINE
    case Capability::Baseline:
      return SPIRALTORCH_CPU_KERNELS_SYMBOL(baseline)();
#endif
#if SPIRALTORCH_CPU_HAS_AVX2
    case Capability::Avx2:
      return SPIRALTORCH_CPU_KERNELS_SYMBOL(avx2)();
#endif
#if SPIRALTORCH_CPU_HAS_AVX512
    case Capability::Avx512:
      return SPIRALTORCH_CPU_KERNELS_SYMBOL(avx512)();
#endif
    default:
      return nullptr;
  }
}

std::string names(CapabilitySet set) {
  std::string s;
  for (const Capability c : kAll) {
    if (set & capability_bit(c)) s += (s.empty() ? "" : ", ") + std::string(capability_name(c));
  }
  return s.empty() ? "none" : s;
}

// What each capability asks of the host, in Capability order (the messages of select_capability).
constexpr const char* kRequirement[kNumCapabilities] = {"x86-64-v2", "x86-64-v3: AVX2, FMA, F16C, BMI2",
                                                        "x86-64-v4: AVX-512 F/BW/CD/DQ/VL"};
const char* requirement(Capability c) { return kRequirement[static_cast<int>(c)]; }

struct Active {
  Capability capability;
  const Kernels* table;
};

const Active& active() {
  static const Active a = [] {
    const Capability c =
        select_capability(std::getenv("SPIRALTORCH_CPU_CAPABILITY"), host_capabilities(), built_capabilities());
    return Active{c, compiled_table(c)};
  }();
  return a;
}

}  // namespace

const char* capability_name(Capability c) {
  constexpr const char* kName[kNumCapabilities] = {"baseline", "avx2", "avx512"};
  return kName[static_cast<int>(c)];
}

CapabilitySet host_capabilities() {
  CapabilitySet s = capability_bit(Capability::Baseline);  // the library itself needs it
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  // libgcc's checks include the OS's support for the vector registers (XGETBV).
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 12
  const bool v3 = __builtin_cpu_supports("x86-64-v3");
  const bool v4 = __builtin_cpu_supports("x86-64-v4");
#else
  const bool v3 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("bmi") &&
                  __builtin_cpu_supports("bmi2");
  const bool v4 = v3 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                  __builtin_cpu_supports("avx512cd") && __builtin_cpu_supports("avx512dq") &&
                  __builtin_cpu_supports("avx512vl");
#endif
  if (v3) s |= capability_bit(Capability::Avx2);
  if (v3 && v4) s |= capability_bit(Capability::Avx512);
#endif
  return s;
}

CapabilitySet built_capabilities() {
  CapabilitySet s = 0;
  for (const Capability c : kAll) {
    if (compiled_table(c)) s |= capability_bit(c);
  }
  return s;
}

Capability select_capability(const char* requested, CapabilitySet host, CapabilitySet built) {
  const CapabilitySet usable = host & built;
  std::string want = requested ? requested : "";
  for (char& ch : want) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  if (want.empty() || want == "auto" || want == "default") {
    for (int i = kNumCapabilities - 1; i >= 0; --i) {
      if (usable & capability_bit(static_cast<Capability>(i))) return static_cast<Capability>(i);
    }
    throw DeviceUnavailableError("cpu: no CPU kernels this build has (" + names(built) + ") run on this CPU (" +
                                 names(host) + ")");
  }
  for (const Capability c : kAll) {
    if (want != capability_name(c)) continue;
    if (!(built & capability_bit(c))) {
      throw DeviceUnavailableError("SPIRALTORCH_CPU_CAPABILITY=" + std::string(requested) + ": this build has no " +
                                   capability_name(c) + " kernels (it has " + names(built) + ")");
    }
    if (!(host & capability_bit(c))) {
      throw DeviceUnavailableError("SPIRALTORCH_CPU_CAPABILITY=" + std::string(requested) + ": this CPU lacks " +
                                   requirement(c) + " (it runs " + names(usable) + ")");
    }
    return c;
  }
  throw ValueError("SPIRALTORCH_CPU_CAPABILITY=" + std::string(requested) +
                   ": unknown capability (expected auto, baseline, avx2 or avx512)");
}

const Kernels& kernels() { return *active().table; }
Capability active_capability() { return active().capability; }

const Kernels* kernels_for(Capability c) {
  return (host_capabilities() & capability_bit(c)) ? compiled_table(c) : nullptr;
}

// The st::backend::cpu entry points (kernels.h): one call through the chosen table.
#define ST_CPU_FORWARD_KERNEL(name, ret, params, args) \
  ret name params { return kernels().name args; }
ST_CPU_DISPATCHED_KERNELS(ST_CPU_FORWARD_KERNEL)
#undef ST_CPU_FORWARD_KERNEL

}  // namespace st::backend::cpu

namespace st {

std::string cpu_capability() { return backend::cpu::capability_name(backend::cpu::active_capability()); }

std::vector<std::string> cpu_capabilities() {
  std::vector<std::string> out;
  const backend::cpu::CapabilitySet usable = backend::cpu::host_capabilities() & backend::cpu::built_capabilities();
  for (const backend::cpu::Capability c : backend::cpu::kAll) {
    if (usable & backend::cpu::capability_bit(c)) out.emplace_back(backend::cpu::capability_name(c));
  }
  return out;
}

}  // namespace st
