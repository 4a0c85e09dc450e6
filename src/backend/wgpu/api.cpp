#include "backend/wgpu/api.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <mutex>
#include <vector>

#include "core/shared_library.h"

#ifndef SPIRALTORCH_WGPU_LIBRARY_HINT
#define SPIRALTORCH_WGPU_LIBRARY_HINT ""
#endif

namespace st::backend::wgpu {
namespace {

constexpr const char* kLibName = "libwgpu_native-release.so";

std::vector<std::string> candidates() {
  std::vector<std::string> out;
  if (const char* env = std::getenv("SPIRALTORCH_WGPU_LIBRARY"); env && *env) out.emplace_back(env);
  // The installed module sits in site-packages/spiraltorch/; the wheel in site-packages/wgpu/.
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&candidates), &info) && info.dli_fname) {
    const auto here = std::filesystem::path(info.dli_fname).parent_path();
    out.push_back((here.parent_path() / "wgpu" / "resources" / kLibName).string());
  }
  if (*SPIRALTORCH_WGPU_LIBRARY_HINT) out.emplace_back(SPIRALTORCH_WGPU_LIBRARY_HINT);
  out.emplace_back(kLibName);
  return out;
}

// Mesa's lavapipe (Vulkan on the CPU) JIT-compiles shaders with its libLLVM. A process that
// also loaded a library exporting its own LLVM symbols (TensorFlow's libtensorflow_framework)
// would bind lavapipe's LLVM calls to those and crash in the first shader compile. Loading the
// lavapipe driver ourselves with RTLD_DEEPBIND, before the Vulkan loader does, makes it and its
// LLVM resolve their own symbols first; the loader then reuses this handle. Other drivers are
// left to the loader.
void preload_lavapipe() {
  std::vector<std::string> manifests;
  for (const char* var : {"VK_DRIVER_FILES", "VK_ICD_FILENAMES"}) {
    if (const char* env = std::getenv(var); env && *env) {
      std::string list(env);
      for (size_t at = 0; at <= list.size();) {
        const size_t end = std::min(list.find(':', at), list.size());
        if (end > at) manifests.push_back(list.substr(at, end - at));
        at = end + 1;
      }
    }
  }
  if (manifests.empty()) {
    for (const char* dir : {"/usr/share/vulkan/icd.d", "/etc/vulkan/icd.d", "/usr/local/share/vulkan/icd.d"}) {
      std::error_code ec;
      for (const auto& e : std::filesystem::directory_iterator(dir, ec)) manifests.push_back(e.path().string());
    }
  }
  for (const auto& m : manifests) {
    if (m.find("lvp_icd") == std::string::npos) continue;
    std::ifstream in(m);
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const size_t key = text.find("\"library_path\"");
    if (key == std::string::npos) continue;
    const size_t q0 = text.find('"', text.find(':', key) + 1);
    const size_t q1 = q0 == std::string::npos ? q0 : text.find('"', q0 + 1);
    if (q1 == std::string::npos) continue;
    std::string lib = text.substr(q0 + 1, q1 - q0 - 1);
    if (lib.find('/') != std::string::npos && lib.front() != '/') {  // relative to the manifest
      lib = (std::filesystem::path(m).parent_path() / lib).string();
    }
#ifdef RTLD_DEEPBIND
    dlopen(lib.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);  // kept for the process; failure is harmless
#endif
  }
}

}  // namespace

const Api* api(std::string& reason) {
  static std::once_flag once;
  static Api table;
  static const Api* loaded = nullptr;
  static std::string why;
  std::call_once(once, [] {
    preload_lavapipe();
    const st::detail::OpenedLibrary opened = st::detail::open_first(candidates());
    void* const handle = opened.handle;
    if (!handle) {
      why = "libwgpu_native could not be loaded (pip install wgpu, or set SPIRALTORCH_WGPU_LIBRARY); tried:" +
            opened.tried;
      return;
    }
    table.path = opened.path;
#define ST_WGPU_LOAD(name)                                                             \
  table.name = reinterpret_cast<decltype(&::name)>(dlsym(handle, #name));              \
  if (!table.name) {                                                                   \
    why = std::string("libwgpu_native at ") + table.path + " lacks the symbol " #name; \
    return;                                                                            \
  }
    ST_WGPU_FUNCTIONS(ST_WGPU_LOAD)
#undef ST_WGPU_LOAD
    loaded = &table;
  });
  if (!loaded) reason = why;
  return loaded;
}

}  // namespace st::backend::wgpu
