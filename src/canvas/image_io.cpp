// PPM and PNG encoders for RGBA surfaces (no image library: both formats are short to write).
#include "spiraltorch/canvas/image_io.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <string_view>

#include "spiraltorch/error.h"
#include "spiraltorch/io/checkpoint.h"
#include "spiraltorch/ops.h"

#ifdef SPIRALTORCH_WITH_ZLIB
#include <zlib.h>
#endif

namespace st::canvas {
namespace {

// Checks the surface form and returns a contiguous CPU copy's bytes with its size.
std::string surface_bytes(const Tensor& rgba, const char* op, int64_t& h, int64_t& w) {
  if (!rgba.defined()) throw ValueError(std::string(op) + ": the surface is undefined");
  if (rgba.dtype() != Dtype::UInt8) {
    throw DtypeError(std::string(op) + ": expected a uint8 surface, got " + dtype_name(rgba.dtype()));
  }
  if (rgba.dim() != 3 || rgba.size(2) != 4 || rgba.size(0) < 1 || rgba.size(1) < 1) {
    throw ShapeError(std::string(op) + ": expected a (height, width, 4) surface, got " + shape_str(rgba.shape()));
  }
  h = rgba.size(0);
  w = rgba.size(1);
  Tensor c = rgba.detach().contiguous();
  if (c.device().type != DeviceType::CPU) c = to_device(c, Device());
  return std::string(static_cast<const char*>(c.raw_data()), static_cast<size_t>(h * w * 4));
}

const std::array<uint32_t, 256>& crc_table() {
  static const std::array<uint32_t, 256> table = [] {
    std::array<uint32_t, 256> t{};
    for (uint32_t n = 0; n < 256; ++n) {
      uint32_t c = n;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
      t[n] = c;
    }
    return t;
  }();
  return table;
}

void put_be32(std::string& out, uint32_t v) {
  const char b[4] = {static_cast<char>(v >> 24), static_cast<char>(v >> 16), static_cast<char>(v >> 8),
                     static_cast<char>(v)};
  out.append(b, 4);
}

void put_chunk(std::string& out, const char type[4], std::string_view data) {
  if (data.size() > kPngMaxChunk) {
    throw ValueError("encode_png: a chunk holds at most 2^31 - 1 bytes, got " + std::to_string(data.size()));
  }
  put_be32(out, static_cast<uint32_t>(data.size()));
  const size_t body = out.size();
  out.append(type, 4);
  out.append(data);
  put_be32(out, crc32(out.data() + body, out.size() - body));
}

// The zlib stream of raw: zlib's compress2 when linked, else stored deflate blocks (at most
// 65535 bytes each) framed by the zlib header and the Adler-32 of raw.
std::string zlib_stream(const std::string& raw) {
#ifdef SPIRALTORCH_WITH_ZLIB
  uLongf size = compressBound(static_cast<uLong>(raw.size()));
  std::string out(size, '\0');
  const int rc = compress2(reinterpret_cast<Bytef*>(out.data()), &size, reinterpret_cast<const Bytef*>(raw.data()),
                           static_cast<uLong>(raw.size()), 6);
  if (rc != Z_OK) throw SpiralError("encode_png: zlib compress2 failed with code " + std::to_string(rc));
  out.resize(size);
  return out;
#else
  return zlib_stored_stream(raw);
#endif
}

}  // namespace

std::string zlib_stored_stream(const std::string& raw) {
  std::string out("\x78\x01", 2);  // deflate, 32 KiB window, no preset dictionary, check bits valid
  size_t pos = 0;
  do {
    const size_t n = std::min<size_t>(65535, raw.size() - pos);
    const bool last = pos + n == raw.size();
    out.push_back(static_cast<char>(last ? 1 : 0));  // BFINAL, BTYPE = 00 (stored)
    const uint16_t len = static_cast<uint16_t>(n), nlen = static_cast<uint16_t>(~len);
    out.push_back(static_cast<char>(len & 0xff));
    out.push_back(static_cast<char>(len >> 8));
    out.push_back(static_cast<char>(nlen & 0xff));
    out.push_back(static_cast<char>(nlen >> 8));
    out.append(raw, pos, n);
    pos += n;
  } while (pos < raw.size());
  put_be32(out, adler32(raw.data(), raw.size()));
  return out;
}

uint32_t crc32(const void* data, size_t size, uint32_t crc) {
  const auto& t = crc_table();
  const auto* p = static_cast<const uint8_t*>(data);
  uint32_t c = crc ^ 0xFFFFFFFFu;
  for (size_t i = 0; i < size; ++i) c = t[(c ^ p[i]) & 0xff] ^ (c >> 8);
  return c ^ 0xFFFFFFFFu;
}

uint32_t adler32(const void* data, size_t size, uint32_t adler) {
  const auto* p = static_cast<const uint8_t*>(data);
  uint32_t a = adler & 0xffff, b = adler >> 16;
  for (size_t i = 0; i < size; ++i) {
    a = (a + p[i]) % 65521u;
    b = (b + a) % 65521u;
  }
  return (b << 16) | a;
}

bool png_uses_zlib() {
#ifdef SPIRALTORCH_WITH_ZLIB
  return true;
#else
  return false;
#endif
}

std::string encode_ppm(const Tensor& rgba) {
  int64_t h = 0, w = 0;
  const std::string px = surface_bytes(rgba, "encode_ppm", h, w);
  std::string out = "P6\n" + std::to_string(w) + " " + std::to_string(h) + "\n255\n";
  out.reserve(out.size() + static_cast<size_t>(h * w * 3));
  for (int64_t i = 0; i < h * w; ++i) {
    const auto a = static_cast<uint8_t>(px[i * 4 + 3]);
    for (int k = 0; k < 3; ++k) {
      const auto c = static_cast<uint8_t>(px[i * 4 + k]);
      out.push_back(static_cast<char>((c * a + 127) / 255));
    }
  }
  return out;
}

std::string encode_png(const Tensor& rgba, size_t idat_chunk_bytes) {
  int64_t h = 0, w = 0;
  const std::string px = surface_bytes(rgba, "encode_png", h, w);
  if (h > 0x7fffffff || w > 0x7fffffff) {
    throw ShapeError("encode_png: a PNG side is at most 2^31 - 1 pixels, got " + shape_str(rgba.shape()));
  }
  // Each scanline is prefixed by its filter type; 0 (None) keeps the encoder trivially correct.
  std::string raw;
  raw.reserve(static_cast<size_t>(h * (w * 4 + 1)));
  for (int64_t y = 0; y < h; ++y) {
    raw.push_back('\0');
    raw.append(px, static_cast<size_t>(y * w * 4), static_cast<size_t>(w * 4));
  }
  std::string out("\x89PNG\r\n\x1a\n", 8);
  std::string ihdr;
  put_be32(ihdr, static_cast<uint32_t>(w));
  put_be32(ihdr, static_cast<uint32_t>(h));
  ihdr += std::string("\x08\x06\x00\x00\x00", 5);  // 8 bits, RGBA, deflate, adaptive filtering, no interlace
  put_chunk(out, "IHDR", ihdr);
  // The zlib stream spans as many IDAT chunks as the chunk length limit needs (PNG 11.2.4).
  const std::string z = zlib_stream(raw);
  const size_t per_chunk = std::clamp<size_t>(idat_chunk_bytes, 1, kPngMaxChunk);
  for (size_t pos = 0; pos < z.size(); pos += per_chunk) {
    put_chunk(out, "IDAT", std::string_view(z).substr(pos, per_chunk));
  }
  put_chunk(out, "IEND", std::string());
  return out;
}

void write_ppm(const std::string& path, const Tensor& rgba) {
  const std::string bytes = encode_ppm(rgba);  // encode first: a bad surface leaves the file alone
  io::write_file_atomic(path, "write_ppm", [&](const io::ByteSink& sink) { sink(bytes.data(), bytes.size()); });
}

void write_png(const std::string& path, const Tensor& rgba) {
  const std::string bytes = encode_png(rgba);
  io::write_file_atomic(path, "write_png", [&](const io::ByteSink& sink) { sink(bytes.data(), bytes.size()); });
}

}  // namespace st::canvas
