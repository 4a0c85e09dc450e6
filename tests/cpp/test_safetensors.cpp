// safetensors reader/writer, JSON/bincode state dicts and manifests.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "spiraltorch/io/checkpoint.h"
#include "spiraltorch/io/safetensors.h"
#include "spiraltorch/spiraltorch.h"
#include "temp_dir.h"

namespace fs = std::filesystem;
using namespace st;

namespace {

using st::testing::TempDir;

io::NamedTensors sample() {
  return {{"w", Tensor::from_vector<float>({1.f, 2.f, 3.f, 4.f, 5.f, 6.f}, {2, 3})},
          {"b", Tensor::from_vector<double>({-1.5, 2.25}, {2})},
          {"i", Tensor::from_vector<int64_t>({7, -8, 9}, {3})},
          {"i32", Tensor::from_vector<int32_t>({1, 2}, {1, 2})},
          {"u", Tensor::from_vector<uint8_t>({0, 255}, {2})},
          {"m", Tensor::from_vector<bool>({true, false, true}, {3})},
          {"h", Tensor::from_vector<float>({0.5f, -2.f}, {2}).to(Dtype::Float16)},
          {"bf", Tensor::from_vector<float>({1.f, 3.f}, {2}).to(Dtype::BFloat16)},
          {"scalar", Tensor::from_vector<float>({42.f}, {})},
          {"empty", Tensor::from_vector<float>({}, {0, 4})}};
}

std::string bytes_of(const Tensor& t) {
  Tensor c = t.contiguous();
  return std::string(static_cast<const char*>(c.raw_data()), c.numel() * c.itemsize());
}

void expect_same(const io::NamedTensors& a, const io::NamedTensors& b) {
  ASSERT_EQ(a.size(), b.size());
  std::map<std::string, Tensor> bm(b.begin(), b.end());
  for (const auto& [k, t] : a) {
    ASSERT_TRUE(bm.count(k)) << k;
    EXPECT_EQ(bm[k].dtype(), t.dtype()) << k;
    EXPECT_EQ(bm[k].shape(), t.shape()) << k;
    EXPECT_EQ(bytes_of(bm[k]), bytes_of(t)) << k;
  }
}

void write_raw(const std::string& path, const std::string& bytes) {
  std::ofstream f(path, std::ios::binary);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

std::string raw_file(const std::string& header, const std::string& data) {
  std::string out(8, '\0');
  const uint64_t n = header.size();
  std::memcpy(out.data(), &n, 8);
  return out + header + data;
}

void expect_checkpoint_error(const std::string& bytes, const std::string& needle) {
  try {
    io::load_safetensors_bytes(bytes);
    FAIL() << "no error for " << needle;
  } catch (const CheckpointError& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    EXPECT_EQ(std::string(e.what()).rfind("safetensors: ", 0), 0u) << e.what();
  }
}

}  // namespace

TEST(Safetensors, RoundTripAllDtypesMmapAndCopy) {
  TempDir d;
  const auto t = sample();
  io::save_safetensors(d / "a.safetensors", t, {{"framework", "spiraltorch"}});
  for (bool copy : {false, true}) {
    io::Checkpoint c = io::load_safetensors(d / "a.safetensors", copy);
    expect_same(t, c.tensors);
    EXPECT_EQ(c.metadata.at("framework"), "spiraltorch");
  }
}

TEST(Safetensors, MmapTensorsOutliveEverythingAndAreCopyOnWrite) {
  TempDir d;
  io::save_safetensors(d / "a.safetensors", {{"x", Tensor::from_vector<float>({1.f, 2.f}, {2})}});
  Tensor x;
  {
    io::Checkpoint c = io::load_safetensors(d / "a.safetensors");
    x = c.tensors.at(0).second;
  }
  x.data<float>()[0] = 9.f;  // private mapping: the file is untouched
  EXPECT_EQ(x.to_vector<float>(), (std::vector<float>{9.f, 2.f}));
  EXPECT_EQ(io::load_safetensors(d / "a.safetensors").tensors.at(0).second.to_vector<float>(),
            (std::vector<float>{1.f, 2.f}));
}

TEST(Safetensors, BytesMatchReferenceLayout) {
  // The reference implementation's own test vector (serialize "attn.0", F32, [1,2,3]).
  const std::string got =
      io::save_safetensors_bytes({{"attn.0", Tensor::from_vector<float>({0, 1, 2, 3, 4, 5}, {1, 2, 3})}});
  const std::string header = R"({"attn.0":{"dtype":"F32","shape":[1,2,3],"data_offsets":[0,24]}})";
  ASSERT_EQ(got.size(), 8 + 64 + 24u);
  EXPECT_EQ(got.substr(8, header.size()), header);
  EXPECT_EQ(static_cast<unsigned char>(got[0]), 64);
  // Empty file with metadata.
  const std::string e = io::save_safetensors_bytes({}, {{"framework", "pt"}});
  EXPECT_EQ(e.substr(8), std::string(R"({"__metadata__":{"framework":"pt"}})") + "     ");
  EXPECT_EQ(io::save_safetensors_bytes({}).substr(8), "{}      ");
}

TEST(Safetensors, OrderIsDtypeRankThenName) {
  const std::string b = io::save_safetensors_bytes(sample());
  const auto pos = [&](const std::string& k) { return b.find("\"" + k + "\":"); };
  EXPECT_LT(pos("i"), pos("b"));      // I64 before F64
  EXPECT_LT(pos("b"), pos("empty"));  // F64 before F32
  EXPECT_LT(pos("empty"), pos("scalar"));
  EXPECT_LT(pos("w"), pos("i32"));  // F32 before I32
  EXPECT_LT(pos("bf"), pos("h"));   // BF16 before F16
  EXPECT_LT(pos("u"), pos("m"));    // U8 before BOOL
}

TEST(Safetensors, NonContiguousTensorsAreWrittenRowMajor) {
  Tensor a = Tensor::from_vector<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor at = st::transpose(a, 0, 1);
  io::Checkpoint c = io::load_safetensors_bytes(io::save_safetensors_bytes({{"t", at}}));
  EXPECT_EQ(c.tensors[0].second.shape(), (Shape{3, 2}));
  EXPECT_EQ(c.tensors[0].second.to_vector<float>(), (std::vector<float>{1, 4, 2, 5, 3, 6}));
}

TEST(Safetensors, RejectsHostileFiles) {
  const std::string data(8, '\0');
  const std::string ok = R"({"x":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})";
  EXPECT_NO_THROW(io::load_safetensors_bytes(raw_file(ok, data)));
  expect_checkpoint_error("abc", "too short");
  std::string huge(8, '\0');
  const uint64_t big = 200'000'000;
  std::memcpy(huge.data(), &big, 8);
  expect_checkpoint_error(huge + "{}", "exceeds the limit");
  std::string longer = raw_file(ok, data);
  const uint64_t n = 4096;
  std::memcpy(longer.data(), &n, 8);
  expect_checkpoint_error(longer, "exceeds the file size");
  expect_checkpoint_error(raw_file(R"({"x":{"dtype":"F32","shape":[2],)", data), "invalid JSON");
  expect_checkpoint_error(raw_file(R"([1,2])", ""), "header does not start");
  expect_checkpoint_error(raw_file(R"({"x":{"dtype":"Q8","shape":[2],"data_offsets":[0,8]}})", data), "unknown dtype");
  expect_checkpoint_error(raw_file(R"({"x":{"dtype":"I16","shape":[4],"data_offsets":[0,8]}})", data), "not supported");
  expect_checkpoint_error(raw_file(R"({"x":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})", data),
                          "needs 12 bytes");
  expect_checkpoint_error(raw_file(R"({"x":{"dtype":"F32","shape":[-2],"data_offsets":[0,8]}})", data), "non-negative");
  expect_checkpoint_error(raw_file(R"({"x":{"dtype":"F32","shape":[2],"data_offsets":[8,16]}})", data), "beyond");
  expect_checkpoint_error(
      raw_file(
          R"({"x":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"y":{"dtype":"F32","shape":[1],"data_offsets":[2,6]}})",
          data),
      "overlap");
  expect_checkpoint_error(raw_file(R"({"x":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})", data), "gap");
  expect_checkpoint_error(raw_file(R"({"x":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})", data), "trailing");
  expect_checkpoint_error(
      raw_file(R"({"x":{"dtype":"F32","shape":[4294967296,4294967296,16],"data_offsets":[0,8]}})", data), "overflows");
  expect_checkpoint_error(
      raw_file(
          R"({"x":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"x":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})",
          data),
      "duplicate key");
  expect_checkpoint_error(raw_file(R"({"x":{"dtype":"F32","shape":[2],"data_offsets":[8,0]}})", data), "end before");
  expect_checkpoint_error(raw_file(R"({"__metadata__":{"a":1}})", ""), "not a string");
  expect_checkpoint_error(raw_file(std::string(100, '[') + std::string(100, ']'), ""), "header does not start");
  expect_checkpoint_error(raw_file("{\"a\":" + std::string(100, '[') + std::string(100, ']') + "}", ""), "nesting");
  expect_checkpoint_error(
      raw_file(R"({"x":{"dtype":"BOOL","shape":[8],"data_offsets":[0,8]}})", std::string(8, '\x07')), "bool");
}

TEST(Safetensors, ErrorsNameThePath) {
  TempDir d;
  write_raw(d / "bad.safetensors", "xyz");
  try {
    io::load_safetensors(d / "bad.safetensors");
    FAIL();
  } catch (const CheckpointError& e) {
    EXPECT_EQ(std::string(e.what()),
              "safetensors: " + (d / "bad.safetensors") + ": file is 3 bytes, too short for the 8-byte header length");
  }
  EXPECT_THROW(io::load_safetensors(d / "missing.safetensors"), CheckpointError);
  EXPECT_THROW(io::load_safetensors(d.path.string()), CheckpointError);  // empty directory
}

TEST(Safetensors, ShardedIndex) {
  TempDir d;
  io::save_safetensors(d / "s1.safetensors", {{"a", Tensor::from_vector<float>({1.f}, {1})}});
  io::save_safetensors(d / "s2.safetensors", {{"b", Tensor::from_vector<int64_t>({2, 3}, {2})}});
  write_raw(d / "model.safetensors.index.json",
            R"({"metadata":{"total_size":20},"weight_map":{"a":"s1.safetensors","b":"s2.safetensors"}})");
  io::Checkpoint c = io::load_safetensors(d.path.string());
  ASSERT_EQ(c.tensors.size(), 2u);
  EXPECT_EQ(c.metadata.at("total_size"), "20");
  EXPECT_EQ(c.tensors[1].second.to_vector<int64_t>(), (std::vector<int64_t>{2, 3}));
  write_raw(d / "bad.index.json", R"({"weight_map":{"a":"s2.safetensors"}})");
  EXPECT_THROW(io::load_safetensors(d / "bad.index.json"), CheckpointError);
  write_raw(d / "evil.index.json", R"({"weight_map":{"a":"../s1.safetensors"}})");
  EXPECT_THROW(io::load_safetensors(d / "evil.index.json"), CheckpointError);
}

TEST(Safetensors, AtomicWriteKeepsOldFileOnFailure) {
  TempDir d;
  const std::string p = d / "a.safetensors";
  io::save_safetensors(p, {{"x", Tensor::from_vector<float>({1.f}, {1})}});
  const std::string before = io::read_file(p, "test");
  // Failing serialisation (duplicate names) happens before the file is touched.
  EXPECT_THROW(io::save_safetensors(
                   p, {{"x", Tensor::from_vector<float>({1.f}, {1})}, {"x", Tensor::from_vector<float>({2.f}, {1})}}),
               CheckpointError);
  // A failure in the middle of writing removes the temporary file.
  EXPECT_THROW(io::write_file_atomic(p, "test",
                                     [](const io::ByteSink& sink) {
    sink("partial", 7);
    throw CheckpointError("boom");
  }),
               CheckpointError);
  EXPECT_EQ(io::read_file(p, "test"), before);
  size_t files = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(d.path)) ++files;
  EXPECT_EQ(files, 1u);
  if (::geteuid() != 0) {  // root ignores directory permissions
    fs::permissions(d.path, fs::perms::owner_read | fs::perms::owner_exec);
    EXPECT_THROW(io::save_safetensors(p, {{"y", Tensor::from_vector<float>({3.f}, {1})}}), CheckpointError);
    fs::permissions(d.path, fs::perms::owner_all);
    EXPECT_EQ(io::read_file(p, "test"), before);
  }
}

TEST(SafetensorsStateFormats, JsonAndBincodeRoundTrip) {
  TempDir d;
  auto t = sample();
  t.emplace_back("special",
                 Tensor::from_vector<float>(
                     {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(), -0.1f}, {3}));
  io::save_json(d / "a.json", t, {{"k", "v"}});
  io::Checkpoint j = io::load_json(d / "a.json");
  expect_same(t, j.tensors);
  EXPECT_EQ(j.metadata.at("k"), "v");
  io::save_bincode(d / "a.bin", t, {{"k", "v"}});
  io::Checkpoint b = io::load_bincode(d / "a.bin");
  expect_same(t, b.tensors);
  // Bincode: every truncation is refused with a CheckpointError.
  const std::string bytes = io::save_bincode_bytes(t);
  for (size_t cut = 0; cut < bytes.size(); cut += 7) {
    EXPECT_THROW(io::load_bincode_bytes(bytes.substr(0, cut)), CheckpointError) << cut;
  }
  EXPECT_THROW(io::load_bincode_bytes(bytes + "x"), CheckpointError);
  EXPECT_THROW(io::load_json_bytes("{\"format\":\"spiraltorch.state_dict\",\"version\":1,\"tensors\":"
                                   "[{\"name\":\"a\",\"dtype\":\"int32\",\"shape\":[2],\"data\":[1,2.5]}]}"),
               CheckpointError);
}

TEST(SafetensorsStateFormats, ManifestRecordsHashAndDetectsTampering) {
  TempDir d;
  const auto t = sample();
  io::save_bincode(d / "m.bin", t);
  const std::string mp = io::write_manifest(d / "m.bin", "bincode", t, std::string("Linear"));
  EXPECT_EQ(mp, d / "m.bin.manifest.json");
  io::Manifest m = io::read_manifest(mp);
  EXPECT_EQ(m.format, "bincode");
  EXPECT_EQ(m.tensors.size(), t.size());
  EXPECT_EQ(m.sha256, io::sha256_file(d / "m.bin"));
  EXPECT_EQ(io::sha256_hex("abc", 3), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  io::save_bincode(d / "m.bin", {{"other", Tensor::from_vector<float>({1.f}, {1})}});
  EXPECT_THROW(io::read_manifest(mp), CheckpointError);
  EXPECT_NO_THROW(io::read_manifest(mp, /*verify=*/false));
}
