// Module traversal, hooks, state-dict results and einsum from C++ (no Python ownership).
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "spiraltorch/nn/dropout.h"
#include "spiraltorch/nn/linear.h"
#include "spiraltorch/nn/sequential.h"
#include "spiraltorch/nn/transformer.h"
#include "spiraltorch/spiraltorch.h"
#include "spiraltorch/train/module_trainer.h"
#include "spiraltorch/zspace/module_hypergrad.h"

using namespace st;

namespace {

std::shared_ptr<nn::Sequential> small_net() {
  auto seq = std::make_shared<nn::Sequential>();
  seq->add(std::make_shared<nn::Linear>(3, 4));
  auto inner = std::make_shared<nn::Sequential>();
  inner->add(std::make_shared<nn::Linear>(4, 2));
  seq->add(inner);
  return seq;
}

}  // namespace

TEST(Module, NamedModulesOnAStackRootNeedNoSharedPtr) {
  nn::Sequential root;  // owned by nobody's shared_ptr
  root.add(std::make_shared<nn::Linear>(2, 2));
  const auto mods = root.named_modules();
  ASSERT_EQ(mods.size(), 2u);
  EXPECT_EQ(mods[0].first, "");
  EXPECT_EQ(mods[0].second, &root);
  EXPECT_EQ(mods[1].first, "0");
}

TEST(Module, NamedModulesPathsAndSharedChildrenOnce) {
  auto net = small_net();
  std::vector<std::string> paths;
  for (const auto& [p, m] : net->named_modules()) paths.push_back(p);
  EXPECT_EQ(paths, (std::vector<std::string>{"", "0", "1", "1.0"}));
  auto shared = std::make_shared<nn::Linear>(2, 2);
  nn::Sequential twice;
  twice.add(shared);
  twice.add(std::make_shared<nn::Sequential>());
  std::dynamic_pointer_cast<nn::Sequential>(twice.at(1))->add(shared);
  EXPECT_EQ(twice.named_modules().size(), 3u);
}

TEST(Module, ApplyVisitsChildrenFirst) {
  auto net = small_net();
  std::vector<std::string> order;
  net->apply([&](nn::Module& m) { order.push_back(m.type_name()); });
  EXPECT_EQ(order, (std::vector<std::string>{"Linear", "Linear", "Sequential", "Sequential"}));
}

TEST(Module, ForwardHooksRunInsideContainersAndCanBeRemoved) {
  auto net = small_net();
  auto first = net->at(0);
  int calls = 0;
  const int id = first->register_forward_hook([&](nn::Module&, const nn::CallValues&, const nn::CallValues& out) {
    ++calls;
    return std::optional<nn::CallValues>(nn::CallValues{{zeros_like(out.tensors.at(0))}, nullptr});
  });
  const Tensor y = (*net)(ones({2, 3}));
  EXPECT_EQ(calls, 1);
  // The replaced (zero) output leaves only the inner bias.
  const Tensor bias = net->named_parameters().back().second;
  EXPECT_TRUE(allclose(y, expand(reshape(bias.detach(), {1, 2}), {2, 2})));
  first->remove_hook(id);
  (*net)(ones({2, 3}));
  EXPECT_EQ(calls, 1);
}

TEST(Module, FullBackwardHookSeesAndReplacesGradients) {
  nn::Linear lin(3, 2);
  Tensor seen_out;
  lin.register_full_backward_hook([&](nn::Module&, const std::vector<Tensor>& gin, const std::vector<Tensor>& gout) {
    seen_out = gout.at(0);
    return std::optional<std::vector<Tensor>>({mul(gin.at(0), scalar_tensor(2.0, gin[0].dtype()))});
  });
  Tensor x = ones({4, 3});
  x.set_requires_grad(true);
  sum(lin(x)).backward();
  ASSERT_TRUE(seen_out.defined());
  EXPECT_TRUE(allclose(seen_out, ones({4, 2})));
  // d sum(xW^T+b)/dx = column sums of W, doubled by the hook.
  const Tensor expected =
      expand(reshape(mul(sum(lin.weight().detach(), {0}), scalar_tensor(2.0, Dtype::Float32)), {1, 3}), {4, 3});
  EXPECT_TRUE(allclose(x.grad(), expected, 1e-5, 1e-6));
}

TEST(Module, BackwardHookOutlivingItsModuleIsSkipped) {
  Tensor x = ones({1, 2});
  x.set_requires_grad(true);
  Tensor y;
  bool called = false;
  {
    nn::Linear lin(2, 2);
    lin.register_full_backward_hook([&](nn::Module&, const std::vector<Tensor>&, const std::vector<Tensor>&) {
      called = true;
      return std::optional<std::vector<Tensor>>();
    });
    y = sum(lin(x));
  }
  y.backward();  // the module is gone: its hook must not run
  EXPECT_FALSE(called);
  EXPECT_TRUE(x.grad().defined());
}

namespace {

// out = (x * y, x + z): a call with three tensor arguments and two results.
nn::CallValues mix(const nn::CallValues& in) {
  const auto& t = in.tensors;
  return nn::CallValues{{mul(t.at(0), t.at(1)), add(t.at(0), t.at(2))}, nullptr};
}

Tensor leaf(std::vector<double> values) {
  Tensor t = Tensor::from_vector<double>(values, {static_cast<int64_t>(values.size())});
  t.set_requires_grad(true);
  return t;
}

double at(const Tensor& t, int64_t i) { return t.contiguous().data<double>()[i]; }

}  // namespace

TEST(Module, HookedCallWithSeveralTensorsReplacesArgumentsAndResults) {
  nn::Module m;
  const Tensor x = Tensor::from_vector<double>({1, 2}, {2}), y = Tensor::from_vector<double>({3, 4}, {2});
  const Tensor z = Tensor::from_vector<double>({5, 6}, {2});
  std::vector<size_t> seen_counts;
  m.register_forward_pre_hook([&](nn::Module&, const nn::CallValues& args) {
    seen_counts.push_back(args.tensors.size());
    nn::CallValues next = args;
    next.tensors[0] = mul(args.tensors[0], 10.0);  // x -> 10 x
    return std::optional<nn::CallValues>(next);
  });
  m.register_forward_hook([&](nn::Module&, const nn::CallValues& args, const nn::CallValues& out) {
    seen_counts.push_back(args.tensors.size());
    seen_counts.push_back(out.tensors.size());
    nn::CallValues next = out;
    next.tensors.push_back(args.tensors[2]);  // a third result
    return std::optional<nn::CallValues>(next);
  });
  const nn::CallValues out = m.call_hooked(nn::CallValues{{x, y, z}, nullptr}, mix);
  EXPECT_EQ(seen_counts, (std::vector<size_t>{3, 3, 2}));
  ASSERT_EQ(out.tensors.size(), 3u);
  EXPECT_DOUBLE_EQ(at(out.tensors[0], 1), 80.0);  // 10 * 2 * 4
  EXPECT_DOUBLE_EQ(at(out.tensors[1], 0), 15.0);  // 10 * 1 + 5
  EXPECT_TRUE(out.tensors[2].same(z));
  // The single-tensor call refuses hooks that leave several tensors, naming the module.
  nn::Linear lin(2, 2);
  lin.register_forward_pre_hook([](nn::Module&, const nn::CallValues& args) {
    return std::optional<nn::CallValues>(nn::CallValues{{args.tensors[0], args.tensors[0]}, nullptr});
  });
  try {
    lin(ones({1, 2}));
    FAIL() << "expected ValueError";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("Linear: forward takes 1 tensor, but the forward pre-hooks gave 2"),
              std::string::npos);
  }
}

TEST(Module, BackwardHookOnSeveralTensorsSeesOneGradientPerInputAndReplacesThem) {
  nn::Module m;
  Tensor x = leaf({1, 2}), y = leaf({3, 4});
  const Tensor z = Tensor::from_vector<double>({5, 6}, {2});  // needs no gradient
  int calls = 0;
  std::vector<Tensor> gin, gout;
  m.register_full_backward_hook([&](nn::Module&, const std::vector<Tensor>& gi, const std::vector<Tensor>& go) {
    ++calls;
    gin = gi;
    gout = go;
    return std::optional<std::vector<Tensor>>({mul(gi[0], 10.0), gi[1], Tensor()});
  });
  const nn::CallValues out = m.call_hooked(nn::CallValues{{x, y, z}, nullptr}, mix);
  sum(add(mul(out.tensors[0], 2.0), out.tensors[1])).backward();
  EXPECT_EQ(calls, 1);  // once per backward, with every gradient
  ASSERT_EQ(gin.size(), 3u);
  ASSERT_EQ(gout.size(), 2u);
  ASSERT_TRUE(gin[0].defined() && gin[1].defined());
  EXPECT_FALSE(gin[2].defined());
  EXPECT_DOUBLE_EQ(at(gin[0], 1), 2 * 4.0 + 1);  // d/dx (2xy + x + z) = 2y + 1
  EXPECT_DOUBLE_EQ(at(gin[1], 0), 2 * 1.0);
  EXPECT_DOUBLE_EQ(at(gout[0], 0), 2.0);
  EXPECT_DOUBLE_EQ(at(gout[1], 0), 1.0);
  EXPECT_DOUBLE_EQ(at(x.grad(), 1), 90.0);  // replaced: 10 * 9
  EXPECT_DOUBLE_EQ(at(y.grad(), 0), 2.0);
}

TEST(Module, BackwardHookRunsFromTheOutputsWhenNoInputNeedsAGradient) {
  nn::Linear lin(2, 2);
  std::vector<Tensor> gin, gout;
  lin.register_full_backward_hook([&](nn::Module&, const std::vector<Tensor>& gi, const std::vector<Tensor>& go) {
    gin = gi;
    gout = go;
    return std::optional<std::vector<Tensor>>();
  });
  sum(lin(ones({3, 2}))).backward();
  ASSERT_EQ(gin.size(), 1u);
  EXPECT_FALSE(gin[0].defined());
  ASSERT_EQ(gout.size(), 1u);
  EXPECT_EQ(gout[0].shape(), (Shape{3, 2}));
}

TEST(Module, BackwardHookReturningTheWrongCountNamesTheModule) {
  nn::Linear lin(2, 2);
  lin.register_full_backward_hook([](nn::Module&, const std::vector<Tensor>& gi, const std::vector<Tensor>&) {
    return std::optional<std::vector<Tensor>>({gi[0], gi[0]});
  });
  Tensor x = ones({1, 2});
  x.set_requires_grad(true);
  try {
    sum(lin(x)).backward();
    FAIL() << "expected ValueError";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("Linear: a full backward hook returned 2 gradients for 1 inputs"),
              std::string::npos);
  }
}

TEST(Module, TransformerEncoderRunsItsLayersHooks) {
  nn::TransformerEncoderLayer layer(4, 2, 8, 0.0);
  nn::TransformerEncoder enc(layer, 2);
  int pre = 0;
  Tensor seen;
  enc.layer(1)->register_forward_pre_hook([&](nn::Module&, const nn::CallValues&) {
    ++pre;
    return std::optional<nn::CallValues>();
  });
  enc.layer(0)->register_forward_hook([&](nn::Module&, const nn::CallValues&, const nn::CallValues& out) {
    seen = out.tensors.at(0);
    return std::optional<nn::CallValues>(nn::CallValues{{mul(seen, 2.0)}, nullptr});
  });
  Tensor x = randn({3, 1, 4});
  x.set_requires_grad(true);
  int backward = 0;
  enc.layer(0)->register_full_backward_hook(
      [&](nn::Module&, const std::vector<Tensor>& gi, const std::vector<Tensor>&) {
    ++backward;
    EXPECT_EQ(gi.size(), 1u);
    return std::optional<std::vector<Tensor>>();
  });
  sum(enc.forward_full(x, std::nullopt, false, std::nullopt)).backward();
  EXPECT_EQ(pre, 1);
  EXPECT_EQ(seen.shape(), (Shape{3, 1, 4}));
  EXPECT_EQ(backward, 1);
}

TEST(Module, LoadStateDictReportsMissingAndUnexpected) {
  nn::Linear lin(2, 2, true, "head");
  nn::StateDict partial{{"head::weight", zeros({2, 2})}, {"other::x", zeros({1})}};
  const nn::LoadResult r = lin.load_state_dict(partial, false);
  EXPECT_EQ(r.missing_keys, std::vector<std::string>{"head::bias"});
  EXPECT_EQ(r.unexpected_keys, std::vector<std::string>{"other::x"});
  EXPECT_THROW(lin.load_state_dict(partial, true), CheckpointError);
}

TEST(Module, ZeroGradInPlaceAndRequiresGrad) {
  nn::Linear lin(2, 2);
  sum(lin(ones({1, 2}))).backward();
  lin.zero_grad(false);
  EXPECT_EQ(sum(abs(lin.weight().grad())).item(), 0.0);
  lin.zero_grad();
  EXPECT_FALSE(lin.weight().grad().defined());
  lin.requires_grad_(false);
  EXPECT_FALSE(lin.weight().requires_grad());
  EXPECT_EQ(lin.parameters(false).size(), 2u);
}

TEST(Module, SeededDropoutRepeatsItsMask) {
  nn::Dropout a(0.5, "", 11), b(0.5, "", 11);
  const Tensor x = ones({8, 8});
  EXPECT_TRUE(allclose(a(x), b(x)));
  EXPECT_EQ(a.seed(), std::optional<uint64_t>(11));
}

TEST(Module, MulLearningRateScalesEachModuleOnce) {
  auto net = small_net();
  zspace::attach_hypergrad(*net, -1.0, 0.05);
  train::ModuleTrainer trainer("cpu", -1.0, 0.05, 0.1);
  trainer.mul_learning_rate(*net, 0.5);
  for (const auto& [path, m] : net->named_modules()) {
    const std::optional<zspace::HypergradSettings> h = zspace::hypergrad_of(*m);
    ASSERT_TRUE(h);
    EXPECT_DOUBLE_EQ(h->learning_rate, 0.025) << path;
  }
}

TEST(Einsum, MatchesMatmulTraceAndOuterProduct) {
  manual_seed(3);
  const Tensor a = randn({3, 4}, Dtype::Float64), b = randn({4, 5}, Dtype::Float64);
  EXPECT_TRUE(allclose(einsum("ij,jk->ik", {a, b}), matmul(a, b), 1e-12, 1e-12));
  const Tensor sq = randn({4, 4}, Dtype::Float64);
  double trace = 0;
  for (int64_t i = 0; i < 4; ++i) trace += sq.to_vector<double>()[i * 5];
  EXPECT_NEAR(einsum("ii", {sq}).item(), trace, 1e-12);
  const Tensor u = randn({3}, Dtype::Float64), v = randn({2}, Dtype::Float64);
  EXPECT_TRUE(allclose(einsum("i,j->ij", {u, v}), mul(unsqueeze(u, 1), unsqueeze(v, 0)), 1e-12, 1e-12));
  EXPECT_THROW(einsum("ij,jk->ik", {a, a}), ShapeError);
  EXPECT_THROW(einsum("ij->ik", {a}), ValueError);
}

TEST(Module, NonPersistentBuffersMoveButStayOutOfTheStateDict) {
  nn::Linear lin(3, 2);
  lin.register_buffer("kept", ones({2}));
  lin.register_buffer("scratch", zeros({4}), /*persistent=*/false);
  EXPECT_EQ(lin.named_buffers().size(), 2u);
  EXPECT_FALSE(lin.is_persistent_buffer("scratch"));
  nn::StateDict sd = lin.state_dict();
  std::vector<std::string> keys;
  for (const auto& [k, t] : sd) keys.push_back(k);
  EXPECT_EQ(keys, (std::vector<std::string>{"weight", "bias", "kept"}));
  // A strict load needs no entry for it, and an entry for it is unexpected.
  EXPECT_TRUE(lin.load_state_dict(sd, true).missing_keys.empty());
  sd.emplace_back("scratch", zeros({4}));
  EXPECT_THROW(lin.load_state_dict(sd, true), CheckpointError);
  lin.to(Dtype::Float64);
  EXPECT_EQ(lin.find_buffer("scratch")->dtype(), Dtype::Float64);
  // Registering it again as persistent puts it back.
  lin.register_buffer("scratch", zeros({4}));
  EXPECT_EQ(lin.state_dict().size(), 4u);
}

TEST(Module, TransformerEncoderStacksIndependentCopies) {
  manual_seed(3);
  nn::TransformerEncoderLayer layer(8, 2, 16, 0.0);
  auto norm = std::make_shared<nn::LayerNorm>(Shape{8});
  nn::TransformerEncoder enc(layer, 3, norm);
  ASSERT_EQ(enc.num_layers(), 3);
  EXPECT_EQ(enc.state_dict().size(), 3 * layer.state_dict().size() + 2);
  EXPECT_EQ(enc.state_dict().front().first, "layers.0.self_attn::in_proj_weight");
  // Copies start equal to the layer but own their values.
  const Tensor w0 = enc.layer(0)->linear1()->weight(), w1 = enc.layer(1)->linear1()->weight();
  EXPECT_NE(w0.impl(), w1.impl());
  EXPECT_TRUE(allclose(w0, layer.linear1()->weight(), 0, 0));
  {
    NoGradGuard ng;
    Tensor w = w0;
    mul_(w, 2.0);
  }
  EXPECT_TRUE(allclose(w1, layer.linear1()->weight(), 0, 0));
  const Tensor x = randn({2, 5, 8});
  Tensor y = x;
  for (int64_t i = 0; i < 3; ++i) y = enc.layer(i)->forward_full(y, std::nullopt, true);
  EXPECT_TRUE(allclose(enc.forward_full(x, std::nullopt, true), (*norm)(y), 1e-6, 1e-6));
  EXPECT_THROW(nn::TransformerEncoder(layer, 0), ValueError);
  EXPECT_THROW(enc.layer(3), IndexError);
}
