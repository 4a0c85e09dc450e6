// Hostile inputs (issue #19): shapes checked in one place, integer overflow in division,
// long graphs released without recursion, FIFOs refused, save pairs consistent under kill.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <climits>
#include <filesystem>
#include <fstream>

#include "spiraltorch/autograd.h"
#include "spiraltorch/io/checkpoint.h"
#include "spiraltorch/spiraltorch.h"
#include "temp_dir.h"

namespace fs = std::filesystem;
using namespace st;

namespace {

using st::testing::TempDir;

}  // namespace

TEST(Reliability, ShapesAreCheckedInOnePlace) {
  EXPECT_THROW(Tensor::empty({int64_t{1} << 62}), ShapeError);  // bytes overflow
  EXPECT_THROW(Tensor::empty({int64_t{1} << 32, int64_t{1} << 32}), ShapeError);
  EXPECT_THROW(Tensor::empty({-2}), ShapeError);
  EXPECT_THROW(Tensor::empty(Shape(kMaxDims + 1, 1)), ShapeError);
  EXPECT_EQ(Tensor::empty(Shape(kMaxDims, 1)).dim(), kMaxDims);
  EXPECT_THROW(expand(ones({1}), {-2}), ShapeError);
  EXPECT_THROW(Tensor::from_storage(ones({1}).storage(), {INT64_MAX, 2}, {0, 0}, 0, Dtype::Float32), ShapeError);
  // A view may repeat elements past the byte limit, as long as its element count fits.
  const Tensor big = expand(ones({1, 1}), {int64_t{1} << 31, int64_t{1} << 31});
  EXPECT_EQ(big.numel(), int64_t{1} << 62);
  EXPECT_THROW(big.contiguous(), ShapeError);
}

TEST(Reliability, ZeroElementTensorsWithHugeDimsCostNothing) {
  const Tensor z = zeros({int64_t{1} << 47, 0});
  EXPECT_EQ(z.numel(), 0);
  EXPECT_EQ(add(z, 1.0).numel(), 0);
  EXPECT_EQ(mul(z, z).numel(), 0);
  EXPECT_EQ(sum(z).item(), 0.0);
}

TEST(Reliability, IntegerDivisionOfMinByMinusOneWraps) {
  const Tensor a64 = Tensor::from_vector<int64_t>({INT64_MIN, 7}, {2});
  const Tensor m64 = scalar_tensor(-1, Dtype::Int64);
  EXPECT_EQ(floor_divide(a64, m64).to_vector<int64_t>(), (std::vector<int64_t>{INT64_MIN, -7}));
  EXPECT_EQ(remainder(a64, m64).to_vector<int64_t>(), (std::vector<int64_t>{0, 0}));
  const Tensor a32 = Tensor::from_vector<int32_t>({INT32_MIN, -7}, {2});
  const Tensor m32 = scalar_tensor(-1, Dtype::Int32);
  EXPECT_EQ(floor_divide(a32, m32).to_vector<int32_t>(), (std::vector<int32_t>{INT32_MIN, 7}));
  EXPECT_EQ(remainder(a32, m32).to_vector<int32_t>(), (std::vector<int32_t>{0, 0}));
}

TEST(Reliability, LongGraphIsReleasedIteratively) {
  Tensor x = ones({1});
  x.set_requires_grad(true);
  Tensor total = x;
  for (int i = 0; i < 300000; ++i) total = add(total, x);
  total = Tensor();  // would overflow the stack if nodes were freed recursively
  Tensor y = mul(x, 2.0);
  for (int i = 0; i < 1000; ++i) y = add(y, 0.0);
  y.backward();
  EXPECT_EQ(x.grad().item(), 2.0);
}

TEST(Reliability, FifoIsRefusedWithoutBlocking) {
  TempDir d;
  for (const char* name : {"x.safetensors", "x.json", "x.bin"}) {
    const std::string p = d / name;
    ASSERT_EQ(::mkfifo(p.c_str(), 0600), 0);
    EXPECT_THROW(io::load_safetensors(p), CheckpointError);
    EXPECT_THROW(io::load_json(p), CheckpointError);
    EXPECT_THROW(io::load_bincode(p), CheckpointError);
    EXPECT_THROW(io::sha256_file(p), CheckpointError);
  }
}

TEST(Reliability, ManifestPairSurvivesAKillBetweenRenames) {
  TempDir d;
  const std::string w = d / "m.safetensors";
  auto saver = [](const io::NamedTensors& t) { return [t](const std::string& to) { io::save_safetensors(to, t); }; };
  const io::NamedTensors v1 = {{"w", zeros({3})}}, v2 = {{"w", ones({3})}};
  const std::string mp = io::save_with_manifest(w, "safetensors", saver(v1), v1);
  EXPECT_NO_THROW(io::read_manifest(mp));
  // Stage what a kill after the weights' rename leaves: new weights, old manifest, and the
  // new manifest in a temporary of a process that no longer exists.
  TempDir other;
  const std::string mp2 = io::save_with_manifest(other / "m.safetensors", "safetensors", saver(v2), v2);
  fs::copy_file(other / "m.safetensors", w, fs::copy_options::overwrite_existing);
  const std::string tag = io::temporary_host_tag();
  const std::string dead_tmp = d / (".m.safetensors.manifest.json.tmp-" + tag + "-999999999-0");
  fs::copy_file(mp2, dead_tmp);
  const io::Manifest m = io::read_manifest(mp);
  EXPECT_EQ(m.sha256, io::sha256_file(w));
  // A stale weights temporary is removed by the next save, and the promoted manifest with it.
  {
    std::ofstream(d / (".m.safetensors.tmp-" + tag + "-999999999-3")) << "junk";
  }
  io::save_with_manifest(w, "safetensors", saver(v1), v1);
  for (const auto& e : fs::directory_iterator(d.path)) {
    EXPECT_EQ(e.path().filename().string().find(".tmp-"), std::string::npos) << e.path();
  }
  EXPECT_NO_THROW(io::read_manifest(mp));
}
