// IDX files (data/idx.h): parsing every supported type, gzip'ed files, malformed input, and the
// Fashion-MNIST loader on Debian's files when they are installed.
#include <gtest/gtest.h>

#include <array>
#include <cstring>
#include <fstream>
#include <string>

#include "spiraltorch/data/idx.h"
#include "spiraltorch/spiraltorch.h"
#include "temp_dir.h"

using namespace st;

namespace {

std::string header(uint8_t code, std::initializer_list<uint32_t> dims) {
  std::string h{'\0', '\0', static_cast<char>(code), static_cast<char>(dims.size())};
  for (uint32_t d : dims)
    for (int shift = 24; shift >= 0; shift -= 8) h.push_back(static_cast<char>((d >> shift) & 0xff));
  return h;
}

template <typename T>
std::string big_endian(std::initializer_list<T> values) {
  std::string out;
  for (T v : values) {
    char b[sizeof(T)];
    std::memcpy(b, &v, sizeof(T));
    for (size_t i = sizeof(T); i-- > 0;) out.push_back(b[i]);
  }
  return out;
}

void write(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// A gzip member holding `raw` in one stored (uncompressed) deflate block: a valid .gz without zlib.
std::string gzip_stored(const std::string& raw) {
  std::array<uint32_t, 256> table{};
  for (uint32_t n = 0; n < 256; ++n) {
    uint32_t c = n;
    for (int k = 0; k < 8; ++k) c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
    table[n] = c;
  }
  uint32_t crc = 0xffffffffu;
  for (unsigned char ch : raw) crc = table[(crc ^ ch) & 0xff] ^ (crc >> 8);
  crc ^= 0xffffffffu;
  std::string out{'\x1f', '\x8b', 8, 0, 0, 0, 0, 0, 0, '\xff'};
  const auto len = static_cast<uint16_t>(raw.size());
  out += {1, static_cast<char>(len & 0xff), static_cast<char>(len >> 8), static_cast<char>(~len & 0xff),
          static_cast<char>((~len >> 8) & 0xff)};
  out += raw;
  for (uint32_t v : {crc, static_cast<uint32_t>(raw.size())})
    for (int shift = 0; shift < 32; shift += 8) out.push_back(static_cast<char>((v >> shift) & 0xff));
  return out;
}

}  // namespace

TEST(Idx, ParsesEveryType) {
  const Tensor u8 = data::parse_idx(header(0x08, {2, 3}) + std::string{1, 2, 3, 4, 5, '\xff'});
  EXPECT_EQ(u8.dtype(), Dtype::UInt8);
  EXPECT_EQ(u8.shape(), (Shape{2, 3}));
  EXPECT_EQ(u8.to_vector<uint8_t>(), (std::vector<uint8_t>{1, 2, 3, 4, 5, 255}));

  const Tensor i32 = data::parse_idx(header(0x0C, {3}) + big_endian<int32_t>({-1, 70000, 7}));
  EXPECT_EQ(i32.dtype(), Dtype::Int32);
  EXPECT_EQ(i32.to_vector<int32_t>(), (std::vector<int32_t>{-1, 70000, 7}));

  const Tensor f32 = data::parse_idx(header(0x0D, {1, 2}) + big_endian<float>({1.5f, -0.25f}));
  EXPECT_EQ(f32.shape(), (Shape{1, 2}));
  EXPECT_EQ(f32.to_vector<float>(), (std::vector<float>{1.5f, -0.25f}));

  const Tensor f64 = data::parse_idx(header(0x0E, {2}) + big_endian<double>({3.0, 1e-300}));
  EXPECT_EQ(f64.to_vector<double>(), (std::vector<double>{3.0, 1e-300}));

  EXPECT_EQ(data::parse_idx(header(0x08, {0, 28})).shape(), (Shape{0, 28}));
}

TEST(Idx, MalformedInputRaisesCheckpointError) {
  const std::string body{1, 2, 3, 4};
  const auto fails = [](const std::string& bytes, const char* reason) {
    try {
      data::parse_idx(bytes, "x.idx");
      ADD_FAILURE() << "accepted: " << reason;
    } catch (const CheckpointError& e) {
      EXPECT_NE(std::string(e.what()).find("read_idx: x.idx: "), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(reason), std::string::npos) << e.what();
    }
  };
  fails("", "truncated header");
  fails(std::string("\0\0\x08", 3), "truncated header");
  fails(header(0x08, {4}).replace(0, 1, "\x01") + body, "not an IDX file");
  fails(header(0x09, {4}) + body, "unsupported type code 0x09");
  fails(header(0x08, {}) + body, "number of dims");
  fails(header(0x08, {2, 3}).substr(0, 9), "truncated header");
  fails(header(0x08, {5}) + body, "truncated data: expected 5 bytes, got 4");
  fails(header(0x08, {3}) + body, "bytes follow");
  fails(header(0x0D, {0xffffffff, 0xffffffff, 0xffffffff}), "too large");
}

TEST(Idx, ReadsPlainAndGzipFiles) {
  st::testing::TempDir dir;
  const std::string raw = header(0x08, {2, 2}) + std::string{9, 8, 7, 6};
  write(dir / "plain-idx1-ubyte", raw);
  EXPECT_EQ(data::read_idx(dir / "plain-idx1-ubyte").to_vector<uint8_t>(), (std::vector<uint8_t>{9, 8, 7, 6}));

  const std::string gz = gzip_stored(raw);
  write(dir / "packed-idx1-ubyte.gz", gz);
  write(dir / "cut-idx1-ubyte.gz", gz.substr(0, gz.size() - 12));  // ends inside the data
  write(dir / "long-idx1-ubyte.gz", gzip_stored(raw + "extra"));
  if (!data::idx_reads_gzip()) {
    EXPECT_THROW(data::read_idx(dir / "packed-idx1-ubyte.gz"), CheckpointError);
    GTEST_SKIP() << "built without zlib";
  }
  const Tensor t = data::read_idx(dir / "packed-idx1-ubyte.gz");
  EXPECT_EQ(t.shape(), (Shape{2, 2}));
  EXPECT_EQ(t.to_vector<uint8_t>(), (std::vector<uint8_t>{9, 8, 7, 6}));
  EXPECT_THROW(data::read_idx(dir / "cut-idx1-ubyte.gz"), CheckpointError);
  EXPECT_THROW(data::read_idx(dir / "long-idx1-ubyte.gz"), CheckpointError);
  EXPECT_THROW(data::read_idx(dir / "missing-idx1-ubyte"), CheckpointError);
}

TEST(Idx, FashionMnistLoaderFindsAndChecksFiles) {
  st::testing::TempDir dir;
  EXPECT_FALSE(data::find_fashion_mnist(dir.path.string()).has_value());
  EXPECT_THROW(data::load_fashion_mnist(dir.path.string()), CheckpointError);
  EXPECT_THROW(data::load_fashion_mnist(dir.path.string(), "validation"), ValueError);

  // A two-image "dataset" in a subdirectory: found below the root, scaled to [0, 1].
  std::filesystem::create_directories(dir.path / "sub");
  write(dir / "sub/train-images-idx3-ubyte", header(0x08, {2, 2, 2}) + std::string{0, 51, '\xff', 0, 1, 2, 3, 4});
  write(dir / "sub/train-labels-idx1-ubyte", header(0x08, {2}) + std::string{3, 9});
  EXPECT_EQ(data::find_fashion_mnist(dir.path.string()), (dir.path / "sub").string());
  const data::ImageSplit s = data::load_fashion_mnist(dir.path.string());
  EXPECT_EQ(s.images.shape(), (Shape{2, 1, 2, 2}));
  EXPECT_EQ(s.images.dtype(), Dtype::Float32);
  EXPECT_FLOAT_EQ(s.images.to_vector<float>()[1], 0.2f);
  EXPECT_FLOAT_EQ(s.images.to_vector<float>()[2], 1.0f);
  EXPECT_EQ(s.labels.dtype(), Dtype::Int64);
  EXPECT_EQ(s.labels.to_vector<int64_t>(), (std::vector<int64_t>{3, 9}));
  EXPECT_EQ(data::load_fashion_mnist(dir.path.string(), "train", false).images.dtype(), Dtype::UInt8);

  write(dir / "sub/train-labels-idx1-ubyte", header(0x08, {3}) + std::string{3, 9, 1});
  EXPECT_THROW(data::load_fashion_mnist(dir.path.string()), CheckpointError);          // 2 images, 3 labels
  EXPECT_THROW(data::load_fashion_mnist(dir.path.string(), "test"), CheckpointError);  // no t10k files
}

TEST(Idx, DebianFashionMnist) {
  const auto root = data::find_fashion_mnist();
  if (!root) GTEST_SKIP() << "Debian's dataset-fashion-mnist is not installed";
  if (!data::idx_reads_gzip()) GTEST_SKIP() << "built without zlib";
  const data::ImageSplit test = data::load_fashion_mnist("", "test");
  EXPECT_EQ(test.images.shape(), (Shape{10000, 1, 28, 28}));
  EXPECT_EQ(test.labels.shape(), (Shape{10000}));
  EXPECT_GE(min(test.images).item(), 0.0);
  EXPECT_LE(max(test.images).item(), 1.0);
  EXPECT_EQ(min(test.labels).item(), 0.0);
  EXPECT_EQ(max(test.labels).item(), 9.0);
  EXPECT_EQ(sum(eq(test.labels, Tensor::from_vector<int64_t>({9}, {1}))).item(), 1000.0);  // balanced classes
}
