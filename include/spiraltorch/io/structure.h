#pragma once
// The structure of a saved object (st.save / st.load): tensors and plain values nested in dicts,
// lists and tuples, written as JSON into a safetensors file's metadata next to the tensors it
// names. Decoding is data only: it builds values and looks tensors up by key, nothing else.
//
// JSON form, one object per node:
//   {"tensor": key, "requires_grad": bool[, "numpy": "array" | "scalar"[, "dtype": "<u2", "shape": [..]]]}
//     A NumPy value whose dtype no Tensor has (uint16, int8, complex, fixed-width strings, ...) is
//     stored as its raw little-endian bytes in a uint8 tensor, with NumPy's dtype string and shape.
//   {"value": null | true | false | int64 | "string"}      {"float": "<shortest round-trip repr>"}
//   {"dict": [[{"str": k} | {"int": k}, node], ...]}      {"list": [node, ...]}   {"tuple": [node, ...]}
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace st::io {

// The deepest nesting of dicts, lists and tuples save writes: each level takes up to three JSON
// levels plus one for its own items, and the JSON reader stops at 64: everything saved can be read back.
inline constexpr int kMaxStructureDepth = 20;

struct Structure {
  enum class Kind : uint8_t { None, Bool, Int, Float, String, Tensor, Dict, List, Tuple };
  // How a tensor node came in: a Tensor, or a NumPy array / scalar that load gives back as one.
  enum class TensorOrigin : uint8_t { Tensor, NumpyArray, NumpyScalar };

  Kind kind = Kind::None;
  bool boolean = false;  // Bool; a Tensor's requires_grad
  int64_t integer = 0;   // Int
  double number = 0.0;   // Float
  std::string text;      // String; a Tensor's key
  TensorOrigin origin = TensorOrigin::Tensor;
  // For NumPy values stored as raw bytes: NumPy's dtype string ("<u2", "<U8", "|i1") and shape.
  std::string numpy_dtype;
  std::vector<int64_t> shape;
  // Dict: (key, value) pairs in order, each key a String or Int node. List / Tuple: items.
  std::vector<std::pair<Structure, Structure>> entries;
  std::vector<Structure> items;

  bool operator==(const Structure&) const = default;
};

// The JSON text of `s` (compact, deterministic).
std::string encode_structure(const Structure& s);

// The item size in bytes of a NumPy dtype string this format accepts (little-endian or
// byte-order-free kinds b, i, u, f, c of 1-16 bytes, U and S strings), or 0 for any other.
size_t numpy_itemsize(const std::string& dtype);

// Parses what encode_structure wrote. `tensor_bytes` maps each tensor key the file holds to its
// byte size; every key named must be there, and a raw NumPy node must describe exactly its tensor's
// bytes. Any malformed input (bad JSON, unknown node or field, wrong types, a missing key, a dtype
// outside numpy_itemsize's list, nesting beyond kMaxStructureDepth) raises CheckpointError.
Structure decode_structure(const std::string& json_text, const std::map<std::string, uint64_t>& tensor_bytes);

}  // namespace st::io
