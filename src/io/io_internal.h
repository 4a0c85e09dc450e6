#pragma once
// Helpers shared by the checkpoint formats (src/io only).
#include <nlohmann/json.hpp>

#include <bit>
#include <chrono>
#include <filesystem>
#include <vector>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "spiraltorch/error.h"
#include "spiraltorch/io/checkpoint.h"

namespace st::io::detail {

static_assert(std::endian::native == std::endian::little, "checkpoint formats assume a little-endian host");

using json = nlohmann::json;
using ordered_json = nlohmann::ordered_json;

// `s` with invalid UTF-8 and control bytes replaced by \xNN escapes, so messages built
// from hostile bytes stay printable (and convertible to Python str).
std::string printable(const std::string& s);

// Raises CheckpointError("<what>: <path>: <reason>").
[[noreturn]] inline void fail(const std::string& what, const std::string& path, const std::string& reason) {
  throw CheckpointError(printable(what + ": " + path + ": " + reason));
}

// Nesting limit for every JSON document we read; legitimate files need at most 4.
inline constexpr int kMaxJsonDepth = 64;

// Limits on JSON we read, applied before the document is held in memory (a parsed document takes
// about 10x its text): headers, manifests, indexes and trace lines hold a few values per tensor or
// event; JSON state dicts hold every weight (larger models belong in safetensors).
inline constexpr uint64_t kMaxJsonValues = 4'000'000;
inline constexpr uint64_t kMaxManifestBytes = 64ull << 20;
inline constexpr uint64_t kMaxJsonStateBytes = 256ull << 20;
inline constexpr uint64_t kMaxJsonStateValues = 48'000'000;

// Parses strict JSON (no comments, no trailing garbage, valid UTF-8) and rejects
// duplicate object keys, nesting deeper than kMaxJsonDepth and more than `max_values` values.
json parse_json(const char* begin, const char* end, const std::string& what, const std::string& path,
                uint64_t max_values = kMaxJsonValues);

// read_file, refusing (CheckpointError, before reading) a file larger than `max_bytes`.
std::string read_file_capped(const std::string& path, const std::string& what, uint64_t max_bytes);

bool valid_utf8(std::string_view s);

// A CPU, contiguous, detached version of `t` whose bytes can be written as they are.
Tensor bytes_view(const Tensor& t, const std::string& what, const std::string& path, const std::string& name);
// A fresh contiguous CPU tensor.
Tensor new_tensor(const Shape& shape, Dtype dtype);
// Checks that every byte of a bool tensor is 0 or 1.
void check_bool_bytes(const uint8_t* data, size_t n, const std::string& what, const std::string& path,
                      const std::string& name);
// numel × itemsize with overflow checks; dims must be non-negative and the byte count
// must fit in int64. Returns false on overflow.
bool checked_nbytes(const Shape& shape, Dtype dtype, uint64_t& nbytes);

// Opens `path` read-only and returns the descriptor after checking it names a regular
// file; `size` receives its length. O_NONBLOCK makes the open itself return at once for a
// FIFO (a plain open would wait forever for a writer); it is cleared again afterwards.
int open_regular_file(const std::string& path, const std::string& what, uint64_t& size);

// Atomic replacement of files (temporary in the same directory, fsync, rename).
// The file a save to `path` replaces: `path`, or the file a symbolic link there points to (the
// link is kept and the file it names is replaced, as writing through the link with open() would).
std::filesystem::path save_target(const std::filesystem::path& path);
// A fresh name `.<name>.tmp-<host tag>-<pid>-<n>` beside `target`.
std::filesystem::path temporary_for(const std::filesystem::path& target);
// Temporaries beside `target` (ours and other hosts'); `removable` is true for ours whose
// process is gone and for any older than kForeignTemporaryAge (another host's save may still
// be writing a younger one: its PID means nothing here).
inline constexpr std::chrono::hours kForeignTemporaryAge{24};
struct Temporary {
  std::filesystem::path path;
  bool removable = false;
  std::filesystem::file_time_type written;
};
std::vector<Temporary> temporaries_of(const std::filesystem::path& target);
// Gives the open file `fd` the permission bits of `replaced` when that is an existing regular file.
void keep_mode(const std::filesystem::path& replaced, int fd);
// Makes a rename in `dir` durable (best effort).
void fsync_directory(const std::filesystem::path& dir);

inline uint64_t load_u64(const void* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}
inline void append_u64(std::string& s, uint64_t v) { s.append(reinterpret_cast<const char*>(&v), 8); }
inline void append_u32(std::string& s, uint32_t v) { s.append(reinterpret_cast<const char*>(&v), 4); }

}  // namespace st::io::detail
