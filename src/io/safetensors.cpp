// safetensors reader (mmap or copy, validated) and writer (byte-compatible, atomic).
#include "spiraltorch/io/safetensors.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <memory>
#include <set>
#include <unordered_map>

#include "io/io_internal.h"

namespace st::io {

using detail::fail;
using detail::json;
using detail::ordered_json;

namespace {

const char* kWhat = "safetensors";

// Rank in the reference implementation's Dtype enum; files list tensors by
// descending rank, then by name.
int dtype_rank(Dtype d) {
  switch (d) {
    case Dtype::Bool:
      return 0;
    case Dtype::UInt8:
      return 1;
    case Dtype::Float16:
      return 7;
    case Dtype::BFloat16:
      return 8;
    case Dtype::Int32:
      return 9;
    case Dtype::Float32:
      return 11;
    case Dtype::Float64:
      return 12;
    case Dtype::Int64:
    default:
      return 13;
  }
}

bool dtype_from_safetensors(const std::string& s, Dtype& out, bool& known) {
  static const std::unordered_map<std::string, Dtype> supported = {
      {"BOOL", Dtype::Bool},   {"U8", Dtype::UInt8},      {"I32", Dtype::Int32},   {"I64", Dtype::Int64},
      {"F16", Dtype::Float16}, {"BF16", Dtype::BFloat16}, {"F32", Dtype::Float32}, {"F64", Dtype::Float64}};
  static const std::set<std::string> others = {"I8",      "I16",     "U16",         "U32",        "U64",
                                               "F8_E5M2", "F8_E4M3", "F8_E8M0",     "F4",         "F6_E2M3",
                                               "F6_E3M2", "C64",     "F8_E4M3FNUZ", "F8_E5M2FNUZ"};
  auto it = supported.find(s);
  if (it != supported.end()) {
    out = it->second;
    known = true;
    return true;
  }
  known = others.count(s) > 0;
  return false;
}

std::string quote(const std::string& s) {
  // Names in messages: printable and bounded even when hostile.
  std::string out = "'";
  for (size_t i = 0; i < s.size() && i < 200; ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x20 || c == 0x7f) {
      static const char* hex = "0123456789abcdef";
      out += "\\x";
      out += hex[c >> 4];
      out += hex[c & 15];
    } else {
      out += static_cast<char>(c);
    }
  }
  if (s.size() > 200) out += "...";
  return out + "'";
}

bool as_u64(const json& v, uint64_t& out) {
  if (v.is_number_unsigned()) {
    out = v.get<uint64_t>();
    return true;
  }
  if (v.is_number_integer()) {
    const int64_t x = v.get<int64_t>();
    if (x < 0) return false;
    out = static_cast<uint64_t>(x);
    return true;
  }
  return false;
}

// Parses and validates the JSON header `hdr[0..n)` of a file of `file_size` bytes.
SafetensorsHeader parse_header(const char* hdr, uint64_t n, uint64_t file_size, const std::string& path) {
  SafetensorsHeader out;
  out.header_size = n;
  if (n == 0 || hdr[0] != '{') fail(kWhat, path, "header does not start with '{'");
  const json j = detail::parse_json(hdr, hdr + n, kWhat, path);
  if (!j.is_object()) fail(kWhat, path, "header is not a JSON object");
  const uint64_t data_size = file_size - 8 - n;
  for (const auto& [name, info] : j.items()) {
    if (name == "__metadata__") {
      if (info.is_null()) continue;
      if (!info.is_object()) fail(kWhat, path, "__metadata__ is not an object of strings");
      for (const auto& [k, v] : info.items()) {
        if (!v.is_string()) fail(kWhat, path, "__metadata__ value for " + quote(k) + " is not a string");
        out.metadata[k] = v.get<std::string>();
      }
      continue;
    }
    const std::string tn = "tensor " + quote(name);
    if (!info.is_object()) fail(kWhat, path, tn + ": entry is not an object");
    for (const auto& [field, _] : info.items()) {
      if (field != "dtype" && field != "shape" && field != "data_offsets") {
        fail(kWhat, path, tn + ": unknown field " + quote(field));
      }
    }
    if (!info.contains("dtype") || !info.contains("shape") || !info.contains("data_offsets")) {
      fail(kWhat, path, tn + ": entry needs dtype, shape and data_offsets");
    }
    TensorRecord rec;
    rec.name = name;
    const json& dt = info["dtype"];
    if (!dt.is_string()) fail(kWhat, path, tn + ": dtype is not a string");
    bool known = false;
    if (!dtype_from_safetensors(dt.get<std::string>(), rec.dtype, known)) {
      fail(kWhat, path,
           tn + (known ? ": dtype " + quote(dt.get<std::string>()) + " is not supported by SpiralTorch"
                       : ": unknown dtype " + quote(dt.get<std::string>())));
    }
    const json& shape = info["shape"];
    if (!shape.is_array()) fail(kWhat, path, tn + ": shape is not an array");
    if (shape.size() > static_cast<size_t>(kMaxDims)) {
      fail(kWhat, path,
           tn + ": " + std::to_string(shape.size()) + " dimensions exceed the maximum of " + std::to_string(kMaxDims));
    }
    for (const json& d : shape) {
      uint64_t v;
      if (!as_u64(d, v) || v > static_cast<uint64_t>(INT64_MAX)) {
        fail(kWhat, path, tn + ": shape " + shape.dump() + " has an entry that is not a non-negative integer");
      }
      rec.shape.push_back(static_cast<int64_t>(v));
    }
    const json& offs = info["data_offsets"];
    if (!offs.is_array() || offs.size() != 2 || !as_u64(offs[0], rec.begin) || !as_u64(offs[1], rec.end)) {
      fail(kWhat, path, tn + ": data_offsets must be two non-negative integers");
    }
    if (rec.end < rec.begin) {
      fail(kWhat, path,
           tn + ": data_offsets [" + std::to_string(rec.begin) + ", " + std::to_string(rec.end) +
               "] end before they begin");
    }
    uint64_t nbytes;
    if (!detail::checked_nbytes(rec.shape, rec.dtype, nbytes)) {
      fail(kWhat, path, tn + ": shape " + shape.dump() + " overflows the size of a tensor");
    }
    if (rec.end - rec.begin != nbytes) {
      fail(kWhat, path,
           tn + ": shape " + shape.dump() + " of " + dt.get<std::string>() + " needs " + std::to_string(nbytes) +
               " bytes but data_offsets [" + std::to_string(rec.begin) + ", " + std::to_string(rec.end) + "] span " +
               std::to_string(rec.end - rec.begin));
    }
    if (rec.end > data_size) {
      fail(kWhat, path,
           tn + ": data_offsets [" + std::to_string(rec.begin) + ", " + std::to_string(rec.end) +
               "] lie beyond the end of the data section (" + std::to_string(data_size) + " bytes; truncated file?)");
    }
    out.tensors.push_back(std::move(rec));
  }
  std::sort(out.tensors.begin(), out.tensors.end(), [](const TensorRecord& a, const TensorRecord& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
  });
  uint64_t expected = 0;
  const TensorRecord* prev = nullptr;
  for (const TensorRecord& r : out.tensors) {
    if (r.begin < expected) {
      fail(kWhat, path, "tensors " + quote(prev->name) + " and " + quote(r.name) + " overlap in the data section");
    }
    if (r.begin > expected) {
      fail(kWhat, path,
           "the data section has a gap of " + std::to_string(r.begin - expected) + " bytes before tensor " +
               quote(r.name));
    }
    expected = r.end;
    prev = &r;
  }
  if (expected != data_size) {
    fail(kWhat, path,
         "the tensors cover " + std::to_string(expected) + " bytes but the data section holds " +
             std::to_string(data_size) + " (trailing bytes)");
  }
  return out;
}

// Reads u64 N and checks it against the file size and the limit.
uint64_t checked_header_length(const uint8_t* first8, uint64_t file_size, const std::string& path) {
  if (file_size < 8) {
    fail(kWhat, path, "file is " + std::to_string(file_size) + " bytes, too short for the 8-byte header length");
  }
  const uint64_t n = detail::load_u64(first8);
  if (n > kMaxSafetensorsHeader) {
    fail(kWhat, path,
         "header length " + std::to_string(n) + " exceeds the limit of " + std::to_string(kMaxSafetensorsHeader) +
             " bytes");
  }
  if (n > file_size - 8) {
    fail(kWhat, path,
         "header length " + std::to_string(n) + " exceeds the file size " + std::to_string(file_size) +
             " (truncated file?)");
  }
  return n;
}

struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

void pread_all(int fd, void* dst, size_t n, uint64_t off, const std::string& path) {
  char* p = static_cast<char*>(dst);
  while (n > 0) {
    const ssize_t r = ::pread(fd, p, n, static_cast<off_t>(off));
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) fail(kWhat, path, std::string("read failed: ") + std::strerror(errno));
    if (r == 0) fail(kWhat, path, "unexpected end of file (the file shrank while being read)");
    p += r, n -= static_cast<size_t>(r), off += static_cast<uint64_t>(r);
  }
}

uint64_t open_regular(const std::string& path, Fd& f) {
  uint64_t size = 0;
  f.fd = detail::open_regular_file(path, kWhat, size);
  return size;
}

SafetensorsHeader read_header_fd(int fd, uint64_t size, const std::string& path) {
  uint8_t first8[8] = {0};
  if (size >= 8) pread_all(fd, first8, 8, 0, path);
  const uint64_t n = checked_header_length(first8, size, path);
  std::string hdr(n, '\0');
  pread_all(fd, hdr.data(), n, 8, path);
  return parse_header(hdr.data(), n, size, path);
}

struct Mapping {
  void* base = nullptr;
  size_t size = 0;
  ~Mapping() {
    if (base) ::munmap(base, size);
  }
};

Checkpoint load_single(const std::string& path, bool copy) {
  Fd f;
  const uint64_t size = open_regular(path, f);
  SafetensorsHeader h = read_header_fd(f.fd, size, path);
  const uint64_t data_start = 8 + h.header_size;
  Checkpoint out;
  out.metadata = std::move(h.metadata);
  std::shared_ptr<Mapping> map;
  if (!copy && !h.tensors.empty() && size > data_start) {
    void* p = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE, f.fd, 0);
    if (p == MAP_FAILED) fail(kWhat, path, std::string("mmap failed: ") + std::strerror(errno));
    map = std::make_shared<Mapping>();
    map->base = p;
    map->size = size;
  }
  for (TensorRecord& r : h.tensors) {
    const uint64_t nbytes = r.end - r.begin;
    const uint64_t at = data_start + r.begin;
    Tensor t;
    if (map && nbytes > 0 && at % dtype_size(r.dtype) == 0) {
      char* ptr = static_cast<char*>(map->base) + at;
      auto storage = Storage::wrap(ptr, nbytes, Device{}, [keep = map]() {});
      t = Tensor::from_storage(std::move(storage), r.shape, contiguous_strides(r.shape), 0, r.dtype);
    } else if (map) {
      t = detail::new_tensor(r.shape, r.dtype);  // misaligned data: copy
      if (nbytes) std::memcpy(t.raw_data(), static_cast<char*>(map->base) + at, nbytes);
    } else {
      t = detail::new_tensor(r.shape, r.dtype);
      if (nbytes) pread_all(f.fd, t.raw_data(), nbytes, at, path);
    }
    if (r.dtype == Dtype::Bool)
      detail::check_bool_bytes(static_cast<const uint8_t*>(t.raw_data()), nbytes, kWhat, path, r.name);
    out.tensors.emplace_back(std::move(r.name), std::move(t));
  }
  return out;
}

Checkpoint load_index(const std::string& index_path, bool copy) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const auto size = fs::file_size(index_path, ec);
  if (!ec && size > kMaxSafetensorsHeader) fail(kWhat, index_path, "index file is larger than the header limit");
  const std::string text = read_file(index_path, kWhat);
  const json j = detail::parse_json(text.data(), text.data() + text.size(), kWhat, index_path);
  if (!j.is_object() || !j.contains("weight_map") || !j["weight_map"].is_object()) {
    fail(kWhat, index_path, "index has no \"weight_map\" object");
  }
  Checkpoint out;
  if (j.contains("metadata") && !j["metadata"].is_null()) {
    if (!j["metadata"].is_object()) fail(kWhat, index_path, "index \"metadata\" is not an object");
    for (const auto& [k, v] : j["metadata"].items()) out.metadata[k] = v.is_string() ? v.get<std::string>() : v.dump();
  }
  const fs::path dir = fs::path(index_path).parent_path();
  std::vector<std::string> shard_order;
  std::map<std::string, std::set<std::string>> wanted;  // shard -> tensor names
  for (const auto& [name, file] : j["weight_map"].items()) {
    if (!file.is_string()) fail(kWhat, index_path, "weight_map entry " + quote(name) + " is not a file name");
    const std::string s = file.get<std::string>();
    const fs::path sp(s);
    bool bad = s.empty() || sp.is_absolute();
    for (const auto& part : sp) bad = bad || part == "..";
    if (bad)
      fail(kWhat, index_path,
           "weight_map entry " + quote(name) + " names the shard " + quote(s) + " outside the index's directory");
    if (!wanted.count(s)) shard_order.push_back(s);
    wanted[s].insert(name);
  }
  for (const std::string& s : shard_order) {
    const std::string shard_path = (dir / s).string();
    Checkpoint shard = load_single(shard_path, copy);
    std::set<std::string>& names = wanted[s];
    for (auto& [name, t] : shard.tensors) {
      if (!names.erase(name)) {
        fail(kWhat, index_path,
             "shard " + quote(s) + " holds tensor " + quote(name) + " that weight_map does not assign to it");
      }
      out.tensors.emplace_back(name, std::move(t));
    }
    if (!names.empty()) {
      fail(kWhat, index_path,
           "weight_map assigns tensor " + quote(*names.begin()) + " to shard " + quote(s) +
               ", which does not contain it");
    }
    for (auto& [k, v] : shard.metadata) out.metadata.emplace(k, v);
  }
  return out;
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

const char* safetensors_dtype_name(Dtype d) {
  switch (d) {
    case Dtype::Bool:
      return "BOOL";
    case Dtype::UInt8:
      return "U8";
    case Dtype::Int32:
      return "I32";
    case Dtype::Int64:
      return "I64";
    case Dtype::Float16:
      return "F16";
    case Dtype::BFloat16:
      return "BF16";
    case Dtype::Float32:
      return "F32";
    case Dtype::Float64:
    default:
      return "F64";
  }
}

SafetensorsHeader read_safetensors_header(const std::string& path) {
  Fd f;
  const uint64_t size = open_regular(path, f);
  return read_header_fd(f.fd, size, path);
}

Checkpoint load_safetensors(const std::string& path, bool copy) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    const fs::path index = fs::path(path) / "model.safetensors.index.json";
    if (fs::exists(index, ec)) return load_index(index.string(), copy);
    const fs::path single = fs::path(path) / "model.safetensors";
    if (fs::exists(single, ec)) return load_single(single.string(), copy);
    fail(kWhat, path, "directory holds neither model.safetensors.index.json nor model.safetensors");
  }
  if (ends_with(path, ".index.json")) return load_index(path, copy);
  return load_single(path, copy);
}

Checkpoint load_safetensors_bytes(const void* data, size_t size, const std::string& label) {
  const auto* bytes = static_cast<const uint8_t*>(data);
  const uint64_t n = checked_header_length(bytes, size, label);
  SafetensorsHeader h = parse_header(reinterpret_cast<const char*>(bytes + 8), n, size, label);
  Checkpoint out;
  out.metadata = std::move(h.metadata);
  for (TensorRecord& r : h.tensors) {
    Tensor t = detail::new_tensor(r.shape, r.dtype);
    const uint64_t nbytes = r.end - r.begin;
    if (nbytes) std::memcpy(t.raw_data(), bytes + 8 + n + r.begin, nbytes);
    if (r.dtype == Dtype::Bool)
      detail::check_bool_bytes(static_cast<const uint8_t*>(t.raw_data()), nbytes, kWhat, label, r.name);
    out.tensors.emplace_back(std::move(r.name), std::move(t));
  }
  return out;
}

Checkpoint load_safetensors_bytes(const std::string& bytes, const std::string& label) {
  return load_safetensors_bytes(bytes.data(), bytes.size(), label);
}

namespace {

// The header bytes and the tensors in file order.
std::pair<std::string, NamedTensors> prepare(const NamedTensors& tensors, const Metadata& metadata,
                                             const std::string& path) {
  std::vector<std::pair<std::string, Tensor>> items;
  std::set<std::string> seen;
  for (const auto& [name, t] : tensors) {
    if (name == "__metadata__") fail(kWhat, path, "'__metadata__' is reserved and cannot name a tensor");
    if (!seen.insert(name).second) fail(kWhat, path, "duplicate tensor name " + quote(name));
    if (!detail::valid_utf8(name)) fail(kWhat, path, "tensor name " + quote(name) + " is not valid UTF-8");
    items.emplace_back(name, detail::bytes_view(t, kWhat, path, name));
  }
  for (const auto& [k, v] : metadata) {
    if (!detail::valid_utf8(k) || !detail::valid_utf8(v))
      fail(kWhat, path, "metadata entry " + quote(k) + " is not valid UTF-8");
  }
  std::stable_sort(items.begin(), items.end(), [](const auto& a, const auto& b) {
    const int ra = dtype_rank(a.second.dtype()), rb = dtype_rank(b.second.dtype());
    return ra != rb ? ra > rb : a.first < b.first;
  });
  ordered_json h = ordered_json::object();
  if (!metadata.empty()) {
    ordered_json m = ordered_json::object();
    for (const auto& [k, v] : metadata) m[k] = v;
    h["__metadata__"] = std::move(m);
  }
  uint64_t offset = 0;
  for (const auto& [name, t] : items) {
    const uint64_t n = static_cast<uint64_t>(t.numel()) * t.itemsize();
    ordered_json e = ordered_json::object();
    e["dtype"] = safetensors_dtype_name(t.dtype());
    ordered_json shape = ordered_json::array();
    for (int64_t d : t.shape()) shape.push_back(static_cast<uint64_t>(d));
    e["shape"] = std::move(shape);
    e["data_offsets"] = ordered_json::array({offset, offset + n});
    h[name] = std::move(e);
    offset += n;
  }
  std::string header = h.dump();
  header.append((8 - header.size() % 8) % 8, ' ');
  std::string prefix;
  detail::append_u64(prefix, header.size());
  prefix += header;
  return {std::move(prefix), std::move(items)};
}

}  // namespace

std::string save_safetensors_bytes(const NamedTensors& tensors, const Metadata& metadata) {
  auto [out, items] = prepare(tensors, metadata, "<bytes>");
  for (const auto& [name, t] : items) out.append(static_cast<const char*>(t.raw_data()), t.numel() * t.itemsize());
  return out;
}

void save_safetensors(const std::string& path, const NamedTensors& tensors, const Metadata& metadata) {
  // Not a structured binding: lambdas may capture those only from C++20 compilers newer
  // than clang 14, which builds the fuzz targets.
  const auto prepared = prepare(tensors, metadata, path);
  const auto& header = prepared.first;
  const auto& items = prepared.second;
  write_file_atomic(path, kWhat, [&](const ByteSink& sink) {
    sink(header.data(), header.size());
    for (const auto& [name, t] : items) sink(t.raw_data(), static_cast<size_t>(t.numel()) * t.itemsize());
  });
}

}  // namespace st::io
