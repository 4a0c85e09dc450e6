#pragma once
// Loading an optional shared library at run time (wgpu-native, Intel MKL): the first candidate
// that dlopen accepts, and why each one before it failed, for the "unavailable because" message.
#include <dlfcn.h>

#include <filesystem>
#include <string>
#include <vector>

namespace st::detail {

struct OpenedLibrary {
  void* handle = nullptr;  // null when no candidate loaded; kept open for the process
  std::string path;        // the candidate that loaded
  std::string tried;       // " <path> (<why>)" per failed candidate
};

// Tries `candidates` in order with RTLD_NOW | RTLD_LOCAL. A candidate naming a folder (a '/')
// that does not exist is skipped as "(missing)"; a bare file name goes to the loader's search.
inline OpenedLibrary open_first(const std::vector<std::string>& candidates) {
  OpenedLibrary out;
  for (const auto& path : candidates) {
    if (path.find('/') != std::string::npos && !std::filesystem::exists(path)) {
      out.tried += " " + path + " (missing)";
      continue;
    }
    out.handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (out.handle) {
      out.path = path;
      return out;
    }
    const char* why = dlerror();
    out.tried += " " + path + " (" + (why ? why : "dlopen failed") + ")";
  }
  return out;
}

}  // namespace st::detail
