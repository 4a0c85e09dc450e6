#pragma once
// Encoders for 8-bit RGBA surfaces: binary PPM (P6) and PNG (colour type 6, 8 bits per channel).
#include <cstdint>
#include <cstddef>
#include <string>

#include "spiraltorch/tensor.h"

namespace st::canvas {

// A (height, width, 4) uint8 tensor as P6 bytes: "P6\n<w> <h>\n255\n" then RGB triplets. PPM has no
// alpha channel, so each colour is composited over black (c * a / 255, rounded).
std::string encode_ppm(const Tensor& rgba);
// PNG's limit on a chunk's length.
inline constexpr size_t kPngMaxChunk = 0x7fffffff;
// A (height, width, 4) uint8 tensor as PNG bytes: signature, IHDR, IDAT chunks holding the
// zlib stream of the filter-0 scanlines (split every idat_chunk_bytes, at most kPngMaxChunk; a
// smaller value only serves tests), IEND. Compressed with the system zlib when the build found
// it, else stored (uncompressed) deflate blocks with our own Adler-32; chunk CRCs are CRC-32.
std::string encode_png(const Tensor& rgba, size_t idat_chunk_bytes = kPngMaxChunk);
// The CRC-32 (ISO 3309 / PNG) and Adler-32 (RFC 1950) checksums, exposed for tests.
uint32_t crc32(const void* data, size_t size, uint32_t crc = 0);
uint32_t adler32(const void* data, size_t size, uint32_t adler = 1);
// A zlib stream (RFC 1950) of stored deflate blocks: what encode_png uses without zlib (exposed for tests).
std::string zlib_stored_stream(const std::string& raw);
// True when encode_png compresses with zlib (false: stored blocks).
bool png_uses_zlib();

// Atomic writes (temporary file, then rename; CheckpointError naming the path on failure).
void write_ppm(const std::string& path, const Tensor& rgba);
void write_png(const std::string& path, const Tensor& rgba);

}  // namespace st::canvas
