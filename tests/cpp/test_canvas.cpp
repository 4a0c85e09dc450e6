// CanvasProjector: colormap pixels, normalisation, refused renders, the row-wise power spectrum
// against a direct DFT, the loopback patch, metrics, and the PPM/PNG encoders.
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <numbers>
#include <sstream>

#include "spiraltorch/canvas/canvas_projector.h"
#include "spiraltorch/canvas/image_io.h"
#include "spiraltorch/spiraltorch.h"
#include "temp_dir.h"

using namespace st;
using namespace st::canvas;

namespace {

std::vector<uint8_t> pixels(const Tensor& s) {
  std::vector<uint8_t> v(static_cast<size_t>(s.numel()));
  std::memcpy(v.data(), s.contiguous().raw_data(), v.size());
  return v;
}

std::string slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

}  // namespace

TEST(Canvas, HeatAndGrayscalePixels) {
  const Tensor f = Tensor::from_vector<double>({0.0, 0.5, 1.0}, {1, 3});
  CanvasProjector heat(1, 3);
  const Tensor s = heat.render(f);
  EXPECT_EQ(s.shape(), (Shape{1, 3, 4}));
  EXPECT_EQ(s.dtype(), Dtype::UInt8);
  EXPECT_EQ(pixels(s), (std::vector<uint8_t>{0, 0, 0, 255, 255, 128, 0, 255, 255, 255, 255, 255}));
  CanvasProjector gray(1, 3, {Colormap::Grayscale, Normalization::MinMax});
  // Min-max normalisation: the field's scale and offset do not matter.
  const Tensor g = gray.render(Tensor::from_vector<double>({-4.0, -2.0, 0.0}, {1, 3}));
  EXPECT_EQ(pixels(g), (std::vector<uint8_t>{0, 0, 0, 255, 128, 128, 128, 255, 255, 255, 255, 255}));
}

TEST(Canvas, SymmetricDivergingPutsZeroAtWhite) {
  CanvasProjector p(1, 3, {Colormap::Diverging, Normalization::Symmetric});
  const auto px = pixels(p.render(Tensor::from_vector<double>({-2.0, 0.0, 1.0}, {1, 3})));
  EXPECT_EQ(std::vector<uint8_t>(px.begin(), px.begin() + 4), (std::vector<uint8_t>{0, 0, 255, 255}));
  EXPECT_EQ(std::vector<uint8_t>(px.begin() + 4, px.begin() + 8), (std::vector<uint8_t>{255, 255, 255, 255}));
  EXPECT_EQ(std::vector<uint8_t>(px.begin() + 8, px.end()), (std::vector<uint8_t>{255, 128, 128, 255}));
}

TEST(Canvas, NonFiniteIsTransparentAndConstantIsZero) {
  CanvasProjector p(1, 3);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const auto px = pixels(p.render(Tensor::from_vector<double>({nan, 2.0, 2.0}, {1, 3})));
  EXPECT_EQ(px, (std::vector<uint8_t>{0, 0, 0, 0, 0, 0, 0, 255, 0, 0, 0, 255}));
  const auto m = p.metrics();
  EXPECT_EQ(m[5].first, "canvas.finite_fraction");
  EXPECT_NEAR(m[5].second, 2.0 / 3.0, 1e-12);
}

TEST(Canvas, ResamplesByNearestNeighbour) {
  CanvasProjector p(2, 4, {Colormap::Grayscale, Normalization::MinMax});
  p.render(Tensor::from_vector<double>({0.0, 1.0, 2.0, 3.0}, {2, 2}));
  EXPECT_EQ(p.field().to_vector<double>(), (std::vector<double>{0, 0, 1, 1, 2, 2, 3, 3}));
}

TEST(Canvas, RefusedRenderChangesNothing) {
  CanvasProjector p(2, 2);
  EXPECT_THROW(p.surface(), ValueError);
  EXPECT_THROW(p.fft_power_spectrum(), ValueError);
  p.render(Tensor::from_vector<double>({0, 1, 2, 3}, {2, 2}));
  const auto before = pixels(p.surface());
  EXPECT_THROW(p.render(Tensor::from_vector<double>({1, 2, 3}, {3})), ShapeError);
  EXPECT_THROW(p.render(zeros({2, 2}, Dtype::Bool)), DtypeError);
  EXPECT_EQ(pixels(p.surface()), before);
  EXPECT_THROW(CanvasProjector(0, 4), ValueError);
  EXPECT_THROW(colormap_from_name("viridis"), ValueError);
}

TEST(Canvas, PowerSpectrumMatchesDirectDft) {
  for (const int64_t w : {6, 8}) {
    manual_seed(3);
    const Tensor f = rand({3, w}, Dtype::Float64);
    CanvasProjector p(3, w);
    p.render(f);
    const Tensor spec = p.fft_power_spectrum();
    EXPECT_EQ(spec.shape(), (Shape{3, w / 2 + 1}));
    const auto v = f.to_vector<double>();
    const auto got = spec.to_vector<double>();
    for (int64_t y = 0; y < 3; ++y) {
      for (int64_t k = 0; k <= w / 2; ++k) {
        std::complex<double> acc = 0;
        for (int64_t x = 0; x < w; ++x) {
          acc += v[y * w + x] * std::polar(1.0, -2 * std::numbers::pi * static_cast<double>(k * x) / w);
        }
        EXPECT_NEAR(got[y * (w / 2 + 1) + k], std::norm(acc), 1e-9) << "w=" << w << " y=" << y << " k=" << k;
      }
    }
  }
}

TEST(Canvas, LoopbackPatchIsZeroMeanAndPointsAtTheBrightBlock) {
  CanvasProjector p(4, 4);
  std::vector<double> f(16, 0.0);
  f[0] = f[1] = f[4] = f[5] = 1.0;  // the top-left 2x2 block is bright
  p.render(Tensor::from_vector(f, {4, 4}));
  const auto patch = p.loopback_patch(2, 2, 2.0).to_vector<double>();
  EXPECT_NEAR(patch[0], 2.0 * 0.75, 1e-12);
  EXPECT_NEAR(patch[1], -2.0 * 0.25, 1e-12);
  EXPECT_NEAR(patch[0] + patch[1] + patch[2] + patch[3], 0.0, 1e-12);
  EXPECT_THROW(p.loopback_patch(5, 1), ValueError);
}

TEST(Canvas, RadialFieldMetricsAndAtlasFrame) {
  CanvasProjector p(32, 32);
  p.render_radial(3.0, 2.0);
  const Tensor f = p.field();
  const auto v = f.to_vector<double>();
  // Symmetric about the centre, brightest near it.
  EXPECT_NEAR(v[0], v[31], 1e-12);
  EXPECT_NEAR(v[0], v[31 * 32 + 31], 1e-12);
  // Pixel (15, 15): r = |(-0.5, -0.5)| / 16.
  const double r = std::sqrt(0.5) / 16;
  EXPECT_NEAR(v[15 * 32 + 15], std::exp(-2 * r * r) * 0.5 * (1 + std::cos(2 * std::numbers::pi * 3 * r)), 1e-12);
  EXPECT_GT(v[15 * 32 + 15], v[15 * 32 + 20]);
  const auto frame = p.atlas_frame(5.0);
  EXPECT_EQ(frame.timestamp, 5.0);
  ASSERT_EQ(frame.metrics.size(), 9u);
  for (const auto& [name, value] : frame.metrics) EXPECT_TRUE(std::isfinite(value)) << name;
  EXPECT_GT(*frame.metric("canvas.spectral_centroid"), 0.0);
  EXPECT_THROW(p.atlas_frame(-1.0), ValueError);
  // A field constant along each row has all its row power at k = 0.
  CanvasProjector q(3, 5);
  q.render(Tensor::from_vector<double>({1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3}, {3, 5}));
  EXPECT_NEAR(*q.atlas_frame(0).metric("canvas.dc_fraction"), 1.0, 1e-12);
}

TEST(Canvas, TrajectoryFieldPeaksWhereThePointsAre) {
  const Tensor pts = Tensor::from_vector<double>({-0.5, 0.5, 0.0, 0.0, 0.5, -0.5}, {3, 2});
  const auto v = trajectory_field(pts, 9, 9, 1.0).to_vector<double>();
  // The last point (0.5, -0.5) lands at column 6.75, row 6.75 -> pixel (6, 6), weight 1.
  const auto best = std::max_element(v.begin(), v.end()) - v.begin();
  EXPECT_EQ(best, 6 * 9 + 6);
  EXPECT_GT(v[4 * 9 + 4], v[2 * 9 + 2]);  // later points are brighter
  EXPECT_THROW(trajectory_field(Tensor::from_vector<double>({1.0, 2.0}, {2}), 4, 4), ShapeError);
}

TEST(Canvas, ChecksumsMatchKnownValues) {
  EXPECT_EQ(crc32("123456789", 9), 0xCBF43926u);
  EXPECT_EQ(crc32("IEND", 4), 0xAE426082u);
  EXPECT_EQ(adler32("Wikipedia", 9), 0x11E60398u);
}

TEST(Canvas, PpmAndPngBytes) {
  CanvasProjector p(2, 3);
  p.render(Tensor::from_vector<double>({0, 1, 2, 3, 4, 5}, {2, 3}));
  const std::string ppm = encode_ppm(p.surface());
  ASSERT_EQ(ppm.substr(0, 11), "P6\n3 2\n255\n");
  ASSERT_EQ(ppm.size(), 11u + 18u);
  const auto px = pixels(p.surface());
  for (int i = 0; i < 6; ++i) {
    for (int k = 0; k < 3; ++k) EXPECT_EQ(static_cast<uint8_t>(ppm[11 + i * 3 + k]), px[i * 4 + k]);
  }
  const std::string png = encode_png(p.surface());
  ASSERT_EQ(png.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));
  EXPECT_EQ(png.substr(12, 4), "IHDR");
  EXPECT_EQ(png.substr(png.size() - 12), std::string("\0\0\0\0IEND\xae\x42\x60\x82", 12));
  // The IHDR chunk's CRC covers its type and data.
  const uint32_t crc = (uint32_t(uint8_t(png[29])) << 24) | (uint32_t(uint8_t(png[30])) << 16) |
                       (uint32_t(uint8_t(png[31])) << 8) | uint32_t(uint8_t(png[32]));
  EXPECT_EQ(crc, crc32(png.data() + 12, 17));
  EXPECT_THROW(encode_png(zeros({2, 2, 3}, Dtype::UInt8)), ShapeError);
  EXPECT_THROW(encode_ppm(zeros({2, 2, 4})), DtypeError);
}

TEST(Canvas, WritesAreAtomicFiles) {
  st::testing::TempDir dir;
  CanvasProjector p(4, 4);
  p.render_radial();
  p.render_radial();
  write_png(dir / "c.png", p.surface());
  write_ppm(dir / "c.ppm", p.surface());
  EXPECT_EQ(slurp(dir / "c.png"), encode_png(p.surface()));
  EXPECT_EQ(slurp(dir / "c.ppm"), encode_ppm(p.surface()));
  EXPECT_THROW(write_png(dir / "missing/c.png", p.surface()), CheckpointError);
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir.path), {}), 2);  // no temporaries left
}

#if __has_include(<zlib.h>)
#include <zlib.h>
// The stored-block stream (what builds without zlib write) inflates back, across block boundaries.
TEST(Canvas, StoredDeflateStreamInflates) {
  std::string raw(150000, '\0');
  for (size_t i = 0; i < raw.size(); ++i) raw[i] = static_cast<char>(i * 7 % 251);
  for (const size_t n : {size_t{0}, size_t{1}, size_t{65535}, raw.size()}) {
    const std::string z = zlib_stored_stream(raw.substr(0, n));
    std::string back(n + 1, '\0');
    uLongf size = back.size();
    ASSERT_EQ(
        uncompress(reinterpret_cast<Bytef*>(back.data()), &size, reinterpret_cast<const Bytef*>(z.data()), z.size()),
        Z_OK)
        << n;
    EXPECT_EQ(back.substr(0, size), raw.substr(0, n));
  }
}
#endif
