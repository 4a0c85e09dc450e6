#pragma once
// Helpers shared by the checkpoint formats (src/io only).
#include <nlohmann/json.hpp>

#include <bit>
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

// Parses strict JSON (no comments, no trailing garbage, valid UTF-8) and rejects
// duplicate object keys and nesting deeper than kMaxJsonDepth.
json parse_json(const char* begin, const char* end, const std::string& what, const std::string& path);

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

inline uint64_t load_u64(const void* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}
inline void append_u64(std::string& s, uint64_t v) { s.append(reinterpret_cast<const char*>(&v), 8); }
inline void append_u32(std::string& s, uint32_t v) { s.append(reinterpret_cast<const char*>(&v), 4); }

}  // namespace st::io::detail
