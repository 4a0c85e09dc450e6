// st.save / st.load's structure description (include/spiraltorch/io/structure.h).
#include "spiraltorch/io/structure.h"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <set>

#include "io/io_internal.h"

namespace st::io {

namespace {

using detail::json;
using Kind = Structure::Kind;

static_assert(3 * kMaxStructureDepth + 2 <= detail::kMaxJsonDepth, "a saved structure must stay readable");

[[noreturn]] void bad(const std::string& why) { throw CheckpointError("load: malformed structure: " + why); }

std::string float_repr(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);  // shortest text that parses back to v
  return std::string(buf, r.ptr);
}

double parse_float(const std::string& s) {
  if (s == "nan") return std::nan("");
  if (s == "inf") return INFINITY;
  if (s == "-inf") return -INFINITY;
  double v = 0.0;
  const char* end = s.data() + s.size();
  const auto r = std::from_chars(s.data(), end, v);
  if (s.empty() || r.ec != std::errc() || r.ptr != end)
    bad("\"float\" holds " + detail::printable(s) + ", not a number");
  return v;
}

json encode(const Structure& s, int depth) {
  if (depth > kMaxStructureDepth) {
    throw ValueError("save: the object is nested more than " + std::to_string(kMaxStructureDepth) +
                     " levels deep (dicts, lists and tuples)");
  }
  switch (s.kind) {
    case Kind::None:
      return json{{"value", nullptr}};
    case Kind::Bool:
      return json{{"value", s.boolean}};
    case Kind::Int:
      return json{{"value", s.integer}};
    case Kind::Float:
      return json{{"float", float_repr(s.number)}};
    case Kind::String:
      return json{{"value", s.text}};
    case Kind::Tensor: {
      json j{{"tensor", s.text}, {"requires_grad", s.boolean}};
      if (s.origin != Structure::TensorOrigin::Tensor) {
        j["numpy"] = s.origin == Structure::TensorOrigin::NumpyArray ? "array" : "scalar";
        if (!s.numpy_dtype.empty()) {
          if (numpy_itemsize(s.numpy_dtype) == 0) throw ValueError("save: unsupported NumPy dtype " + s.numpy_dtype);
          j["dtype"] = s.numpy_dtype;
          j["shape"] = s.shape;
        }
      }
      return j;
    }
    case Kind::Dict: {
      json entries = json::array();
      for (const auto& [k, v] : s.entries) {
        if (k.kind != Kind::String && k.kind != Kind::Int) throw ValueError("save: dictionary keys must be str or int");
        json key = k.kind == Kind::String ? json{{"str", k.text}} : json{{"int", k.integer}};
        entries.push_back(json::array({std::move(key), encode(v, depth + 1)}));
      }
      return json{{"dict", std::move(entries)}};
    }
    case Kind::List:
    case Kind::Tuple: {
      json items = json::array();
      for (const Structure& item : s.items) items.push_back(encode(item, depth + 1));
      return json{{s.kind == Kind::List ? "list" : "tuple", std::move(items)}};
    }
  }
  throw ValueError("save: unknown structure kind");
}

// The one field of a node object, checked against what the node allows besides it.
const json& only_field(const json& node, const char* name, std::initializer_list<const char*> optional = {}) {
  for (const auto& [k, _] : node.items()) {
    bool known = k == name;
    for (const char* o : optional) known = known || k == o;
    if (!known) bad("unexpected field " + detail::printable(k) + " beside \"" + name + "\"");
  }
  return node.at(name);
}

// A raw NumPy node's dtype and shape, checked against its tensor's byte size.
void decode_numpy_raw(const json& node, Structure& s, uint64_t nbytes) {
  if (!node.contains("dtype") || !node.contains("shape")) bad("a raw NumPy node needs both \"dtype\" and \"shape\"");
  if (s.origin == Structure::TensorOrigin::Tensor) bad("\"dtype\" and \"shape\" belong to NumPy nodes only");
  if (!node["dtype"].is_string()) bad("\"dtype\" is not a string");
  s.numpy_dtype = node["dtype"].get<std::string>();
  uint64_t want = numpy_itemsize(s.numpy_dtype);
  if (want == 0) bad("NumPy dtype " + detail::printable(s.numpy_dtype) + " is not one this format stores");
  const json& shape = node["shape"];
  if (!shape.is_array() || shape.size() > 32) bad("\"shape\" is not an array of at most 32 sizes");
  for (const json& d : shape) {
    if (!d.is_number_integer() || d.get<int64_t>() < 0) bad("\"shape\" holds something other than sizes >= 0");
    s.shape.push_back(d.get<int64_t>());
    if (__builtin_mul_overflow(want, static_cast<uint64_t>(s.shape.back()), &want)) bad("\"shape\" overflows");
  }
  if (s.origin == Structure::TensorOrigin::NumpyScalar && !s.shape.empty()) bad("a NumPy scalar has shape []");
  if (want != nbytes) {
    bad("NumPy " + s.numpy_dtype + " of shape " + shape.dump() + " needs " + std::to_string(want) +
        " bytes, its tensor holds " + std::to_string(nbytes));
  }
}

Structure decode(const json& node, const std::map<std::string, uint64_t>& keys, int depth) {
  if (depth > kMaxStructureDepth) bad("nested more than " + std::to_string(kMaxStructureDepth) + " levels deep");
  if (!node.is_object() || node.empty()) bad("a node is " + std::string(node.type_name()) + ", not a non-empty object");
  Structure s;
  if (node.contains("tensor")) {
    const json& key = only_field(node, "tensor", {"requires_grad", "numpy", "dtype", "shape"});
    if (!key.is_string()) bad("\"tensor\" is not a string");
    s.kind = Kind::Tensor;
    s.text = key.get<std::string>();
    const auto found = keys.find(s.text);
    if (found == keys.end()) {
      throw CheckpointError("load: the structure names tensor '" + detail::printable(s.text) +
                            "', which the file does not hold");
    }
    if (node.contains("requires_grad")) {
      if (!node["requires_grad"].is_boolean()) bad("\"requires_grad\" is not a boolean");
      s.boolean = node["requires_grad"].get<bool>();
    }
    if (node.contains("numpy")) {
      const json& np = node["numpy"];
      if (np == "array") {
        s.origin = Structure::TensorOrigin::NumpyArray;
      } else if (np == "scalar") {
        s.origin = Structure::TensorOrigin::NumpyScalar;
      } else {
        bad("\"numpy\" is neither \"array\" nor \"scalar\"");
      }
    }
    if (node.contains("dtype") || node.contains("shape")) decode_numpy_raw(node, s, found->second);
    return s;
  }
  if (node.contains("value")) {
    const json& v = only_field(node, "value");
    if (v.is_null()) {
      s.kind = Kind::None;
    } else if (v.is_boolean()) {
      s.kind = Kind::Bool, s.boolean = v.get<bool>();
    } else if (v.is_number_integer()) {
      if (v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX))
        bad("an integer exceeds int64");
      s.kind = Kind::Int, s.integer = v.get<int64_t>();
    } else if (v.is_string()) {
      s.kind = Kind::String, s.text = v.get<std::string>();
    } else {
      bad("\"value\" is " + std::string(v.type_name()) + " (floats are written as \"float\")");
    }
    return s;
  }
  if (node.contains("float")) {
    const json& v = only_field(node, "float");
    if (!v.is_string()) bad("\"float\" is not a string");
    s.kind = Kind::Float, s.number = parse_float(v.get<std::string>());
    return s;
  }
  if (node.contains("dict")) {
    const json& entries = only_field(node, "dict");
    if (!entries.is_array()) bad("\"dict\" is not an array");
    s.kind = Kind::Dict;
    std::set<std::string> seen_str;
    std::set<int64_t> seen_int;
    for (const json& e : entries) {
      if (!e.is_array() || e.size() != 2 || !e[0].is_object() || e[0].size() != 1) {
        bad("a dict entry is not a [key, value] pair with a {\"str\": ..} or {\"int\": ..} key");
      }
      Structure key;
      if (e[0].contains("str") && e[0]["str"].is_string()) {
        key.kind = Kind::String, key.text = e[0]["str"].get<std::string>();
        if (!seen_str.insert(key.text).second) bad("duplicate dict key " + detail::printable(key.text));
      } else if (e[0].contains("int") && e[0]["int"].is_number_integer() &&
                 !(e[0]["int"].is_number_unsigned() &&
                   e[0]["int"].get<uint64_t>() > static_cast<uint64_t>(INT64_MAX))) {
        key.kind = Kind::Int, key.integer = e[0]["int"].get<int64_t>();
        if (!seen_int.insert(key.integer).second) bad("duplicate dict key " + std::to_string(key.integer));
      } else {
        bad("a dict key is not {\"str\": string} or {\"int\": int64}");
      }
      s.entries.emplace_back(std::move(key), decode(e[1], keys, depth + 1));
    }
    return s;
  }
  for (const auto& [name, kind] : {std::pair{"list", Kind::List}, std::pair{"tuple", Kind::Tuple}}) {
    if (!node.contains(name)) continue;
    const json& items = only_field(node, name);
    if (!items.is_array()) bad("\"" + std::string(name) + "\" is not an array");
    s.kind = kind;
    for (const json& item : items) s.items.push_back(decode(item, keys, depth + 1));
    return s;
  }
  std::string fields;
  for (const auto& [k, _] : node.items()) fields += (fields.empty() ? "" : ", ") + detail::printable(k);
  bad("unknown node with fields [" + fields + "]");
}

}  // namespace

size_t numpy_itemsize(const std::string& dtype) {
  // [byte order][kind][count]: '<' or '|' only (save writes little-endian), no objects, voids or dates.
  if (dtype.size() < 3 || dtype.size() > 8 || (dtype[0] != '<' && dtype[0] != '|')) return 0;
  const char kind = dtype[1];
  size_t n = 0;
  for (size_t i = 2; i < dtype.size(); ++i) {
    if (dtype[i] < '0' || dtype[i] > '9') return 0;
    n = n * 10 + static_cast<size_t>(dtype[i] - '0');
  }
  switch (kind) {
    case 'b':
      return n == 1 ? 1 : 0;
    case 'i':
    case 'u':
      return n == 1 || n == 2 || n == 4 || n == 8 ? n : 0;
    case 'f':
      return n == 2 || n == 4 || n == 8 ? n : 0;
    case 'c':
      return n == 8 || n == 16 ? n : 0;
    case 'S':
      return n >= 1 && n <= (1u << 20) ? n : 0;
    case 'U':
      return n >= 1 && n <= (1u << 18) ? 4 * n : 0;
    default:
      return 0;
  }
}

std::string encode_structure(const Structure& s) { return encode(s, 0).dump(); }

Structure decode_structure(const std::string& json_text, const std::map<std::string, uint64_t>& tensor_keys) {
  const json j =
      detail::parse_json(json_text.data(), json_text.data() + json_text.size(), "load", "the structure metadata");
  return decode(j, tensor_keys, 0);
}

}  // namespace st::io
