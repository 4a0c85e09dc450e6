#pragma once
// safetensors (https://huggingface.co/docs/safetensors): the interchange format.
//
// File layout: u64 little-endian header length N, N bytes of UTF-8 JSON
// `{"__metadata__": {str: str}, "<name>": {"dtype": "F32", "shape": [..],
// "data_offsets": [begin, end]}, ...}`, then the data section; offsets are relative
// to the data section, which the tensors cover contiguously and exactly.
//
// Writes are byte-identical to the `safetensors` package (tensors ordered by
// descending dtype rank then name, compact JSON, header padded with spaces to a
// multiple of 8) and atomic (temporary file in the target directory, fsync, rename).
// Reads validate everything and raise CheckpointError("safetensors: <path>: <reason>").
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "spiraltorch/tensor.h"

namespace st::io {

// Same type as nn::StateDict.
using NamedTensors = std::vector<std::pair<std::string, Tensor>>;
using Metadata = std::map<std::string, std::string>;

struct Checkpoint {
  NamedTensors tensors;  // in file (data offset) order
  Metadata metadata;
};

// Header entry of one tensor.
struct TensorRecord {
  std::string name;
  Dtype dtype;
  Shape shape;
  uint64_t begin = 0, end = 0;  // byte offsets in the data section
};

struct SafetensorsHeader {
  std::vector<TensorRecord> tensors;  // sorted by offset
  Metadata metadata;
  uint64_t header_size = 0;  // N
};

// The largest header accepted (the reference implementation's limit).
inline constexpr uint64_t kMaxSafetensorsHeader = 100'000'000;

// "F32", "BF16", ... and back; the latter throws CheckpointError for names the
// library has no dtype for (I8, U16, F8_E4M3, ...).
const char* safetensors_dtype_name(Dtype d);

// Loads a .safetensors file, a directory (model.safetensors.index.json or
// model.safetensors inside) or a *.index.json sharded index. By default (copy = true)
// the tensors own their memory and the file may change or vanish afterwards.
// With copy = false they alias a private (copy-on-write) memory mapping of the file,
// kept alive until the last tensor is gone: loading is cheap, writes never reach the
// file, but the caller must keep the file unchanged while the tensors live, since
// truncating it makes reads fault (SIGBUS) and rewriting it in place changes them.
Checkpoint load_safetensors(const std::string& path, bool copy = true);
// Parses and validates the header only (a single file).
SafetensorsHeader read_safetensors_header(const std::string& path);
// Parses an in-memory file; tensors are always copies. `label` names it in errors.
Checkpoint load_safetensors_bytes(const void* data, size_t size, const std::string& label = "<bytes>");
Checkpoint load_safetensors_bytes(const std::string& bytes, const std::string& label = "<bytes>");

// Serialises to bytes / writes atomically. Keys must be unique; tensors must be on
// the CPU (non-contiguous ones are written in row-major order).
std::string save_safetensors_bytes(const NamedTensors& tensors, const Metadata& metadata = {});
void save_safetensors(const std::string& path, const NamedTensors& tensors, const Metadata& metadata = {});

}  // namespace st::io
