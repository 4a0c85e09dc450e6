// TransformerDecoderLayer / TransformerDecoder / Transformer: the causal target mask keeps earlier
// positions blind to later ones, gradients against finite differences in float64, PyTorch's keys.
#include <gtest/gtest.h>

#include "gradcheck.h"
#include "spiraltorch/nn/transformer.h"
#include "spiraltorch/spiraltorch.h"

using namespace st;

TEST(TransformerDecoder, CausalTargetsIgnoreLaterPositions) {
  manual_seed(7);
  nn::Transformer model(8, 2, 1, 2, 16, 0.0);
  const Tensor src = randn({2, 5, 8}), tgt = randn({2, 4, 8});
  const Tensor y = model.forward_full(src, tgt, {}, {}, {}, {}, {}, {}, false, true);
  ASSERT_EQ(y.shape(), (Shape{2, 4, 8}));
  // Changing the last target position leaves the first three outputs as they were.
  Tensor tgt2 = tgt.clone();
  NoGradGuard ng;
  Tensor last = select(tgt2, 1, 3);
  fill_(last, 3.0);
  const Tensor y2 = model.forward_full(src, tgt2, {}, {}, {}, {}, {}, {}, false, true);
  const auto a = narrow(y, 1, 0, 3).contiguous().to_vector<float>();
  const auto b = narrow(y2, 1, 0, 3).contiguous().to_vector<float>();
  for (size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], b[i], 1e-5);
  // (the last position itself changes; its sum is not a test: the final LayerNorm centres each row)
  EXPECT_GT(max(abs(sub(narrow(y, 1, 3, 1), narrow(y2, 1, 3, 1)))).item(), 1e-3);
  EXPECT_EQ(model.state_dict().begin()->first, "encoder.layers.0.self_attn::in_proj_weight");
}

TEST(TransformerDecoder, LayerGradientsMatchFiniteDifferences) {
  manual_seed(8);
  nn::TransformerDecoderLayer layer(4, 2, 6, 0.0, "gelu", true, true);
  layer.to(Dtype::Float64);
  const Tensor tgt = randn({1, 3, 4}, Dtype::Float64), memory = randn({1, 2, 4}, Dtype::Float64);
  test_util::gradcheck_all([&] { return layer.forward_full(tgt, memory, {}, {}, {}, {}, true); }, {tgt, memory}, 1e-5);
  EXPECT_THROW(layer.forward(tgt), ValueError);
}
