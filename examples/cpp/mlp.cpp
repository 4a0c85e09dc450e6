// Fits y = sin(3x) with a two-layer MLP using raw tensors and autograd.
#include <cstdio>

#include "spiraltorch/spiraltorch.h"

int main() {
  using namespace st;
  manual_seed(0);
  const Tensor x = reshape(linspace(-1.0, 1.0, 128), {128, 1});
  const Tensor y = sin(mul(x, 3.0));
  Tensor w1 = mul(randn({1, 32}), 1.0).set_requires_grad(true);
  Tensor b1 = zeros({32}).set_requires_grad(true);
  Tensor w2 = mul(randn({32, 1}), 0.2).set_requires_grad(true);
  Tensor b2 = zeros({1}).set_requires_grad(true);
  std::vector<Tensor*> params{&w1, &b1, &w2, &b2};
  double first = 0, last = 0;
  for (int step = 0; step < 500; ++step) {
    const Tensor hidden = tanh(add(matmul(x, w1), b1));
    const Tensor pred = add(matmul(hidden, w2), b2);
    const Tensor diff = sub(pred, y);
    const Tensor loss = mean(mul(diff, diff));
    for (Tensor* p : params) p->set_grad({});
    loss.backward();
    {
      NoGradGuard no_grad;
      for (Tensor* p : params) sub_(*p, p->grad(), 0.1);
    }
    if (step == 0) first = loss.item();
    last = loss.item();
    if (step % 100 == 0) std::printf("step %3d  loss %.6f\n", step, last);
  }
  std::printf("loss %.6f -> %.6f\n", first, last);
  return last < first ? 0 : 1;
}
