// Links only the core (spiraltorch_core: tensors, backends, ops, autograd, nn, optim, io, data),
// with no extension: a core source that calls into Z-space, the runtime or a toolkit fails this
// link. Then trains one step of a small model, so the core also runs alone.
#include <cstdio>
#include <vector>

#include "spiraltorch/nn/linear.h"
#include "spiraltorch/nn/loss.h"
#include "spiraltorch/optim/sgd.h"
#include "spiraltorch/spiraltorch.h"

int main() {
  using namespace st;
  manual_seed(0);
  nn::Linear layer(2, 1);
  const Tensor x = Tensor::from_vector(std::vector<float>{1, 2, 3, 4}, {2, 2});
  const Tensor y = Tensor::from_vector(std::vector<float>{1, 0}, {2, 1});
  optim::SGD opt({optim::ParamGroup{layer.parameters(), {}}}, 0.01);
  const double before = nn::mse_loss(layer(x), y).item();
  for (int i = 0; i < 20; ++i) {
    opt.zero_grad();
    Tensor loss = nn::mse_loss(layer(x), y);
    loss.backward();
    opt.step();
  }
  const double after = nn::mse_loss(layer(x), y).item();
  std::printf("loss %.6f -> %.6f\n", before, after);
  if (!(after < before)) return 1;
  std::printf("core only: ok\n");
  return 0;
}
