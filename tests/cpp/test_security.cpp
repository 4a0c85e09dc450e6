// Security and reliability findings (issue: no file we load runs code, no input crashes the
// process, no save loses what was there): thread-count bounds, atomic saves that keep permissions
// and follow links, host-tagged temporaries, JSON size limits, trace modes, the st.save structure
// decoder and PNG chunk limits. The SpiralK else-if chain is in test_spiralk.cpp.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>
#ifdef SPIRALTORCH_TEST_WITH_ZLIB
#include <zlib.h>
#endif

#include <chrono>
#include <filesystem>
#include <cmath>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <set>

#include "spiraltorch/canvas/image_io.h"
#include "spiraltorch/io/checkpoint.h"
#include "spiraltorch/io/structure.h"
#include "spiraltorch/io/trace.h"
#include "spiraltorch/ops.h"
#include "spiraltorch/threads.h"
#include "temp_dir.h"

using namespace st;
using st::testing::TempDir;
namespace fs = std::filesystem;

namespace {

mode_t mode_of(const std::string& path) {
  struct stat sb{};
  EXPECT_EQ(::stat(path.c_str(), &sb), 0) << path;
  return sb.st_mode & 07777;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

std::string error_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const CheckpointError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(Security, ThreadCountIsBoundedAndAFailedSetChangesNothing) {
  const int before = get_num_threads();
  EXPECT_THROW(set_num_threads(1'000'000), ValueError);
  EXPECT_THROW(set_num_threads(int64_t{1} << 40), ValueError);
  EXPECT_THROW(set_num_threads(0), ValueError);
  EXPECT_EQ(get_num_threads(), before);
  try {
    set_num_threads(1'000'000);
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("1000000 threads requested"), std::string::npos) << e.what();
  }
  set_num_threads(max_num_threads());
  EXPECT_EQ(get_num_threads(), max_num_threads());
  const Tensor a = ones({64, 64});
  EXPECT_FLOAT_EQ(sum(matmul(a, a)).item(), 64.0f * 64 * 64);  // the next kernel still runs
  set_num_threads(before);
}

TEST(Security, SavingOverAFileKeepsItsPermissions) {
  TempDir d;
  const std::string w = d / "w.safetensors";
  const io::NamedTensors v = {{"w", ones({4})}};
  io::save_safetensors(w, v);
  ASSERT_EQ(::chmod(w.c_str(), 0600), 0);
  io::save_safetensors(w, v);
  EXPECT_EQ(mode_of(w), 0600u);
  // The manifest pair keeps the weights' mode too.
  auto saver = [&](const std::string& to) { io::save_safetensors(to, v); };
  ASSERT_EQ(::chmod(w.c_str(), 0640), 0);
  io::save_with_manifest(w, "safetensors", saver, v);
  EXPECT_EQ(mode_of(w), 0640u);
}

TEST(Security, SavingThroughASymlinkReplacesTheFileItNamesAndKeepsTheLink) {
  TempDir d;
  fs::create_directory(d.path / "runs");
  const std::string real = d / "runs/ckpt.safetensors", link = d / "latest.safetensors";
  io::save_safetensors(real, {{"w", zeros({2})}});
  fs::create_symlink("runs/ckpt.safetensors", link);
  io::save_safetensors(link, {{"w", ones({2})}});
  EXPECT_TRUE(fs::is_symlink(link));
  EXPECT_EQ(sum(io::load_safetensors(real).tensors.at(0).second).item(), 2.0f);
  // With a manifest: the manifest sits beside the link and verifies through it.
  auto saver = [](const io::NamedTensors& t) { return [t](const std::string& to) { io::save_safetensors(to, t); }; };
  const io::NamedTensors v3 = {{"w", full({2}, 3.0, Dtype::Float32)}};
  const std::string mp = io::save_with_manifest(link, "safetensors", saver(v3), v3);
  EXPECT_TRUE(fs::is_symlink(link));
  EXPECT_EQ(mp, link + ".manifest.json");
  EXPECT_NO_THROW(io::read_manifest(mp));
  EXPECT_EQ(sum(io::load_safetensors(real).tensors.at(0).second).item(), 6.0f);
}

TEST(Security, OnlyOurOwnDeadOrOldTemporariesAreRemoved) {
  TempDir d;
  const std::string w = d / "m.safetensors";
  const std::string tag = io::temporary_host_tag();
  ASSERT_EQ(tag.size(), 16u);
  const std::string ours_dead = d / (".m.safetensors.tmp-" + tag + "-999999999-0");
  const std::string foreign = d / ".m.safetensors.tmp-0123456789abcdef-999999999-0";  // another host's save
  const std::string foreign_old = d / ".m.safetensors.tmp-fedcba9876543210-4242-1";
  const std::string legacy = d / ".m.safetensors.tmp-999999999-2";  // no host tag: foreign
  for (const auto& p : {ours_dead, foreign, foreign_old, legacy}) std::ofstream(p) << "partial";
  fs::last_write_time(foreign_old, fs::file_time_type::clock::now() - std::chrono::hours(25));
  auto saver = [](const std::string& to) { io::save_safetensors(to, {{"w", ones({1})}}); };
  io::save_with_manifest(w, "safetensors", saver, {{"w", ones({1})}});
  EXPECT_FALSE(fs::exists(ours_dead));
  EXPECT_FALSE(fs::exists(foreign_old));
  EXPECT_TRUE(fs::exists(foreign));
  EXPECT_TRUE(fs::exists(legacy));
}

TEST(Security, JsonInputsAreCappedBeforeTheyAreHeld) {
  TempDir d;
  // A JSON state dict larger than the limit is refused from its size, before reading (sparse file).
  const std::string big = d / "big.json";
  {
    std::ofstream(big) << "{";
  }
  fs::resize_file(big, (256ull << 20) + 1);
  EXPECT_NE(error_of([&] { io::load_json(big); }).find("more than the limit"), std::string::npos);
  // A manifest likewise.
  const std::string bigm = d / "w.safetensors.manifest.json";
  {
    std::ofstream(bigm) << "{";
  }
  fs::resize_file(bigm, (64ull << 20) + 1);
  EXPECT_NE(error_of([&] { io::read_manifest(bigm, false); }).find("more than the limit"), std::string::npos);
  // A safetensors header holding a huge array is stopped while parsing (5M values > 4M allowed).
  std::string hdr = "{\"__metadata__\":{},\"x\":{\"dtype\":\"F32\",\"shape\":[";
  for (int i = 0; i < 5'000'000; ++i) hdr += "0,";
  hdr += "0],\"data_offsets\":[0,0]}}";
  std::string file(8, '\0');
  const uint64_t n = hdr.size();
  std::memcpy(file.data(), &n, 8);
  file += hdr;
  const std::string why = error_of([&] { io::load_safetensors_bytes(file); });
  EXPECT_NE(why.find("more than 4000000 values"), std::string::npos) << why;
}

TEST(Security, TraceWritersNeverEraseAnEarlierTraceUnasked) {
  TempDir d;
  const std::string path = d / "t.jsonl";
  io::TraceEvent e;
  e.event = "step";
  {
    io::TraceWriter(path, "Test").write(e);
  }
  EXPECT_THROW(io::TraceWriter(path, "Test"), SpiralError);  // the default refuses an existing file
  {
    io::TraceWriter(path, "Test", io::TraceMode::Append).write(e);
  }
  EXPECT_EQ(io::read_trace(path).size(), 2u);
  {
    io::TraceWriter(path, "Test", io::TraceMode::Overwrite).write(e);
  }
  EXPECT_EQ(io::read_trace(path).size(), 1u);
  EXPECT_THROW(io::trace_mode(true, true), ValueError);
  // A file created between the check and the first write is still not truncated.
  const std::string late = d / "late.jsonl";
  io::TraceWriter w(late, "Test");
  {
    std::ofstream(late) << "precious\n";
  }
  EXPECT_THROW(w.write(e), SpiralError);
  EXPECT_EQ(slurp(late), "precious\n");
}

TEST(Security, MalformedTraceFieldsRaiseCheckpointError) {
  TempDir d;
  for (const std::string line : {R"({"schema": 5, "version": 1, "event": "x"})", R"({"schema": null})",
                                 R"({"schema": "spiraltorch.trace", "version": "1", "event": "x"})", "[1, 2]"}) {
    const std::string path = d / "bad.jsonl";
    {
      std::ofstream(path, std::ios::trunc) << line << "\n";
    }
    EXPECT_NE(error_of([&] { io::read_trace(path); }), "") << line;
  }
}

TEST(Security, StructureDecoderRoundTripsAndRejectsMalformedInput) {
  using K = io::Structure::Kind;
  io::Structure leaf_t{.kind = K::Tensor, .boolean = true, .text = "t0"};
  io::Structure leaf_np{.kind = K::Tensor, .text = "t1", .origin = io::Structure::TensorOrigin::NumpyArray};
  io::Structure f{.kind = K::Float, .number = 0.1};
  io::Structure inf{.kind = K::Float, .number = -INFINITY};
  io::Structure str{.kind = K::String, .text = "caf\xc3\xa9"};
  io::Structure big{.kind = K::Int, .integer = INT64_MIN};
  io::Structure list{.kind = K::List, .items = {leaf_t, f, inf, big}};
  io::Structure tuple{.kind = K::Tuple,
                      .items = {str, io::Structure{}, io::Structure{.kind = K::Bool, .boolean = true}}};
  io::Structure root{.kind = K::Dict};
  root.entries.emplace_back(io::Structure{.kind = K::String, .text = "model"}, list);
  root.entries.emplace_back(io::Structure{.kind = K::Int, .integer = 3}, tuple);
  root.entries.emplace_back(io::Structure{.kind = K::String, .text = "np"}, leaf_np);
  io::Structure raw{.kind = K::Tensor,
                    .text = "t1",
                    .origin = io::Structure::TensorOrigin::NumpyArray,
                    .numpy_dtype = "<u2",
                    .shape = {3}};
  root.entries.emplace_back(io::Structure{.kind = K::String, .text = "raw"}, raw);
  const std::map<std::string, uint64_t> keys = {{"t0", 24}, {"t1", 6}};
  const std::string text = io::encode_structure(root);
  EXPECT_EQ(io::decode_structure(text, keys), root);
  EXPECT_EQ(io::encode_structure(io::decode_structure(text, keys)), text);

  for (const std::string bad : std::vector<std::string>{
           "",
           "[]",
           "{}",
           "5",
           R"({"tensor": "t9"})",
           R"({"tensor": 1})",
           R"({"tensor": "t0", "requires_grad": 1})",
           R"({"tensor": "t0", "numpy": "pickle"})",
           R"({"value": 1.5})",
           R"({"value": [1]})",
           R"({"float": 1.5})",
           R"({"float": "1.5x"})",
           R"({"dict": [[{"str": "a"}]]})",
           R"({"dict": [[{"bytes": "a"}, {"value": 1}]]})",
           R"({"dict": [[{"str": "a"}, {"value": 1}], [{"str": "a"}, {"value": 2}]]})",
           R"({"dict": {}})",
           R"({"list": [{"value": 1}, 7]})",
           R"({"tuple": "abc"})",
           R"({"value": 1, "extra": 2})",
           R"({"module": "os", "call": "system"})",
           R"({"value": 18446744073709551615})",
           R"({"tensor": "t1", "numpy": "array", "dtype": "|O8", "shape": [1]})",
           R"({"tensor": "t1", "numpy": "array", "dtype": "|V6", "shape": [1]})",
           R"({"tensor": "t1", "numpy": "array", "dtype": ">u2", "shape": [3]})",
           R"({"tensor": "t1", "numpy": "array", "dtype": "<u2", "shape": [4]})",
           R"({"tensor": "t1", "numpy": "array", "dtype": "<u2", "shape": [-3]})",
           R"({"tensor": "t1", "numpy": "array", "dtype": "<u2"})",
           R"({"tensor": "t1", "numpy": "scalar", "dtype": "<u2", "shape": [3]})",
           R"({"tensor": "t1", "dtype": "<u2", "shape": [3]})",
           R"({"tensor": "t1", "numpy": "array", "dtype": "<u2", "shape": [4611686018427387904, 4]})",
           std::string(100, '[') + std::string(100, ']')}) {
    EXPECT_NE(error_of([&] { io::decode_structure(bad, keys); }), "") << bad;
  }
  // Anything save writes stays within what load reads back.
  io::Structure deep{.kind = K::List};
  for (int i = 0; i < io::kMaxStructureDepth; ++i)
    deep = io::Structure{.kind = K::Dict, .entries = {{io::Structure{.kind = K::Int}, deep}}};
  EXPECT_EQ(io::decode_structure(io::encode_structure(deep), keys), deep);
  EXPECT_EQ(io::numpy_itemsize("<U3"), 12u);
  EXPECT_EQ(io::numpy_itemsize("|S5"), 5u);
  EXPECT_EQ(io::numpy_itemsize("<c16"), 16u);
  EXPECT_EQ(io::numpy_itemsize("<M8[ns]"), 0u);
  io::Structure deeper{.kind = K::List, .items = {deep}};
  EXPECT_THROW(io::encode_structure(deeper), ValueError);
}

TEST(Security, PngSplitsItsImageDataIntoChunksOfLegalLength) {
  Tensor surface = Tensor::empty({37, 23, 4}, Dtype::UInt8);
  auto* p = surface.data<uint8_t>();
  for (int64_t i = 0; i < surface.numel(); ++i) p[i] = static_cast<uint8_t>(i * 131 % 251);
  const std::string whole = canvas::encode_png(surface);
  const std::string split = canvas::encode_png(surface, 100);
  // Walk the chunks: every IDAT at most 100 bytes, CRCs valid, and the concatenated data equal.
  auto idat_of = [](const std::string& png, size_t max_len) {
    std::string data;
    size_t pos = 8, count = 0;
    while (pos + 12 <= png.size()) {
      const auto* b = reinterpret_cast<const uint8_t*>(png.data() + pos);
      const uint32_t len = (uint32_t{b[0]} << 24) | (b[1] << 16) | (b[2] << 8) | b[3];
      const std::string type = png.substr(pos + 4, 4);
      const auto* c = reinterpret_cast<const uint8_t*>(png.data() + pos + 8 + len);
      const uint32_t crc = (uint32_t{c[0]} << 24) | (c[1] << 16) | (c[2] << 8) | c[3];
      EXPECT_EQ(crc, canvas::crc32(png.data() + pos + 4, len + 4)) << type;
      if (type == "IDAT") {
        EXPECT_LE(len, max_len);
        data += png.substr(pos + 8, len);
        ++count;
      }
      pos += 12 + len;
    }
    EXPECT_EQ(pos, png.size());
    return std::make_pair(data, count);
  };
  const auto [d1, n1] = idat_of(whole, canvas::kPngMaxChunk);
  const auto [d2, n2] = idat_of(split, 100);
  EXPECT_EQ(n1, 1u);
  EXPECT_EQ(n2, (d1.size() + 99) / 100);
  EXPECT_EQ(d1, d2);
#ifdef SPIRALTORCH_TEST_WITH_ZLIB
  std::vector<uint8_t> raw(37 * (23 * 4 + 1));
  uLongf raw_len = raw.size();
  ASSERT_EQ(uncompress(raw.data(), &raw_len, reinterpret_cast<const Bytef*>(d2.data()), d2.size()), Z_OK);
  EXPECT_EQ(raw_len, raw.size());
  EXPECT_EQ(raw[1], p[0]);
#endif
}
