// JSON and bincode state dicts, and manifests (formats documented in checkpoint.h).
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <limits>
#include <set>

#include "io/io_internal.h"
#include "spiraltorch/io/checkpoint.h"

namespace st::io {

using detail::fail;
using detail::json;
using detail::ordered_json;

namespace {

const char* kJson = "json";
const char* kBincode = "bincode";
const char* kManifest = "manifest";
constexpr const char* kJsonFormatName = "spiraltorch.state_dict";
constexpr char kBincodeMagic[8] = {'S', 'T', 'B', 'I', 'N', 'C', 'O', 'D'};
constexpr uint32_t kBincodeVersion = 1;
constexpr uint64_t kMaxNdim = 32;

std::string quote(const std::string& s) {
  std::string out = "'";
  for (size_t i = 0; i < s.size() && i < 200; ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    out += (c < 0x20 || c == 0x7f) ? '?' : static_cast<char>(c);
  }
  return out + (s.size() > 200 ? "...'" : "'");
}

bool dtype_by_name(const std::string& s, Dtype& out) {
  static const std::pair<const char*, Dtype> names[] = {{"bool", Dtype::Bool},       {"uint8", Dtype::UInt8},
                                                        {"int32", Dtype::Int32},     {"int64", Dtype::Int64},
                                                        {"float16", Dtype::Float16}, {"bfloat16", Dtype::BFloat16},
                                                        {"float32", Dtype::Float32}, {"float64", Dtype::Float64}};
  for (const auto& [n, d] : names) {
    if (s == n) {
      out = d;
      return true;
    }
  }
  return false;
}

void check_names(const NamedTensors& tensors, const Metadata& metadata, const char* what, const std::string& path) {
  std::set<std::string> seen;
  for (const auto& [name, t] : tensors) {
    if (!seen.insert(name).second) fail(what, path, "duplicate tensor name " + quote(name));
    if (!detail::valid_utf8(name)) fail(what, path, "tensor name " + quote(name) + " is not valid UTF-8");
  }
  for (const auto& [k, v] : metadata) {
    if (!detail::valid_utf8(k) || !detail::valid_utf8(v))
      fail(what, path, "metadata entry " + quote(k) + " is not valid UTF-8");
  }
}

ordered_json shape_json(const Shape& s) {
  ordered_json a = ordered_json::array();
  for (int64_t d : s) a.push_back(d);
  return a;
}

ordered_json float_json(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return v;
}

// --- JSON -------------------------------------------------------------------

std::string json_text(const NamedTensors& tensors, const Metadata& metadata, const std::string& path) {
  check_names(tensors, metadata, kJson, path);
  ordered_json root = ordered_json::object();
  root["format"] = kJsonFormatName;
  root["version"] = 1;
  root["metadata"] = ordered_json::object();
  for (const auto& [k, v] : metadata) root["metadata"][k] = v;
  ordered_json list = ordered_json::array();
  for (const auto& [name, t0] : tensors) {
    const Tensor t = detail::bytes_view(t0, kJson, path, name);
    ordered_json e = ordered_json::object();
    e["name"] = name;
    e["dtype"] = dtype_name(t.dtype());
    e["shape"] = shape_json(t.shape());
    ordered_json data = ordered_json::array();
    const int64_t n = t.numel();
    ST_DISPATCH_ALL(t.dtype(), [&] {
      const scalar_t* p = t.data<scalar_t>();
      for (int64_t i = 0; i < n; ++i) {
        if constexpr (std::is_same_v<scalar_t, bool>) {
          data.push_back(static_cast<bool>(p[i]));
        } else if constexpr (std::is_same_v<scalar_t, uint8_t> || std::is_same_v<scalar_t, int32_t> ||
                             std::is_same_v<scalar_t, int64_t>) {
          data.push_back(static_cast<int64_t>(p[i]));
        } else {
          data.push_back(float_json(to_double(p[i])));
        }
      }
    });
    e["data"] = std::move(data);
    list.push_back(std::move(e));
  }
  root["tensors"] = std::move(list);
  try {
    return root.dump() + "\n";
  } catch (const ordered_json::exception& e) {
    fail(kJson, path, e.what());
  }
}

template <typename T>
void fill_from_json(const json& data, Tensor& t, const std::string& path, const std::string& name) {
  T* out = t.data<T>();
  size_t i = 0;
  for (const json& v : data) {
    const std::string where = "tensor " + quote(name) + ": element " + std::to_string(i);
    if constexpr (std::is_same_v<T, bool>) {
      if (!v.is_boolean()) fail(kJson, path, where + " is not true/false");
      out[i] = v.get<bool>();
    } else if constexpr (std::is_integral_v<T>) {
      int64_t x;
      if (v.is_number_unsigned()) {
        const uint64_t u = v.get<uint64_t>();
        if (u > static_cast<uint64_t>(std::numeric_limits<T>::max())) fail(kJson, path, where + " is out of range");
        x = static_cast<int64_t>(u);
      } else if (v.is_number_integer()) {
        x = v.get<int64_t>();
      } else {
        fail(kJson, path, where + " is not an integer");
      }
      if (x < static_cast<int64_t>(std::numeric_limits<T>::min()) ||
          x > static_cast<int64_t>(std::numeric_limits<T>::max())) {
        fail(kJson, path, where + " is out of range");
      }
      out[i] = static_cast<T>(x);
    } else {
      double x;
      if (v.is_number()) {
        x = v.get<double>();
      } else if (v.is_string() && v.get_ref<const std::string&>() == "nan") {
        x = std::numeric_limits<double>::quiet_NaN();
      } else if (v.is_string() && v.get_ref<const std::string&>() == "inf") {
        x = std::numeric_limits<double>::infinity();
      } else if (v.is_string() && v.get_ref<const std::string&>() == "-inf") {
        x = -std::numeric_limits<double>::infinity();
      } else {
        fail(kJson, path, where + " is not a number");
      }
      out[i] = from_double<T>(x);
    }
    ++i;
  }
}

Checkpoint parse_json_state(const std::string& text, const std::string& path) {
  const json root =
      detail::parse_json(text.data(), text.data() + text.size(), kJson, path, detail::kMaxJsonStateValues);
  if (!root.is_object()) fail(kJson, path, "top level is not an object");
  if (!root.contains("format") || root["format"] != kJsonFormatName) {
    fail(kJson, path, "not a SpiralTorch JSON state dict (\"format\" is not \"" + std::string(kJsonFormatName) + "\")");
  }
  if (!root.contains("version") || !root["version"].is_number_integer() || root["version"].get<int64_t>() != 1) {
    fail(kJson, path, "unsupported version (this build reads version 1)");
  }
  Checkpoint out;
  if (root.contains("metadata")) {
    if (!root["metadata"].is_object()) fail(kJson, path, "\"metadata\" is not an object");
    for (const auto& [k, v] : root["metadata"].items()) {
      if (!v.is_string()) fail(kJson, path, "metadata value for " + quote(k) + " is not a string");
      out.metadata[k] = v.get<std::string>();
    }
  }
  if (!root.contains("tensors") || !root["tensors"].is_array()) fail(kJson, path, "\"tensors\" is not an array");
  std::set<std::string> seen;
  for (const json& e : root["tensors"]) {
    if (!e.is_object() || !e.contains("name") || !e["name"].is_string())
      fail(kJson, path, "a tensor entry has no name");
    const std::string name = e["name"].get<std::string>();
    if (!seen.insert(name).second) fail(kJson, path, "duplicate tensor name " + quote(name));
    const std::string tn = "tensor " + quote(name);
    for (const auto& [field, _] : e.items()) {
      if (field != "name" && field != "dtype" && field != "shape" && field != "data")
        fail(kJson, path, tn + ": unknown field " + quote(field));
    }
    Dtype dt;
    if (!e.contains("dtype") || !e["dtype"].is_string() || !dtype_by_name(e["dtype"].get<std::string>(), dt)) {
      fail(kJson, path, tn + ": missing or unknown dtype");
    }
    if (!e.contains("shape") || !e["shape"].is_array() || e["shape"].size() > kMaxNdim)
      fail(kJson, path, tn + ": bad shape");
    Shape shape;
    for (const json& d : e["shape"]) {
      if (!d.is_number_integer() || d.get<int64_t>() < 0)
        fail(kJson, path, tn + ": shape entries must be non-negative integers");
      shape.push_back(d.get<int64_t>());
    }
    uint64_t nbytes;
    if (!detail::checked_nbytes(shape, dt, nbytes)) fail(kJson, path, tn + ": shape overflows the size of a tensor");
    if (!e.contains("data") || !e["data"].is_array()) fail(kJson, path, tn + ": \"data\" is not an array");
    const uint64_t numel = nbytes / dtype_size(dt);
    if (e["data"].size() != numel) {
      fail(kJson, path,
           tn + ": shape " + shape_str(shape) + " needs " + std::to_string(numel) + " values but data has " +
               std::to_string(e["data"].size()));
    }
    Tensor t = detail::new_tensor(shape, dt);
    ST_DISPATCH_ALL(dt, [&] { fill_from_json<scalar_t>(e["data"], t, path, name); });
    out.tensors.emplace_back(name, std::move(t));
  }
  return out;
}

// --- bincode ----------------------------------------------------------------

uint8_t dtype_code(Dtype d) { return static_cast<uint8_t>(d); }  // the Dtype enum order is the documented code

std::string bincode_header_and_check(const NamedTensors& tensors, const Metadata& metadata, const std::string& path,
                                     NamedTensors& views) {
  check_names(tensors, metadata, kBincode, path);
  std::string out(kBincodeMagic, 8);
  detail::append_u32(out, kBincodeVersion);
  detail::append_u32(out, 0);
  detail::append_u64(out, metadata.size());
  for (const auto& [k, v] : metadata) {
    detail::append_u64(out, k.size());
    out += k;
    detail::append_u64(out, v.size());
    out += v;
  }
  detail::append_u64(out, tensors.size());
  for (const auto& [name, t] : tensors) {
    Tensor c = detail::bytes_view(t, kBincode, path, name);
    if (c.dim() > static_cast<int64_t>(kMaxNdim))
      fail(kBincode, path, "tensor " + quote(name) + " has more than 32 dims");
    views.emplace_back(name, c);
  }
  return out;
}

void entry_prefix(std::string& out, const std::string& name, const Tensor& t) {
  detail::append_u64(out, name.size());
  out += name;
  out.push_back(static_cast<char>(dtype_code(t.dtype())));
  out.push_back(static_cast<char>(t.dim()));
  for (int64_t d : t.shape()) detail::append_u64(out, static_cast<uint64_t>(d));
  detail::append_u64(out, static_cast<uint64_t>(t.numel()) * t.itemsize());
}

struct Reader {
  const uint8_t* p;
  uint64_t left;
  const std::string& path;
  void need(uint64_t n, const char* what) {
    if (n > left) {
      fail(kBincode, path,
           std::string("truncated file: ") + what + " needs " + std::to_string(n) + " bytes but only " +
               std::to_string(left) + " remain");
    }
  }
  uint64_t u64(const char* what) {
    need(8, what);
    const uint64_t v = detail::load_u64(p);
    p += 8, left -= 8;
    return v;
  }
  uint32_t u32(const char* what) {
    need(4, what);
    uint32_t v;
    std::memcpy(&v, p, 4);
    p += 4, left -= 4;
    return v;
  }
  uint8_t u8(const char* what) {
    need(1, what);
    const uint8_t v = *p;
    ++p, --left;
    return v;
  }
  std::string str(const char* what) {
    const uint64_t n = u64(what);
    need(n, what);
    std::string s(reinterpret_cast<const char*>(p), n);
    p += n, left -= n;
    if (!detail::valid_utf8(s)) fail(kBincode, path, std::string(what) + " is not valid UTF-8");
    return s;
  }
};

Checkpoint parse_bincode(const std::string& bytes, const std::string& path) {
  Reader r{reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), path};
  r.need(8, "magic");
  if (std::memcmp(r.p, kBincodeMagic, 8) != 0) fail(kBincode, path, "bad magic (not a SpiralTorch bincode file)");
  r.p += 8, r.left -= 8;
  const uint32_t version = r.u32("version");
  if (version != kBincodeVersion)
    fail(kBincode, path, "unsupported version " + std::to_string(version) + " (this build reads 1)");
  if (r.u32("flags") != 0) fail(kBincode, path, "unknown flags set");
  Checkpoint out;
  const uint64_t n_meta = r.u64("metadata count");
  if (n_meta > r.left / 16) fail(kBincode, path, "metadata count " + std::to_string(n_meta) + " exceeds the file size");
  for (uint64_t i = 0; i < n_meta; ++i) {
    std::string k = r.str("metadata key");
    std::string v = r.str("metadata value");
    if (!out.metadata.emplace(std::move(k), std::move(v)).second) fail(kBincode, path, "duplicate metadata key");
  }
  const uint64_t n = r.u64("tensor count");
  if (n > r.left / 18) fail(kBincode, path, "tensor count " + std::to_string(n) + " exceeds the file size");
  std::set<std::string> seen;
  for (uint64_t i = 0; i < n; ++i) {
    std::string name = r.str("tensor name");
    const std::string tn = "tensor " + quote(name);
    if (!seen.insert(name).second) fail(kBincode, path, "duplicate tensor name " + quote(name));
    const uint8_t code = r.u8("dtype");
    if (code > static_cast<uint8_t>(Dtype::Float64))
      fail(kBincode, path, tn + ": unknown dtype code " + std::to_string(code));
    const Dtype dt = static_cast<Dtype>(code);
    const uint8_t ndim = r.u8("ndim");
    if (ndim > kMaxNdim) fail(kBincode, path, tn + ": " + std::to_string(ndim) + " dims exceed the limit of 32");
    Shape shape;
    for (uint8_t d = 0; d < ndim; ++d) {
      const uint64_t v = r.u64("dims");
      if (v > static_cast<uint64_t>(INT64_MAX)) fail(kBincode, path, tn + ": dimension too large");
      shape.push_back(static_cast<int64_t>(v));
    }
    uint64_t expect;
    if (!detail::checked_nbytes(shape, dt, expect)) fail(kBincode, path, tn + ": shape overflows the size of a tensor");
    const uint64_t nbytes = r.u64("byte count");
    if (nbytes != expect) {
      fail(kBincode, path,
           tn + ": shape " + shape_str(shape) + " of " + dtype_name(dt) + " needs " + std::to_string(expect) +
               " bytes but the entry holds " + std::to_string(nbytes));
    }
    r.need(nbytes, "tensor data");
    Tensor t = detail::new_tensor(shape, dt);
    if (nbytes) std::memcpy(t.raw_data(), r.p, nbytes);
    r.p += nbytes, r.left -= nbytes;
    if (dt == Dtype::Bool)
      detail::check_bool_bytes(static_cast<const uint8_t*>(t.raw_data()), nbytes, kBincode, path, name);
    out.tensors.emplace_back(std::move(name), std::move(t));
  }
  if (r.left != 0) fail(kBincode, path, std::to_string(r.left) + " trailing bytes after the last entry");
  return out;
}

}  // namespace

std::string save_json_bytes(const NamedTensors& tensors, const Metadata& metadata) {
  return json_text(tensors, metadata, "<bytes>");
}

void save_json(const std::string& path, const NamedTensors& tensors, const Metadata& metadata) {
  const std::string text = json_text(tensors, metadata, path);
  write_file_atomic(path, kJson, [&](const ByteSink& sink) { sink(text.data(), text.size()); });
}

Checkpoint load_json(const std::string& path) {
  return parse_json_state(detail::read_file_capped(path, kJson, detail::kMaxJsonStateBytes), path);
}
Checkpoint load_json_bytes(const std::string& bytes, const std::string& label) {
  if (bytes.size() > detail::kMaxJsonStateBytes) {
    fail(kJson, label,
         std::to_string(bytes.size()) + " bytes, more than the limit of " + std::to_string(detail::kMaxJsonStateBytes) +
             " for a JSON state dict");
  }
  return parse_json_state(bytes, label);
}

std::string save_bincode_bytes(const NamedTensors& tensors, const Metadata& metadata) {
  NamedTensors views;
  std::string out = bincode_header_and_check(tensors, metadata, "<bytes>", views);
  for (const auto& [name, t] : views) {
    entry_prefix(out, name, t);
    out.append(static_cast<const char*>(t.raw_data()), t.numel() * t.itemsize());
  }
  return out;
}

void save_bincode(const std::string& path, const NamedTensors& tensors, const Metadata& metadata) {
  NamedTensors views;
  const std::string header = bincode_header_and_check(tensors, metadata, path, views);
  write_file_atomic(path, kBincode, [&](const ByteSink& sink) {
    sink(header.data(), header.size());
    for (const auto& [name, t] : views) {
      std::string prefix;
      entry_prefix(prefix, name, t);
      sink(prefix.data(), prefix.size());
      sink(t.raw_data(), static_cast<size_t>(t.numel()) * t.itemsize());
    }
  });
}

Checkpoint load_bincode(const std::string& path) { return parse_bincode(read_file(path, kBincode), path); }
Checkpoint load_bincode_bytes(const std::string& bytes, const std::string& label) {
  return parse_bincode(bytes, label);
}

// --- manifests --------------------------------------------------------------

std::string manifest_path(const std::string& weights_path) { return weights_path + ".manifest.json"; }

namespace {

// The manifest text for weights whose bytes are in `weights_file`, recorded under the
// file name `weights_name` (they differ while the weights still sit in a temporary).
std::string manifest_text(const std::string& mpath, const std::string& weights_file, const std::string& weights_name,
                          const std::string& format, const NamedTensors& tensors,
                          const std::optional<std::string>& module_type, const Metadata& metadata) {
  namespace fs = std::filesystem;
  if (format != "safetensors" && format != "json" && format != "bincode") {
    fail(kManifest, mpath, "unknown weights format " + quote(format));
  }
  std::error_code ec;
  const uint64_t size = fs::file_size(weights_file, ec);
  if (ec) fail(kManifest, mpath, "cannot stat the weights file '" + weights_file + "': " + ec.message());
  ordered_json m = ordered_json::object();
  m["format_version"] = 1;
  m["spiraltorch_version"] = version_string();
  m["format"] = format;
  m["weights"] = ordered_json::object();
  m["weights"]["path"] = weights_name;
  m["weights"]["bytes"] = size;
  m["weights"]["sha256"] = sha256_file(weights_file);
  m["module_type"] = module_type ? ordered_json(*module_type) : ordered_json(nullptr);
  m["metadata"] = ordered_json::object();
  for (const auto& [k, v] : metadata) m["metadata"][k] = v;
  ordered_json list = ordered_json::array();
  for (const auto& [name, t] : tensors) {
    ordered_json e = ordered_json::object();
    e["name"] = name;
    e["dtype"] = dtype_name(t.dtype());
    e["shape"] = shape_json(t.shape());
    list.push_back(std::move(e));
  }
  m["tensors"] = std::move(list);
  try {
    return m.dump(2, ' ', /*ensure_ascii=*/true) + "\n";
  } catch (const ordered_json::exception& e) {
    fail(kManifest, mpath, e.what());
  }
}

}  // namespace

Manifest parse_manifest_bytes(const std::string& text, const std::string& mpath) {
  namespace fs = std::filesystem;
  const json m = detail::parse_json(text.data(), text.data() + text.size(), kManifest, mpath);
  if (!m.is_object()) fail(kManifest, mpath, "top level is not an object");
  if (!m.contains("format_version") || m["format_version"] != 1) fail(kManifest, mpath, "unsupported format_version");
  Manifest out;
  if (!m.contains("format") || !m["format"].is_string()) fail(kManifest, mpath, "missing \"format\"");
  out.format = m["format"].get<std::string>();
  if (out.format != "safetensors" && out.format != "json" && out.format != "bincode") {
    fail(kManifest, mpath, "unknown weights format " + quote(out.format));
  }
  if (m.contains("spiraltorch_version") && m["spiraltorch_version"].is_string()) {
    out.spiraltorch_version = m["spiraltorch_version"].get<std::string>();
  }
  if (m.contains("module_type") && m["module_type"].is_string()) out.module_type = m["module_type"].get<std::string>();
  const json w = m.contains("weights") ? m["weights"] : json();
  if (!w.is_object() || !w.contains("path") || !w["path"].is_string() || !w.contains("sha256") ||
      !w["sha256"].is_string() || !w.contains("bytes") || !w["bytes"].is_number_unsigned()) {
    fail(kManifest, mpath, "\"weights\" needs path, bytes and sha256");
  }
  const fs::path rel(w["path"].get<std::string>());
  bool bad = rel.empty() || rel.is_absolute();
  for (const auto& part : rel) bad = bad || part == "..";
  if (bad) fail(kManifest, mpath, "weights path " + quote(rel.string()) + " leaves the manifest's directory");
  out.weights_path = (fs::path(mpath).parent_path() / rel).string();
  out.bytes = w["bytes"].get<uint64_t>();
  out.sha256 = w["sha256"].get<std::string>();
  if (m.contains("tensors")) {
    if (!m["tensors"].is_array()) fail(kManifest, mpath, "\"tensors\" is not an array");
    for (const json& e : m["tensors"]) {
      Dtype dt;
      if (!e.is_object() || !e.contains("name") || !e["name"].is_string() || !e.contains("dtype") ||
          !e["dtype"].is_string() || !dtype_by_name(e["dtype"].get<std::string>(), dt) || !e.contains("shape") ||
          !e["shape"].is_array()) {
        fail(kManifest, mpath, "bad tensor entry");
      }
      Shape s;
      for (const json& d : e["shape"]) {
        if (!d.is_number_integer() || d.get<int64_t>() < 0) fail(kManifest, mpath, "bad shape entry");
        s.push_back(d.get<int64_t>());
      }
      out.tensors.push_back({e["name"].get<std::string>(), {dt, s}});
    }
  }
  return out;
}

namespace {

Manifest parse_manifest(const std::string& mpath) {
  return parse_manifest_bytes(detail::read_file_capped(mpath, kManifest, detail::kMaxManifestBytes), mpath);
}

// Empty when the weights match the manifest, else why not.
std::string mismatch(const Manifest& m) {
  std::error_code ec;
  const uint64_t size = std::filesystem::file_size(m.weights_path, ec);
  if (ec) return "cannot stat the weights file '" + m.weights_path + "': " + ec.message();
  if (size != m.bytes) {
    return "the weights file has " + std::to_string(size) + " bytes but the manifest records " +
           std::to_string(m.bytes);
  }
  if (sha256_file(m.weights_path) != m.sha256) return "sha256 of the weights file does not match the manifest";
  return {};
}

}  // namespace

std::string write_manifest(const std::string& weights_path, const std::string& format, const NamedTensors& tensors,
                           const std::optional<std::string>& module_type, const Metadata& metadata) {
  namespace fs = std::filesystem;
  const std::string mpath = manifest_path(weights_path);
  const std::string text = manifest_text(mpath, weights_path, fs::path(weights_path).filename().string(), format,
                                         tensors, module_type, metadata);
  write_file_atomic(mpath, kManifest, [&](const ByteSink& sink) { sink(text.data(), text.size()); });
  return mpath;
}

Manifest read_manifest(const std::string& mpath, bool verify) {
  namespace fs = std::filesystem;
  Manifest out = parse_manifest(mpath);
  if (!verify) return out;
  const std::string why = mismatch(out);
  if (why.empty()) return out;
  // A save killed between renaming the weights and the manifest leaves the new manifest in
  // a complete temporary; the newest one that matches the weights names the current pair.
  auto candidates = detail::temporaries_of(fs::path(mpath));
  std::sort(candidates.begin(), candidates.end(), [](const auto& a, const auto& b) { return a.written > b.written; });
  for (const auto& candidate : candidates) {
    try {
      Manifest m = parse_manifest(candidate.path.string());
      m.weights_path = (fs::path(mpath).parent_path() / fs::path(m.weights_path).filename()).string();
      if (m.weights_path == out.weights_path && mismatch(m).empty()) return m;
    } catch (const CheckpointError&) {
      // An incomplete temporary: not a candidate.
    }
  }
  fail(kManifest, mpath, why);
}

std::string save_with_manifest(const std::string& path, const std::string& format,
                               const std::function<void(const std::string&)>& save, const NamedTensors& tensors,
                               const std::optional<std::string>& module_type, const Metadata& metadata) {
  namespace fs = std::filesystem;
  if (fs::path(path).filename().empty()) fail(format, path, "not a file path");
  // The manifest stays beside `path` and names it; the weights replace the file it resolves to.
  const fs::path target = detail::save_target(fs::path(path));
  const std::string mpath = manifest_path(path);
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");

  // Leftovers of killed saves: promote a complete manifest that matches the current weights
  // (the killed save had renamed its weights already), then delete the rest.
  // Hashing the weights costs a read of the file, so only when there is something to promote.
  std::error_code ec;
  auto stale = detail::temporaries_of(fs::path(mpath));
  std::erase_if(stale, [](const auto& t) { return !t.removable; });
  if (!stale.empty() && fs::exists(target, ec)) {
    bool consistent = false;
    try {
      consistent = mismatch(parse_manifest(mpath)).empty();
    } catch (const CheckpointError&) {
      // No usable manifest: a stale one may still describe the weights.
    }
    for (const auto& t : stale) {
      if (consistent) break;
      try {
        Manifest m = parse_manifest(t.path.string());
        if (mismatch(m).empty() && ::rename(t.path.c_str(), mpath.c_str()) == 0) consistent = true;
      } catch (const CheckpointError&) {
        // Incomplete: deleted below.
      }
    }
  }
  for (const fs::path& t : {target, fs::path(mpath)}) {
    for (const auto& tmp : detail::temporaries_of(t)) {
      if (tmp.removable) fs::remove(tmp.path, ec);
    }
  }

  const fs::path wtmp = detail::temporary_for(target);
  const fs::path mtmp = detail::temporary_for(fs::path(mpath));
  try {
    save(wtmp.string());
    if (const int fd = ::open(wtmp.c_str(), O_RDONLY | O_CLOEXEC); fd >= 0) {
      detail::keep_mode(target, fd);  // replacing the weights keeps their permissions
      ::close(fd);
    }
    const std::string text =
        manifest_text(mpath, wtmp.string(), fs::path(path).filename().string(), format, tensors, module_type, metadata);
    write_file_atomic(mtmp.string(), kManifest, [&](const ByteSink& sink) { sink(text.data(), text.size()); });
    // Weights first: until the manifest follows, read_manifest finds the new pair through
    // the complete manifest temporary.
    if (::rename(wtmp.c_str(), target.c_str()) != 0) {
      fail(format, path, std::string("cannot replace the file: ") + std::strerror(errno));
    }
    if (::rename(mtmp.c_str(), mpath.c_str()) != 0) {
      fail(kManifest, mpath, std::string("cannot replace the file: ") + std::strerror(errno));
    }
  } catch (...) {
    fs::remove(wtmp, ec);
    fs::remove(mtmp, ec);
    throw;
  }
  detail::fsync_directory(dir);
  if (const fs::path mdir = fs::path(mpath).parent_path(); mdir != dir)
    detail::fsync_directory(mdir.empty() ? "." : mdir);
  return mpath;
}

}  // namespace st::io
