#include "backend/wgpu/api.h"

#include <dlfcn.h>

#include <filesystem>
#include <mutex>
#include <vector>

#ifndef SPIRALTORCH_WGPU_LIBRARY_HINT
#define SPIRALTORCH_WGPU_LIBRARY_HINT ""
#endif

namespace st::wgpuk {
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

}  // namespace

const Api* api(std::string& reason) {
  static std::once_flag once;
  static Api table;
  static const Api* loaded = nullptr;
  static std::string why;
  std::call_once(once, [] {
    std::string tried;
    void* handle = nullptr;
    for (const auto& path : candidates()) {
      if (path.find('/') != std::string::npos && !std::filesystem::exists(path)) {
        tried += " " + path + " (missing)";
        continue;
      }
      handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
      if (handle) {
        table.path = path;
        break;
      }
      tried += std::string(" ") + path + " (" + dlerror() + ")";
    }
    if (!handle) {
      why = "libwgpu_native could not be loaded (pip install wgpu, or set SPIRALTORCH_WGPU_LIBRARY); tried:" + tried;
      return;
    }
#define ST_WGPU_LOAD(name)                                                           \
  table.name = reinterpret_cast<decltype(&::name)>(dlsym(handle, #name));            \
  if (!table.name) {                                                                 \
    why = std::string("libwgpu_native at ") + table.path + " lacks the symbol " #name; \
    return;                                                                          \
  }
    ST_WGPU_FUNCTIONS(ST_WGPU_LOAD)
#undef ST_WGPU_LOAD
    loaded = &table;
  });
  if (!loaded) reason = why;
  return loaded;
}

}  // namespace st::wgpuk
