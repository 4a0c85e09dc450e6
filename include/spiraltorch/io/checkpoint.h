#pragma once
// State-dict files besides safetensors: JSON and a compact binary format ("bincode"),
// manifests, atomic writes and SHA-256. All errors are CheckpointError("<format>: <path>: <reason>").
//
// JSON format (UTF-8, one object):
//   {"format": "spiraltorch.state_dict", "version": 1, "metadata": {str: str},
//    "tensors": [{"name": str, "dtype": "float32", "shape": [..], "data": [..]}, ...]}
//   `data` is the flat row-major list of values: numbers for float dtypes (written
//   with enough digits to round-trip exactly; non-finite values as the strings
//   "nan", "inf", "-inf"), integers for int dtypes, true/false for bool.
//
// Bincode format (all integers little-endian, no padding):
//   magic    8 bytes  "STBINCOD"
//   version  u32      1
//   flags    u32      0 (reserved)
//   n_meta   u64, then n_meta × (u64 len, key bytes, u64 len, value bytes)
//   n_tensor u64, then n_tensor × entry:
//     u64 name_len, name bytes (UTF-8)
//     u8  dtype code: 0 bool, 1 uint8, 2 int32, 3 int64, 4 float16, 5 bfloat16, 6 float32, 7 float64
//     u8  ndim (≤ 32), then ndim × u64 dims
//     u64 nbytes (= numel × itemsize), then the row-major little-endian data
//   The file ends right after the last entry.
//
// Manifest `<weights>.manifest.json`:
//   {"format_version": 1, "spiraltorch_version": "0.1.0", "format": "safetensors"|"json"|"bincode",
//    "weights": {"path": "<file name>", "bytes": N, "sha256": "<hex>"},
//    "module_type": str|null, "metadata": {..},
//    "tensors": [{"name": str, "dtype": "float32", "shape": [..]}, ...]}
#include <functional>
#include <optional>
#include <string>

#include "spiraltorch/io/safetensors.h"

namespace st::io {

const char* version_string();

// JSON state dicts.
std::string save_json_bytes(const NamedTensors& tensors, const Metadata& metadata = {});
void save_json(const std::string& path, const NamedTensors& tensors, const Metadata& metadata = {});
Checkpoint load_json(const std::string& path);
Checkpoint load_json_bytes(const std::string& bytes, const std::string& label = "<bytes>");

// Bincode state dicts.
std::string save_bincode_bytes(const NamedTensors& tensors, const Metadata& metadata = {});
void save_bincode(const std::string& path, const NamedTensors& tensors, const Metadata& metadata = {});
Checkpoint load_bincode(const std::string& path);
Checkpoint load_bincode_bytes(const std::string& bytes, const std::string& label = "<bytes>");

// Manifests. `format` is "safetensors", "json" or "bincode"; returns the manifest path.
std::string manifest_path(const std::string& weights_path);
std::string write_manifest(const std::string& weights_path, const std::string& format, const NamedTensors& tensors,
                           const std::optional<std::string>& module_type = std::nullopt, const Metadata& metadata = {});
struct Manifest {
  std::string format;
  std::string weights_path;  // resolved against the manifest's directory
  uint64_t bytes = 0;
  std::string sha256;
  std::string spiraltorch_version;
  std::optional<std::string> module_type;
  std::vector<std::pair<std::string, std::pair<Dtype, Shape>>> tensors;
};
// Parses and validates a manifest; verify = true also checks the weights' size and hash.
// When the weights do not match, a complete manifest left by a save killed between its
// two renames (`.<manifest name>.tmp-PID-N`, see save_with_manifest) that does match them
// is used instead: it describes the newer, consistent pair.
Manifest read_manifest(const std::string& manifest_path, bool verify = true);
// Parses and validates manifest text without touching the file system; `manifest_path`
// names it in errors and anchors the relative weights path.
Manifest parse_manifest_bytes(const std::string& text, const std::string& manifest_path = "<bytes>");
// Saves weights with `save` (which writes the file it is given) and their manifest so that
// a SIGKILL at any moment leaves a pair read_manifest accepts: the weights and the manifest
// are both written to temporaries first (the manifest records the new weights' hash), then
// the weights are renamed into place, then the manifest. Before writing, temporaries of
// these two files left by dead processes are removed (a complete manifest matching the
// current weights is promoted first). Returns the manifest path.
std::string save_with_manifest(const std::string& path, const std::string& format,
                               const std::function<void(const std::string&)>& save, const NamedTensors& tensors,
                               const std::optional<std::string>& module_type = std::nullopt,
                               const Metadata& metadata = {});

// Helpers shared by the formats.
std::string sha256_hex(const void* data, size_t size);
std::string sha256_file(const std::string& path);
// Writes `path` atomically: `body` receives a writer to a temporary file in the same
// directory; on success the file is fsync'ed and renamed over `path` (and the
// directory fsync'ed). If anything throws, the temporary file is removed and the old
// `path` is left untouched. `what` prefixes error messages ("safetensors").
using ByteSink = std::function<void(const void*, size_t)>;
void write_file_atomic(const std::string& path, const std::string& what,
                       const std::function<void(const ByteSink&)>& body);
// Temporaries are named `.<file>.tmp-<tag>-<pid>-<n>`, the tag (16 hex digits) naming this host and
// PID namespace: a later save removes a temporary left by a dead process of this tag, and another
// tag's temporaries only once they are a day old (that host's save may still be writing).
const std::string& temporary_host_tag();
// Reads a whole file (CheckpointError on failure).
std::string read_file(const std::string& path, const std::string& what);

}  // namespace st::io
