// The Z-space extension's hypergrad settings per module (zspace/module_hypergrad.h): attached to a
// whole tree, per module, and never inherited by a new module that reuses a destroyed one's address.
#include <gtest/gtest.h>

#include <memory>
#include <optional>

#include "spiraltorch/error.h"
#include "spiraltorch/nn/linear.h"
#include "spiraltorch/nn/sequential.h"
#include "spiraltorch/zspace/module_hypergrad.h"

using namespace st;

namespace {

std::shared_ptr<nn::Sequential> two_layers() {
  auto net = std::make_shared<nn::Sequential>();
  net->add(std::make_shared<nn::Linear>(3, 4));
  net->add(std::make_shared<nn::Linear>(4, 2));
  return net;
}

}  // namespace

TEST(ModuleHypergrad, AttachReachesEveryModuleAndDetachClearsThem) {
  auto net = two_layers();
  zspace::attach_hypergrad(*net, -0.5, 0.01);
  const auto params = zspace::parameters_with_hypergrad(*net);
  ASSERT_EQ(params.size(), 4u);  // two weights, two biases
  for (const auto& [p, h] : params) {
    ASSERT_TRUE(h);
    EXPECT_DOUBLE_EQ(h->curvature, -0.5);
    EXPECT_DOUBLE_EQ(h->learning_rate, 0.01);
  }
  zspace::detach_hypergrad(*net);
  for (const auto& [path, m] : net->named_modules()) EXPECT_FALSE(zspace::hypergrad_of(*m)) << path;
}

TEST(ModuleHypergrad, OwnSettingsLeaveChildrenAlone) {
  auto net = two_layers();
  zspace::attach_hypergrad(*net, -1.0, 0.05);
  nn::Module& first = *net->children().front().second;
  zspace::set_own_hypergrad(first, zspace::HypergradSettings{-2.0, 0.1});
  EXPECT_DOUBLE_EQ(zspace::hypergrad_of(first)->curvature, -2.0);
  EXPECT_DOUBLE_EQ(zspace::hypergrad_of(*net)->curvature, -1.0);
  zspace::set_own_hypergrad(first, std::nullopt);
  EXPECT_FALSE(zspace::hypergrad_of(first));
  // The first layer's parameters now get plain updates, the second's keep the Riemannian ones.
  const auto params = zspace::parameters_with_hypergrad(*net);
  ASSERT_EQ(params.size(), 4u);
  EXPECT_FALSE(params[0].second);
  EXPECT_FALSE(params[1].second);
  EXPECT_TRUE(params[2].second);
  EXPECT_TRUE(params[3].second);
}

TEST(ModuleHypergrad, RejectsANonNegativeCurvatureOrRate) {
  nn::Linear lin(2, 2);
  EXPECT_THROW(zspace::attach_hypergrad(lin, 0.0, 0.1), ValueError);
  EXPECT_THROW(zspace::attach_hypergrad(lin, -1.0, -0.1), ValueError);
  EXPECT_FALSE(zspace::hypergrad_of(lin));
}

TEST(ModuleHypergrad, ANewModuleAtAFreedAddressHasNoSettings) {
  // Placement-new into the same storage guarantees the address is reused.
  alignas(nn::Linear) unsigned char storage[sizeof(nn::Linear)];
  auto* a = new (storage) nn::Linear(2, 2);
  zspace::attach_hypergrad(*a, -1.0, 0.05);
  ASSERT_TRUE(zspace::hypergrad_of(*a));
  a->~Linear();
  auto* b = new (storage) nn::Linear(2, 2);
  EXPECT_FALSE(zspace::hypergrad_of(*b));
  for (const auto& [p, h] : zspace::parameters_with_hypergrad(*b)) EXPECT_FALSE(h);
  b->~Linear();
}
