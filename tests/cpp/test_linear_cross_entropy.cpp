// linear_cross_entropy against its composite, cross_entropy(linear(...)): loss and the gradients
// of input, weight and bias in float64 over uneven chunks, ignored rows, both reductions,
// finite differences, CPU autocast (float32 master gradients), and its errors.
#include <gtest/gtest.h>

#include <vector>

#include "expect_error.h"
#include "gradcheck.h"
#include "spiraltorch/autocast.h"
#include "spiraltorch/nn/linear.h"
#include "spiraltorch/nn/loss.h"
#include "spiraltorch/spiraltorch.h"

using namespace st;

namespace {

struct Case {
  Tensor x, w, b, t;
};

Case make_case(int64_t rows, int64_t features, int64_t classes, Dtype dt) {
  Case c{randn({rows, features}, dt), randn({classes, features}, dt), randn({classes}, dt),
         randint(0, classes, {rows})};
  c.t.data<int64_t>()[1] = -100;  // one ignored row
  return c;
}

double max_diff(const Tensor& a, const Tensor& b) {
  return max(abs(sub(a.to(Dtype::Float64), b.to(Dtype::Float64)))).item();
}

}  // namespace

TEST(LinearCrossEntropy, EqualsTheCompositeOverUnevenChunks) {
  for (const nn::Reduction red : {nn::Reduction::Mean, nn::Reduction::Sum}) {
    for (const int64_t chunk : {0, 3, 4, 100}) {
      manual_seed(4);
      Case c = make_case(10, 6, 7, Dtype::Float64);
      std::vector<Tensor> mine{c.x.clone(), c.w.clone(), c.b.clone()}, ref{c.x.clone(), c.w.clone(), c.b.clone()};
      for (Tensor& v : mine) v.set_requires_grad(true);
      for (Tensor& v : ref) v.set_requires_grad(true);
      const Tensor got = nn::linear_cross_entropy(mine[0], mine[1], mine[2], c.t, -100, red, chunk);
      const Tensor want = nn::cross_entropy(nn::linear(ref[0], ref[1], ref[2]), c.t, {}, -100, red);
      EXPECT_LT(max_diff(got, want), 1e-12) << "chunk " << chunk;
      mul(got, 1.7).backward();
      mul(want, 1.7).backward();
      for (size_t i = 0; i < 3; ++i) EXPECT_LT(max_diff(mine[i].grad(), ref[i].grad()), 1e-12) << "input " << i;
    }
  }
}

TEST(LinearCrossEntropy, GradientsMatchFiniteDifferences) {
  manual_seed(5);
  const Case c = make_case(5, 3, 4, Dtype::Float64);
  Tensor x = c.x, w = c.w, b = c.b;
  test_util::gradcheck_all([&] { return nn::linear_cross_entropy(x, w, b, c.t, -100, nn::Reduction::Mean, 2); },
                           {x, w, b});
}

TEST(LinearCrossEntropy, LeadingDimsWithoutBiasAndOnlyTheWeightLearning) {
  manual_seed(6);
  const Tensor x = randn({2, 3, 8}, Dtype::Float64), t = randint(0, 5, {2, 3});
  Tensor w = randn({5, 8}, Dtype::Float64), w2 = w.clone();
  w.set_requires_grad(true);
  w2.set_requires_grad(true);
  const Tensor got = nn::linear_cross_entropy(x, w, {}, t, -100, nn::Reduction::Mean, 4);
  const Tensor want = nn::cross_entropy(reshape(matmul(x, st::t(w2)), {6, 5}), reshape(t, {6}));
  EXPECT_LT(max_diff(got, want), 1e-12);
  got.backward();
  want.backward();
  EXPECT_LT(max_diff(w.grad(), w2.grad()), 1e-12);
}

// CPU autocast: products in bfloat16, the loss in float32, float32 gradients for the float32
// weight and bias; equal to the composite under the same region up to float32 summation order.
TEST(LinearCrossEntropy, CpuAutocastGivesFloat32MasterGradients) {
  manual_seed(7);
  Case c = make_case(9, 16, 12, Dtype::Float32);
  std::vector<Tensor> mine{c.x.clone(), c.w.clone(), c.b.clone()}, ref{c.x.clone(), c.w.clone(), c.b.clone()};
  for (Tensor& v : mine) v.set_requires_grad(true);
  for (Tensor& v : ref) v.set_requires_grad(true);
  Tensor got, want;
  {
    autocast::Region region(DeviceType::CPU, Dtype::BFloat16);
    got = nn::linear_cross_entropy(mine[0], mine[1], mine[2], c.t, -100, nn::Reduction::Mean, 4);
    want = nn::cross_entropy(nn::linear(ref[0], ref[1], ref[2]), c.t);
  }
  EXPECT_EQ(got.dtype(), Dtype::Float32);
  EXPECT_LT(max_diff(got, want), 1e-5);
  got.backward();
  want.backward();
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(mine[i].grad().dtype(), Dtype::Float32);
    // the composite rounds its weight gradient to bfloat16 before widening it: within that rounding
    const double scale = max(abs(ref[i].grad())).item();
    EXPECT_LT(max_diff(mine[i].grad(), ref[i].grad()) / scale, 1e-2) << "input " << i;
  }
}

TEST(LinearCrossEntropy, ErrorsNameTheOperationAndValues) {
  const Tensor x = randn({4, 3}), w = randn({5, 3}), t = randint(0, 5, {4});
  using test::expect_error;
  expect_error<ValueError>([&] { nn::linear_cross_entropy(x, w, {}, t, -100, nn::Reduction::None); },
                           {"linear_cross_entropy", "'none'"});
  expect_error<ShapeError>([&] { nn::linear_cross_entropy(randn({4, 2}), w, {}, t); },
                           {"linear_cross_entropy", "(4, 2)", "(5, 3)"});
  expect_error<ShapeError>([&] { nn::linear_cross_entropy(x, w, randn({4}), t); }, {"linear_cross_entropy", "(5,)"});
  expect_error<ShapeError>([&] { nn::linear_cross_entropy(x, w, {}, randint(0, 5, {3})); },
                           {"linear_cross_entropy", "(3,)", "(4,)"});
  expect_error<DtypeError>([&] { nn::linear_cross_entropy(x, w, {}, randn({4})); },
                           {"linear_cross_entropy", "float32"});
  const Tensor bad = Tensor::from_vector<int64_t>({0, 1, 7, 2}, {4});
  expect_error<IndexError>([&] { nn::linear_cross_entropy(x, w, {}, bad); },
                           {"linear_cross_entropy", "7", "5 classes"});
  expect_error<ValueError>([&] { nn::linear_cross_entropy(x, w, {}, t, -100, nn::Reduction::Mean, -1); },
                           {"chunk_rows", "-1"});
  // create_graph: refused in the backward, with the way out named
  Tensor wg = w.clone();
  wg.set_requires_grad(true);
  const Tensor loss = nn::linear_cross_entropy(x, wg, {}, t);
  expect_error<ValueError>([&] { st::grad({loss}, {wg}, {}, true, true); }, {"linear_cross_entropy", "create_graph"});
}
