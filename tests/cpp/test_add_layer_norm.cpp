// nn::add_layer_norm: the transformer's residual add + dropout + layer norm, one autograd node (on
// the CPU running the composite's kernels in its order): values and draws equal to
// add(residual, dropout(delta)) then layer_norm, float64 gradients against finite differences,
// the checks' messages, TransformerEncoderLayer (which routes its residual adds through it) equal
// to its layers applied by hand, and the pre-norm TransformerEncoder's chain equal to its layers.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "expect_error.h"
#include "gradcheck.h"
#include "spiraltorch/nn/functional.h"
#include "spiraltorch/nn/transformer.h"
#include "spiraltorch/spiraltorch.h"

using namespace st;
using st::test::expect_error;

namespace {

void expect_equal(const Tensor& got, const Tensor& want) {
  ASSERT_EQ(got.shape(), want.shape());
  const auto a = got.to(Dtype::Float64).to_vector<double>(), b = want.to(Dtype::Float64).to_vector<double>();
  for (size_t i = 0; i < a.size(); ++i) ASSERT_DOUBLE_EQ(a[i], b[i]) << "element " << i;
}

}  // namespace

TEST(AddLayerNorm, EqualsAddDropoutThenLayerNormWithTheSameDraws) {
  manual_seed(3);
  const Tensor x = randn({4, 6, 16}), d = randn({4, 6, 16}), w = randn({16}), b = randn({16});
  manual_seed(42);
  const auto [h, z] = nn::add_layer_norm(x, d, {16}, w, b, 1e-5, 0.25, true);
  manual_seed(42);
  const Tensor h_ref = add(x, nn::dropout(d, 0.25, true));
  const Tensor z_ref = nn::layer_norm(h_ref, {16}, w, b, 1e-5);
  expect_equal(h, h_ref);
  expect_equal(z, z_ref);
  // some elements dropped, the rest scaled by 1 / (1 - p)
  const auto hv = sub(h, x).to_vector<float>(), dv = d.to_vector<float>();
  int dropped = 0;
  for (size_t i = 0; i < hv.size(); ++i) {
    if (hv[i] == 0.0f) {
      ++dropped;
    } else {
      ASSERT_NEAR(hv[i], dv[i] / 0.75f, 1e-5f);
    }
  }
  EXPECT_GT(dropped, 50);
  EXPECT_LT(dropped, 300);
  // not training: no dropout, nothing drawn
  const auto [h_eval, z_eval] = nn::add_layer_norm(x, d, {16}, w, b, 1e-5, 0.25, false);
  expect_equal(h_eval, add(x, d));
}

TEST(AddLayerNorm, Float64GradientsMatchFiniteDifferences) {
  manual_seed(5);
  const Tensor x = randn({3, 5}, Dtype::Float64), d = randn({3, 5}, Dtype::Float64);
  const Tensor w = randn({5}, Dtype::Float64), b = randn({5}, Dtype::Float64);
  const Tensor wz = randn({3, 5}, Dtype::Float64);
  // both outputs used: h's gradient adds to the normalised output's
  st::test_util::gradcheck_all([&] {
    manual_seed(9);  // the same mask at every evaluation
    const auto [h, z] = nn::add_layer_norm(x, d, {5}, w, b, 1e-5, 0.3, true);
    return add(mul(h, wz), z);
  }, {x, d, w, b}, 1e-6);
}

TEST(AddLayerNorm, ChecksNameTheOperationAndTheValues) {
  const Tensor x = randn({2, 8}), d = randn({2, 4});
  expect_error<ShapeError>([&] { nn::add_layer_norm(x, d, {8}); },
                           {"add_layer_norm: residual of shape (2, 8)", "(2, 4)"});
  expect_error<ValueError>([&] { nn::add_layer_norm(x, x, {8}, {}, {}, 1e-5, 1.5); },
                           {"add_layer_norm", "must lie in [0, 1], got 1.5"});
  expect_error<ShapeError>([&] { nn::add_layer_norm(x, x, {8}, randn({4})); },
                           {"add_layer_norm: weight of shape (4,)"});
  expect_error<ShapeError>([&] { nn::add_layer_norm(x, x, {5}); },
                           {"add_layer_norm: input of shape (2, 8)", "normalized_shape (5,)"});
}

TEST(AddLayerNorm, TransformerEncoderLayerEqualsItsLayersByHand) {
  for (const bool norm_first : {true, false}) {
    manual_seed(1);
    const auto layer_ptr = std::make_shared<nn::TransformerEncoderLayer>(16, 2, 32, 0.2, "gelu", true, norm_first);
    nn::TransformerEncoderLayer& layer = *layer_ptr;
    layer.train();
    const Tensor src = randn({2, 5, 16});
    manual_seed(77);
    const Tensor got = layer(src);
    // by hand, in the layer's order of draws
    manual_seed(77);
    auto sub_module = [&](const std::string& name) {
      for (const auto& [n, m] : layer.children()) {
        if (n == name) return m;
      }
      throw ValueError("no child " + name);
    };
    auto call = [&](const std::string& name, const Tensor& t) { return (*sub_module(name))(t); };
    auto attn = [&](const Tensor& t) {
      return std::dynamic_pointer_cast<nn::MultiheadAttention>(sub_module("self_attn"))
          ->forward_full(t, t, t, std::nullopt, std::nullopt, false, false)
          .first;
    };
    auto ff = [&](const Tensor& t) { return call("linear2", call("dropout", gelu(call("linear1", t)))); };
    Tensor x = src;
    if (norm_first) {
      x = add(x, call("dropout1", attn(call("norm1", x))));
      x = add(x, call("dropout2", ff(call("norm2", x))));
    } else {
      x = call("norm1", add(x, call("dropout1", attn(x))));
      x = call("norm2", add(x, call("dropout2", ff(x))));
    }
    const auto a = got.to_vector<float>(), b = x.to_vector<float>();
    ASSERT_EQ(a.size(), b.size());
    for (size_t i = 0; i < a.size(); ++i) ASSERT_NEAR(a[i], b[i], 1e-5f) << "norm_first " << norm_first << " at " << i;
  }
}

TEST(AddLayerNorm, PreNormEncoderStackEqualsItsLayersOneByOne) {
  // The stack chains layer i's last residual add with layer i + 1's norm1 and the last one with its
  // final norm; the result and the draws are those of calling the layers and the norm in turn.
  manual_seed(2);
  const nn::TransformerEncoderLayer layer(16, 2, 32, 0.2, "gelu", true, true);
  nn::TransformerEncoder stack(layer, 3, std::make_shared<nn::LayerNorm>(Shape{16}));
  stack.train();
  const Tensor src = randn({2, 5, 16});
  manual_seed(9);
  const Tensor got = stack.forward_full(src, std::nullopt, true);
  manual_seed(9);
  Tensor x = src;
  for (int64_t i = 0; i < stack.num_layers(); ++i) x = stack.layer(i)->forward_full(x, std::nullopt, true);
  x = (*stack.norm())(x);
  const auto a = got.to_vector<float>(), b = x.to_vector<float>();
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) ASSERT_NEAR(a[i], b[i], 1e-5f) << "at " << i;
}

TEST(AddLayerNorm, EncoderStackCopiesKeepTheLayersDtype) {
  nn::TransformerEncoderLayer layer(8, 2, 16, 0.0);
  layer.to(Dtype::Float64);
  const nn::TransformerEncoder stack(layer, 2);
  for (const auto& [name, p] : stack.named_parameters()) EXPECT_EQ(p.dtype(), Dtype::Float64) << name;
}
