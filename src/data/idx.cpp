// IDX files and the Fashion-MNIST loader (see include/spiraltorch/data/idx.h).
#include "spiraltorch/data/idx.h"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <system_error>

#include "spiraltorch/error.h"
#include "spiraltorch/ops.h"

#ifdef SPIRALTORCH_WITH_ZLIB
#include <zlib.h>
#endif

namespace st::data {
namespace {

// Fills up to n bytes at dst; returns how many it read (fewer only at the end of the input).
using ByteReader = std::function<size_t(void* dst, size_t n)>;

[[noreturn]] void bad(const std::string& label, const std::string& reason) {
  throw CheckpointError("read_idx: " + label + ": " + reason);
}

Dtype idx_dtype(uint8_t code, const std::string& label) {
  switch (code) {
    case 0x08:
      return Dtype::UInt8;
    case 0x0C:
      return Dtype::Int32;
    case 0x0D:
      return Dtype::Float32;
    case 0x0E:
      return Dtype::Float64;
    default: {
      char hex[8];
      std::snprintf(hex, sizeof hex, "0x%02X", code);
      bad(label, std::string("unsupported type code ") + hex +
                     " (expected 0x08 uint8, 0x0C int32, 0x0D float32 or 0x0E float64)");
    }
  }
}

void read_exactly(const ByteReader& read, void* dst, size_t n, const std::string& label, const char* what) {
  const size_t got = read(dst, n);
  if (got != n) {
    bad(label,
        std::string("truncated ") + what + ": expected " + std::to_string(n) + " bytes, got " + std::to_string(got));
  }
}

// Header, then the body straight into the tensor, then a check that nothing follows. `total`: the
// input's size when known (a plain file, bytes in memory), checked before the tensor is allocated.
Tensor parse(const ByteReader& read, const std::string& label, std::optional<uint64_t> total) {
  uint8_t magic[4];
  read_exactly(read, magic, 4, label, "header");
  if (magic[0] != 0 || magic[1] != 0) bad(label, "not an IDX file (the first two bytes must be zero)");
  const Dtype dtype = idx_dtype(magic[2], label);
  const int ndim = magic[3];
  if (ndim < 1 || ndim > 8) bad(label, "the number of dims must be 1 to 8, got " + std::to_string(ndim));
  uint8_t raw_dims[32];
  read_exactly(read, raw_dims, 4 * static_cast<size_t>(ndim), label, "header");
  Shape shape(static_cast<size_t>(ndim));
  for (int d = 0; d < ndim; ++d) {
    const uint8_t* b = raw_dims + 4 * d;
    shape[d] = (int64_t{b[0]} << 24) | (int64_t{b[1]} << 16) | (int64_t{b[2]} << 8) | int64_t{b[3]};
  }
  int64_t numel = 0;
  try {
    numel = checked_numel(shape, dtype_size(dtype), "read_idx");
  } catch (const ShapeError& e) {
    bad(label, std::string("the dims ") + shape_str(shape) + " are too large (" + e.what() + ")");
  }
  const size_t item = dtype_size(dtype);
  const size_t bytes = static_cast<size_t>(numel) * item;
  if (const uint64_t head = 4 + 4 * static_cast<uint64_t>(ndim); total && *total - head < bytes) {
    bad(label, "truncated data: expected " + std::to_string(bytes) + " bytes, got " + std::to_string(*total - head));
  }
  Tensor out = Tensor::empty(shape, dtype);
  read_exactly(read, out.raw_data(), bytes, label, "data");
  char extra;
  if (read(&extra, 1) != 0) bad(label, "bytes follow the " + std::to_string(bytes) + " data bytes the dims declare");
  if (item > 1) {  // big-endian on disk
    auto* p = static_cast<uint8_t*>(out.raw_data());
    for (size_t i = 0; i < bytes; i += item) std::reverse(p + i, p + i + item);
  }
  return out;
}

bool has_gzip_magic(const std::string& path) {
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> f(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (!f) bad(path, std::string("cannot open: ") + std::strerror(errno));
  unsigned char m[2] = {0, 0};
  const size_t got = std::fread(m, 1, 2, f.get());
  return got == 2 && m[0] == 0x1f && m[1] == 0x8b;
}

std::optional<uint64_t> file_size(const std::string& path) {
  std::error_code ec;
  const auto n = std::filesystem::file_size(path, ec);
  return ec ? std::nullopt : std::optional<uint64_t>(n);
}

}  // namespace

bool idx_reads_gzip() {
#ifdef SPIRALTORCH_WITH_ZLIB
  return true;
#else
  return false;
#endif
}

Tensor parse_idx(std::string_view bytes, const std::string& label) {
  size_t pos = 0;
  return parse([&](void* dst, size_t n) {
    const size_t take = std::min(n, bytes.size() - pos);
    if (take > 0) std::memcpy(dst, bytes.data() + pos, take);  // an empty tensor's data may be null
    pos += take;
    return take;
  }, label, bytes.size());
}

Tensor read_idx(const std::string& path) {
  if (has_gzip_magic(path)) {
#ifdef SPIRALTORCH_WITH_ZLIB
    std::unique_ptr<gzFile_s, int (*)(gzFile)> gz(gzopen(path.c_str(), "rb"), &gzclose);
    if (!gz) bad(path, "cannot open");
    gzbuffer(gz.get(), 1 << 17);
    return parse([&](void* dst, size_t n) {
      size_t done = 0;
      while (done < n) {
        const auto chunk = static_cast<unsigned>(std::min<size_t>(n - done, INT_MAX / 2));
        const int got = gzread(gz.get(), static_cast<char*>(dst) + done, chunk);
        if (got < 0) {
          int code = 0;
          const char* msg = gzerror(gz.get(), &code);
          bad(path, std::string("gzip: ") + (msg ? msg : "read error"));
        }
        if (got == 0) break;
        done += static_cast<size_t>(got);
      }
      return done;
    }, path, std::nullopt);
#else
    bad(path, "the file is gzip-compressed and this build has no zlib; decompress it first (gunzip)");
#endif
  }
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> f(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (!f) bad(path, std::string("cannot open: ") + std::strerror(errno));
  return parse([&](void* dst, size_t n) {
    const size_t got = std::fread(dst, 1, n, f.get());
    if (got < n && std::ferror(f.get())) bad(path, "read error");
    return got;
  }, path, file_size(path));
}

std::optional<std::string> find_fashion_mnist(const std::string& root) {
  namespace fs = std::filesystem;
  std::vector<std::string> candidates;
  if (!root.empty()) {
    candidates.push_back(root);
  } else {
    if (const char* env = std::getenv("SPIRALTORCH_FASHION_MNIST")) candidates.emplace_back(env);
    for (const char* d :
         {"/usr/share/fashion-mnist", "/usr/share/dataset-fashion-mnist", "/usr/share/datasets/fashion-mnist"})
      candidates.emplace_back(d);
  }
  const auto holds = [](const fs::path& dir) {
    std::error_code ec;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
      if (it->path().filename().string().starts_with("train-images-idx3-ubyte")) return true;
    return false;
  };
  for (const std::string& c : candidates) {
    std::error_code ec;
    if (c.empty() || !fs::is_directory(c, ec)) continue;
    if (holds(c)) return c;
    for (fs::recursive_directory_iterator it(c, fs::directory_options::skip_permission_denied, ec), end;
         !ec && it != end; it.increment(ec)) {
      if (it->is_directory(ec) && holds(it->path())) return it->path().string();
    }
  }
  return std::nullopt;
}

ImageSplit load_fashion_mnist(const std::string& root, const std::string& split, bool scaled) {
  if (split != "train" && split != "test") {
    throw ValueError("load_fashion_mnist: split must be 'train' or 'test', got '" + split + "'");
  }
  const std::optional<std::string> base = find_fashion_mnist(root);
  if (!base) {
    throw CheckpointError("load_fashion_mnist: Fashion-MNIST not found" +
                          (root.empty() ? std::string() : " under " + root) +
                          ": install Debian's dataset-fashion-mnist or set SPIRALTORCH_FASHION_MNIST");
  }
  const std::string prefix = split == "train" ? "train" : "t10k";
  const auto pick = [&](const std::string& stem) {
    for (const std::string& name : {stem, stem + ".gz"}) {
      const std::filesystem::path p = std::filesystem::path(*base) / name;
      std::error_code ec;
      if (std::filesystem::exists(p, ec)) return p.string();
    }
    throw CheckpointError("load_fashion_mnist: " + stem + " missing in " + *base);
  };
  Tensor images = read_idx(pick(prefix + "-images-idx3-ubyte"));
  Tensor labels = read_idx(pick(prefix + "-labels-idx1-ubyte"));
  if (images.dim() != 3 || images.dtype() != Dtype::UInt8 || labels.dim() != 1 || labels.dtype() != Dtype::UInt8) {
    throw CheckpointError("load_fashion_mnist: expected uint8 images (N, H, W) and labels (N,), got images " +
                          shape_str(images.shape()) + " " + dtype_name(images.dtype()) + " and labels " +
                          shape_str(labels.shape()) + " " + dtype_name(labels.dtype()));
  }
  if (images.size(0) != labels.size(0)) {
    throw CheckpointError("load_fashion_mnist: " + std::to_string(images.size(0)) + " images but " +
                          std::to_string(labels.size(0)) + " labels");
  }
  images = reshape(images, {images.size(0), 1, images.size(1), images.size(2)});
  if (scaled) images = div(images.to(Dtype::Float32), 255.0).contiguous();
  return {std::move(images), labels.to(Dtype::Int64)};
}

}  // namespace st::data
