// Adam/AdamW with capturable=True: the step count lives on the parameter's device (state buffer
// "device_step") and the update kernel advances it, so the result equals plain Adam's; a skipped
// step (non-finite gradient) advances nothing; on CUDA the step can be captured into a graph and
// each replay is the next step of the eager run.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "spiraltorch/cuda.h"
#include "spiraltorch/optim/adam.h"
#include "spiraltorch/spiraltorch.h"

using namespace st;
using namespace st::optim;

namespace {

const std::vector<double> kStart{0.5, -1.25, 2.0, 0.75, -0.3};

// The gradient of step k (k = 0, 1, ...) for element i: varied signs and sizes.
std::vector<double> grad_of(int k, size_t n) {
  std::vector<double> g(n);
  for (size_t i = 0; i < n; ++i) g[i] = std::sin(1.7 * static_cast<double>(k + 1) + static_cast<double>(i)) * (1.0 + i);
  return g;
}

Tensor param(Dtype dt, const Device& d) {
  Tensor p = to_device(cast(Tensor::from_vector(kStart, {5}), dt), d);
  p.set_requires_grad(true);
  return p;
}

void set_grad(Tensor& p, const std::vector<double>& g) {
  p.set_grad(to_device(cast(Tensor::from_vector(g, {static_cast<int64_t>(g.size())}), p.dtype()), p.device()));
}

std::vector<double> host(const Tensor& t) {
  return cast(to_device(t.detach(), Device(DeviceType::CPU, 0)), Dtype::Float64).to_vector<double>();
}

}  // namespace

TEST(AdamCapturable, EqualsPlainAdamAndCountsOnTheDevice) {
  for (const bool decoupled : {false, true}) {
    Tensor a = param(Dtype::Float64, {}), b = param(Dtype::Float64, {});
    Adam plain({ParamGroup{{a}, {}}}, 0.05, 0.9, 0.999, 1e-8, 0.01, false, false, decoupled, false);
    Adam dev({ParamGroup{{b}, {}}}, 0.05, 0.9, 0.999, 1e-8, 0.01, false, false, decoupled, true);
    for (int k = 0; k < 6; ++k) {
      set_grad(a, grad_of(k, 5));
      set_grad(b, grad_of(k, 5));
      ASSERT_TRUE(static_cast<bool>(plain.step()));
      ASSERT_TRUE(static_cast<bool>(dev.step()));
      EXPECT_EQ(host(a), host(b)) << "step " << k << " decoupled " << decoupled;
    }
    const ParamState* s = dev.state_of(b);
    ASSERT_NE(s, nullptr);
    EXPECT_EQ(s->buffers.at("device_step").item(), 6.0);
    EXPECT_EQ(s->step, 0);  // the host count stays where it was: the device one is the truth
    EXPECT_EQ(plain.state_of(a)->step, 6);
  }
}

TEST(AdamCapturable, NonFiniteGradientAdvancesNothing) {
  Tensor p = param(Dtype::Float32, {});
  AdamW opt({ParamGroup{{p}, {}}}, 0.01, 0.9, 0.999, 1e-8, 0.01, false, false, true);
  set_grad(p, grad_of(0, 5));
  ASSERT_TRUE(static_cast<bool>(opt.step()));
  const std::vector<double> before = host(p);
  std::vector<double> bad = grad_of(1, 5);
  bad[2] = NAN;
  set_grad(p, bad);
  EXPECT_FALSE(static_cast<bool>(opt.step()));
  EXPECT_EQ(host(p), before);
  EXPECT_EQ(opt.state_of(p)->buffers.at("device_step").item(), 1.0);
  EXPECT_EQ(opt.skipped_steps(), 1);
}

TEST(AdamCapturable, StateDictRoundTripContinuesTheCount) {
  Tensor a = param(Dtype::Float64, {}), b = param(Dtype::Float64, {});
  AdamW first({ParamGroup{{a}, {}}}, 0.02, 0.9, 0.99, 1e-8, 0.0, false, false, true);
  for (int k = 0; k < 3; ++k) {
    set_grad(a, grad_of(k, 5));
    first.step();
  }
  {
    NoGradGuard ng;
    copy_(b, a.detach());
  }
  AdamW second({ParamGroup{{b}, {}}}, 0.02, 0.9, 0.99, 1e-8, 0.0, false, false, true);
  second.load_state_dict(first.state_dict());
  EXPECT_EQ(second.state_of(b)->buffers.at("device_step").item(), 3.0);
  for (int k = 3; k < 5; ++k) {
    set_grad(a, grad_of(k, 5));
    set_grad(b, grad_of(k, 5));
    first.step();
    second.step();
    EXPECT_EQ(host(a), host(b));
  }
}

TEST(AdamCapturable, PlainAdamRefusesCaptureAndCapturableReplaysEqualEagerSteps) {
  if (!cuda::is_available()) GTEST_SKIP() << "CUDA not available";
  const Device gpu(DeviceType::CUDA, 0);
  Tensor eager = param(Dtype::Float32, gpu), graphed = param(Dtype::Float32, gpu);
  AdamW opt_e({ParamGroup{{eager}, {}}}, 0.01, 0.9, 0.999, 1e-8, 0.01, false, false, true);
  AdamW opt_g({ParamGroup{{graphed}, {}}}, 0.01, 0.9, 0.999, 1e-8, 0.01, false, false, true);
  // The gradient is a static input the graph reads; each replay takes the next one copied in.
  Tensor static_grad = to_device(Tensor::from_vector(std::vector<float>(5, 0.0f), {5}), gpu);
  set_grad(eager, grad_of(0, 5));
  set_grad(graphed, grad_of(0, 5));
  opt_e.step();
  opt_g.step();  // warm-up: creates the state outside the capture
  graphed.set_grad(static_grad);
  cuda::Graph g;
  g.capture_begin();
  opt_g.step();
  g.capture_end();
  for (int k = 1; k < 6; ++k) {
    set_grad(eager, grad_of(k, 5));
    opt_e.step();
    copy_(static_grad, to_device(cast(Tensor::from_vector(grad_of(k, 5), {5}), Dtype::Float32), gpu));
    g.replay();
    EXPECT_EQ(host(graphed), host(eager)) << "step " << k;
  }
  EXPECT_EQ(opt_g.state_of(graphed)->buffers.at("device_step").item(), 6.0);

  Tensor plain_p = param(Dtype::Float32, gpu);
  Adam plain({ParamGroup{{plain_p}, {}}});
  set_grad(plain_p, grad_of(0, 5));
  plain.step();
  cuda::Graph refused;
  refused.capture_begin();
  EXPECT_THROW(plain.step(), SpiralError);
  refused.reset();  // abandons the capture: nothing was launched into it
  EXPECT_FALSE(cuda::is_current_stream_capturing());
}
