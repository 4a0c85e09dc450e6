#pragma once
// The data of a tensor argument a kernel may be given undefined (an absent affine weight, a
// gradient nobody asked for): nullptr then, which the kernel tests instead of the tensor.
#include "spiraltorch/tensor.h"

namespace st::backend::cpu {

template <typename T>
const T* opt(const Tensor& t) {
  return t.defined() ? t.data<T>() : nullptr;
}

template <typename T>
T* opt_mut(Tensor& t) {
  return t.defined() ? t.data<T>() : nullptr;
}

}  // namespace st::backend::cpu
