// Nodes with several outputs (record_multi) and custom functions (st::autograd::Function).
#include <gtest/gtest.h>

#include <cmath>
#include <span>

#include "gradcheck.h"
#include "spiraltorch/autograd.h"
#include "spiraltorch/activation_checkpoint.h"
#include "spiraltorch/autograd_function.h"
#include "spiraltorch/linalg.h"
#include "spiraltorch/spiraltorch.h"

using namespace st;
using st::autograd::FunctionCtx;

namespace {

Tensor vec(std::vector<double> v) {
  const auto n = static_cast<int64_t>(v.size());
  return Tensor::from_vector(v, {n});
}

void expect_values(const Tensor& t, const std::vector<double>& want, double tol = 1e-12) {
  ASSERT_TRUE(t.defined());
  const auto got = t.to(Dtype::Float64).to_vector<double>();
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i], want[i], tol) << "element " << i;
}

// (sin x, cos x): two outputs, one node; the backward is written with differentiable ops.
struct SinCos : autograd::Function<SinCos> {
  static constexpr const char* name = "SinCosBackward";
  static inline int backward_calls = 0;
  static std::vector<Tensor> forward(FunctionCtx& ctx, const std::vector<Tensor>& in) {
    ctx.save_for_backward({in[0]});
    return {sin(in[0]), cos(in[0])};
  }
  static std::vector<Tensor> backward(FunctionCtx& ctx, const std::vector<Tensor>& g) {
    ++backward_calls;
    const Tensor x = ctx.saved_tensors()[0];
    return {sub(mul(g[0], cos(x)), mul(g[1], sin(x)))};
  }
};

}  // namespace

TEST(MultiOutputNode, RunsOnceWithEveryOutputGradient) {
  Tensor x = vec({1.0, 2.0}).set_requires_grad(true);
  Tensor a = x.detach(), b = x.detach();
  int calls = 0;
  std::vector<Tensor> seen;
  record_multi({a, b}, "PairBackward", {x}, [&](std::span<const Tensor> g) -> std::vector<Tensor> {
    ++calls;
    seen.assign(g.begin(), g.end());
    Tensor r;
    for (const Tensor& gi : g) {
      if (gi.defined()) r = r.defined() ? add(r, gi) : gi;
    }
    return {r};
  });
  EXPECT_EQ(a.grad_fn(), b.grad_fn());
  EXPECT_EQ(a.output_nr(), 0u);
  EXPECT_EQ(b.output_nr(), 1u);
  // a reaches the loss through a chain of three ops, b directly: the node still waits for both.
  const Tensor loss = add(sum(mul(mul(mul(a, 2.0), 1.0), 1.0)), sum(mul(b, 3.0)));
  loss.backward();
  EXPECT_EQ(calls, 1);
  ASSERT_EQ(seen.size(), 2u);
  expect_values(seen[0], {2.0, 2.0});
  expect_values(seen[1], {3.0, 3.0});
  expect_values(x.grad(), {5.0, 5.0});
}

TEST(MultiOutputNode, UnusedOutputGetsAnUndefinedGradient) {
  Tensor x = vec({1.0, 2.0}).set_requires_grad(true);
  Tensor a = x.detach(), b = x.detach();
  bool second_defined = true;
  record_multi({a, b}, "PairBackward", {x}, [&](std::span<const Tensor> g) -> std::vector<Tensor> {
    second_defined = g[1].defined();
    return {g[0]};
  });
  sum(a).backward();
  EXPECT_FALSE(second_defined);
  expect_values(x.grad(), {1.0, 1.0});
}

TEST(MultiOutputNode, HooksRetainGradAndGradPerOutput) {
  Tensor x = vec({1.0, 2.0}).set_requires_grad(true);
  Tensor a = x.detach(), b = x.detach();
  record_multi({a, b}, "PairBackward", {x}, [](std::span<const Tensor> g) -> std::vector<Tensor> {
    return {add(g[0].defined() ? g[0] : zeros_like(g[1]), g[1].defined() ? g[1] : zeros_like(g[0]))};
  });
  b.retain_grad();
  int hook_a = 0, hook_b = 0;
  register_hook(a, [&](const Tensor& g) {
    ++hook_a;
    return mul(g, 10.0);  // replaces output 0's gradient only
  });
  register_hook(b, [&](const Tensor&) {
    ++hook_b;
    return Tensor();
  });
  add(sum(mul(a, 1.0)), sum(mul(b, 2.0))).backward(Tensor(), /*retain_graph=*/true);
  EXPECT_EQ(hook_a, 1);
  EXPECT_EQ(hook_b, 1);
  expect_values(b.grad(), {2.0, 2.0});
  EXPECT_FALSE(a.grad().defined());
  expect_values(x.grad(), {12.0, 12.0});
  // autograd::grad captures each output's own gradient (after its hooks).
  const std::vector<Tensor> gs = grad({add(sum(mul(a, 1.0)), sum(mul(b, 2.0)))}, {b, a, x});
  expect_values(gs[0], {2.0, 2.0});
  expect_values(gs[1], {10.0, 10.0});
  expect_values(gs[2], {12.0, 12.0});
}

TEST(MultiOutputNode, SavedTensorVersionAndSecondPassChecked) {
  Tensor x = vec({1.0, 2.0}).set_requires_grad(true);
  Tensor s = vec({3.0, 4.0});
  Tensor a = x.detach(), b = x.detach();
  record_multi({a, b}, "PairBackward", {x},
               [s](std::span<const Tensor> g) -> std::vector<Tensor> { return {mul(g[0], s)}; }, {s});
  const Tensor loss = add(sum(a), sum(b));
  {
    NoGradGuard ng;
    add_(s, 1.0);
  }
  EXPECT_THROW(loss.backward(), SpiralError);
}

TEST(MultiOutputNode, LongChainOfMultiOutputNodesIsFreedWithoutRecursion) {
  Tensor x = vec({1.0}).set_requires_grad(true);
  Tensor h = x;
  for (int i = 0; i < 100000; ++i) {
    Tensor a = h.detach(), b = h.detach();
    record_multi({a, b}, "PairBackward", {h}, [](std::span<const Tensor> g) -> std::vector<Tensor> { return {g[0]}; });
    h = a;
  }
  h = Tensor();  // the whole chain is released here
  SUCCEED();
}

TEST(AutogradFunction, TwoOutputsUsedSeparatelyAndJointly) {
  manual_seed(3);
  const Tensor x0 = randn({5}, Dtype::Float64);
  SinCos::backward_calls = 0;
  // separately
  test_util::gradcheck([](const Tensor& x) { return SinCos::apply({x})[0]; }, x0);
  test_util::gradcheck([](const Tensor& x) { return SinCos::apply({x})[1]; }, x0);
  // jointly, and one output used twice
  test_util::gradcheck([](const Tensor& x) {
    const auto sc = SinCos::apply({x});
    return add(mul(sc[0], sc[1]), mul(sc[1], 3.0));
  }, x0);
  EXPECT_EQ(SinCos::backward_calls, 3);  // one backward per pass, whatever the outputs used
  const auto sc = SinCos::apply({x0});
  EXPECT_FALSE(sc[0].requires_grad());  // nothing required grad: nothing recorded
  Tensor x = x0.clone().set_requires_grad(true);
  const auto r = SinCos::apply({x});
  EXPECT_EQ(r[0].grad_fn(), r[1].grad_fn());
  EXPECT_EQ(r[0].grad_fn()->name, "SinCosBackward");
}

TEST(AutogradFunction, DoubleBackwardThroughTheMultiOutputNode) {
  Tensor x = vec({0.3, -1.2, 2.0}).set_requires_grad(true);
  const auto sc = SinCos::apply({x});
  // L = sum(2 sin x + 5 cos x): dL/dx = 2 cos x - 5 sin x, d2L/dx2 = -2 sin x - 5 cos x.
  const Tensor L = add(sum(mul(sc[0], 2.0)), sum(mul(sc[1], 5.0)));
  const Tensor g = grad({L}, {x}, {}, true, true)[0];
  const Tensor gg = grad({sum(g)}, {x})[0];
  const std::vector<double> xs{0.3, -1.2, 2.0};
  std::vector<double> want_g, want_gg;
  for (double v : xs) {
    want_g.push_back(2 * std::cos(v) - 5 * std::sin(v));
    want_gg.push_back(-2 * std::sin(v) - 5 * std::cos(v));
  }
  expect_values(g, want_g);
  expect_values(gg, want_gg);
}

TEST(AutogradFunction, CallablesNonDifferentiableOutputsAndMaterialization) {
  Tensor x = vec({1.0, -2.0, 3.0}).set_requires_grad(true);
  Tensor w = vec({1.0, 1.0, 1.0});
  std::vector<bool> needs;
  std::vector<bool> got_defined;
  auto forward = [&](FunctionCtx& ctx, const std::vector<Tensor>& in) -> std::vector<Tensor> {
    needs = ctx.needs_input_grad();
    const Tensor doubled = mul(in[0], 2.0), mask = gt(in[0], zeros_like(in[0])), half = mul(in[0], 0.5);
    ctx.mark_non_differentiable({half});
    ctx.set_materialize_grads(false);
    return {doubled, mask, half, Tensor()};
  };
  auto backward = [&](FunctionCtx&, const std::vector<Tensor>& g) -> std::vector<Tensor> {
    got_defined.clear();
    for (const Tensor& t : g) got_defined.push_back(t.defined());
    return {mul(g[0], 2.0), vec({9.0, 9.0, 9.0})};  // the second input needs none: dropped
  };
  const auto out = autograd::apply_function("ProbeBackward", {x, w}, forward, backward);
  EXPECT_EQ(needs, (std::vector<bool>{true, false}));
  ASSERT_EQ(out.size(), 4u);
  EXPECT_TRUE(out[0].requires_grad());
  EXPECT_FALSE(out[1].requires_grad());  // bool: not differentiable
  EXPECT_FALSE(out[2].requires_grad());  // marked
  EXPECT_FALSE(out[3].defined());
  sum(out[0]).backward();
  EXPECT_EQ(got_defined, (std::vector<bool>{true, false, false, false}));
  expect_values(x.grad(), {2.0, 2.0, 2.0});
  EXPECT_FALSE(w.grad().defined());
}

TEST(AutogradFunction, GradientChecksBroadcastAndErrors) {
  Tensor x = vec({1.0, 2.0}).set_requires_grad(true);
  Tensor b = Tensor::from_vector(std::vector<double>{0.5}, {1}).set_requires_grad(true);
  auto forward = [](FunctionCtx&, const std::vector<Tensor>& in) -> std::vector<Tensor> { return {add(in[0], in[1])}; };
  // b's gradient comes back with x's shape: summed down to b's; a float32 gradient is cast.
  auto out = autograd::apply_function("AddBackward", {x, b}, forward,
                                      [](FunctionCtx&, const std::vector<Tensor>& g) -> std::vector<Tensor> {
    return {g[0].to(Dtype::Float32), g[0], Tensor()};
  });
  sum(out[0]).backward();
  EXPECT_EQ(x.grad().dtype(), Dtype::Float64);
  expect_values(x.grad(), {1.0, 1.0});
  expect_values(b.grad(), {2.0});
  auto bad = [&](std::vector<Tensor> (*bw)(FunctionCtx&, const std::vector<Tensor>&)) {
    return autograd::apply_function("BadBackward", {x, b}, forward, bw)[0];
  };
  EXPECT_THROW(
      sum(bad([](FunctionCtx&, const std::vector<Tensor>& g) -> std::vector<Tensor> { return {g[0]}; })).backward(),
      ValueError);
  try {
    sum(bad([](FunctionCtx&, const std::vector<Tensor>& g) -> std::vector<Tensor> {
      return {vec({1.0, 2.0, 3.0}), Tensor()};
    })).backward();
    FAIL() << "expected ShapeError";
  } catch (const ShapeError& e) {
    EXPECT_NE(std::string(e.what()).find("function BadBackward returned an invalid gradient at position 1 - got [3] "
                                         "but expected shape compatible with [2]"),
              std::string::npos)
        << e.what();
  }
}

TEST(AutogradFunction, SavedTensorModifiedInPlaceRaises) {
  Tensor x = vec({1.0, 2.0}).set_requires_grad(true);
  const auto sc = SinCos::apply({x});
  {
    NoGradGuard ng;
    add_(x, 1.0);
  }
  try {
    sum(sc[0]).backward();
    FAIL() << "expected SpiralError";
  } catch (const SpiralError& e) {
    EXPECT_NE(std::string(e.what()).find("saved tensor 0 of SinCosBackward is at version 1; expected version 0"),
              std::string::npos)
        << e.what();
  }
}

struct OnceSquare : autograd::Function<OnceSquare> {
  static constexpr const char* name = "OnceSquareBackward";
  static constexpr bool once_differentiable = true;
  static std::vector<Tensor> forward(FunctionCtx& ctx, const std::vector<Tensor>& in) {
    ctx.save_for_backward({in[0]});
    return {mul(in[0], in[0])};
  }
  static std::vector<Tensor> backward(FunctionCtx& ctx, const std::vector<Tensor>& g) {
    EXPECT_FALSE(grad_enabled());
    return {mul(mul(g[0], ctx.saved_tensors()[0]), 2.0)};
  }
};

TEST(AutogradFunction, OnceDifferentiableRefusesASecondOrderPass) {
  Tensor x = vec({1.0, 3.0}).set_requires_grad(true);
  // First order works, with or without create_graph.
  sum(OnceSquare::apply({x})[0]).backward();
  expect_values(x.grad(), {2.0, 6.0});
  // L = sum(y^2), y = x^2: the gradient reaching OnceSquare (2y) requires grad under create_graph,
  // so its result (2y * 2x = 4x^3) gets the refusing node.
  const Tensor y = OnceSquare::apply({x})[0];
  const Tensor g = grad({sum(mul(y, y))}, {x}, {}, true, true)[0];
  expect_values(g, {4.0, 108.0});
  ASSERT_TRUE(g.requires_grad());
  EXPECT_EQ(g.grad_fn()->name, "DelayedError");
  EXPECT_THROW(sum(g).backward(), SpiralError);
}

TEST(AutogradFunction, CheckpointedMultiOutputOps) {
  // Activation checkpointing recomputes a function whose graph holds a multi-output node.
  manual_seed(5);
  const Tensor A0 = randn({4, 3}, Dtype::Float64);
  Tensor A = A0.clone().set_requires_grad(true);
  const auto fn = [](const std::vector<Tensor>& in) {
    const auto qr = linalg::qr(in[0]);
    return add(sum(mul(qr.first, qr.first)), sum(qr.second));
  };
  checkpoint(fn, {A}).backward();
  Tensor B = A0.clone().set_requires_grad(true);
  fn({B}).backward();
  const auto a = A.grad().to_vector<double>(), b = B.grad().to_vector<double>();
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], b[i], 1e-12);
}

TEST(MultiOutputNode, SplitChunkUnbindAreOneNodeAndTwiceDifferentiable) {
  manual_seed(6);
  const Tensor x0 = randn({6, 4}, Dtype::Float64);
  Tensor x = x0.clone().set_requires_grad(true);
  const auto parts = split(x, 4, 0);  // 4 + 2 rows
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_EQ(parts[0].grad_fn(), parts[1].grad_fn());
  EXPECT_EQ(parts[1].output_nr(), 1u);
  const auto rows = unbind(x, 1);
  EXPECT_EQ(rows[0].grad_fn(), rows[3].grad_fn());
  // pieces used unevenly, one not at all: first order against finite differences
  test_util::gradcheck([](const Tensor& t) {
    const auto c = chunk(t, 3, 0);
    const auto u = unbind(t, 1);
    return add(mul(c[0], c[2]), sum(mul(u[1], u[3])));
  }, x0);
  test_util::gradcheck([](const Tensor& t) { return tensor_split(t, std::vector<int64_t>{1, 4}, 0)[1]; }, x0);
  // second order: d/dx of the gradient of sum(p0^2 * p1) (rows 0-2 and 3-5 of x)
  const auto p = split(x, 3, 0);
  const Tensor g = grad({sum(mul(mul(p[0], p[0]), p[1]))}, {x}, {}, true, true)[0];
  const Tensor gg = grad({sum(g)}, {x})[0];
  const auto xv = x0.to_vector<double>(), ggv = gg.to_vector<double>();
  for (int64_t r = 0; r < 3; ++r) {
    for (int64_t c = 0; c < 4; ++c) {
      const double a = xv[r * 4 + c], b = xv[(r + 3) * 4 + c];
      // g = (2ab, a^2): d/da sum = 2b + 2a, d/db = 2a
      EXPECT_NEAR(ggv[r * 4 + c], 2 * b + 2 * a, 1e-12);
      EXPECT_NEAR(ggv[(r + 3) * 4 + c], 2 * a, 1e-12);
    }
  }
  // an in-place write through a piece still rewires x's history
  Tensor y = mul(x, 1.0);
  auto q = split(y, 3, 0);
  {
    Tensor w = full({3, 4}, 2.0, Dtype::Float64);
    copy_(q[1], w);
  }
  sum(mul(y, y)).backward();
  const auto gx = x.grad().to_vector<double>();
  for (int64_t i = 0; i < 12; ++i) EXPECT_NEAR(gx[i], 2 * xv[i], 1e-12);  // rows 0-2 flow back
  for (int64_t i = 12; i < 24; ++i) EXPECT_NEAR(gx[i], 0.0, 1e-12);       // rows 3-5 were overwritten
}
