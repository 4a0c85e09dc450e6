// max_pool2d's 2x2 / stride-2 CPU path against a plain reference of PyTorch's rule (the first maximum in
// row-major window order; a NaN wins, the last one when there are several): values and indices, with
// NaN, -inf and ties, odd sizes (floor and ceil mode) and both float dtypes.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "spiraltorch/nn/conv.h"
#include "spiraltorch/spiraltorch.h"

using namespace st;

namespace {

template <typename T>
void check(int64_t n, int64_t c, int64_t h, int64_t w, bool ceil_mode) {
  manual_seed(3);
  const Dtype dt = std::is_same_v<T, float> ? Dtype::Float32 : Dtype::Float64;
  std::vector<T> x = randn({n, c, h, w}, dt).to_vector<T>();
  for (size_t i = 0; i < x.size(); i += 13) x[i] = std::numeric_limits<T>::quiet_NaN();
  for (size_t i = 4; i < x.size(); i += 17) x[i] = -std::numeric_limits<T>::infinity();
  for (size_t i = 0; i + 1 < x.size(); i += 7) x[i + 1] = x[i];  // ties (and NaN pairs)
  const int64_t planes = n * c, plane = h * w;
  std::fill(x.begin() + plane, x.begin() + 2 * plane, -std::numeric_limits<T>::infinity());  // all -inf
  const auto [out, idx] = nn::max_pool2d_with_indices(Tensor::from_vector(x, {n, c, h, w}), {2, 2}, std::nullopt,
                                                      {0, 0}, {1, 1}, ceil_mode);
  const int64_t oh_n = ceil_mode ? (h + 1) / 2 : h / 2, ow_n = ceil_mode ? (w + 1) / 2 : w / 2;
  ASSERT_EQ(out.shape(), (Shape{n, c, oh_n, ow_n}));
  const std::vector<T> got = out.template to_vector<T>();
  const std::vector<int64_t> got_idx = idx.template to_vector<int64_t>();
  for (int64_t p = 0; p < planes; ++p) {
    for (int64_t oh = 0; oh < oh_n; ++oh) {
      for (int64_t ow = 0; ow < ow_n; ++ow) {
        T m = -std::numeric_limits<T>::infinity();
        int64_t best = 2 * oh * w + 2 * ow;
        for (int64_t i = 2 * oh; i < std::min(2 * oh + 2, h); ++i) {
          for (int64_t j = 2 * ow; j < std::min(2 * ow + 2, w); ++j) {
            const T v = x[p * plane + i * w + j];
            if (v > m || std::isnan(v)) m = v, best = i * w + j;
          }
        }
        const size_t o = (p * oh_n + oh) * ow_n + ow;
        ASSERT_EQ(got_idx[o], best) << "plane " << p << " at " << oh << ", " << ow;
        if (std::isnan(m)) {
          ASSERT_TRUE(std::isnan(got[o]));
        } else {
          ASSERT_EQ(got[o], m);
        }
      }
    }
  }
}

}  // namespace

TEST(MaxPool2x2, MatchesTheReferenceRule) {
  check<float>(2, 3, 28, 28, false);
  check<float>(1, 4, 14, 14, false);
  check<float>(2, 2, 7, 9, false);    // odd sizes: the last row and column are left out
  check<float>(2, 2, 7, 9, true);     // ceil mode: partial windows (the general loop)
  check<float>(1, 2, 2, 600, false);  // rows wider than one chunk of the fast path
  check<double>(2, 3, 10, 12, false);
}

TEST(MaxPool2x2, GradientGoesToTheChosenElement) {
  const Tensor x = Tensor::from_vector<float>({1, 5, 2, 3, 4, 0, 9, 9, 7, 6, 8, 1, 2, 2, 2, 2}, {1, 1, 4, 4})
                       .set_requires_grad(true);
  const Tensor y = nn::max_pool2d(x, {2, 2});
  EXPECT_EQ(y.to_vector<float>(), (std::vector<float>{5, 9, 7, 8}));
  sum(y).backward();
  EXPECT_EQ(x.grad().to_vector<float>(), (std::vector<float>{0, 1, 0, 0, 0, 0, 1, 0, 1, 0, 1, 0, 0, 0, 0, 0}));
}
