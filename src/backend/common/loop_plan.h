#pragma once
// The one loop planner of every backend: how N strided operands are walked over an output shape.
// Size-1 dimensions are dropped and neighbouring dimensions merged wherever every operand is
// contiguous across them, so a broadcast bias over (B, T, C) becomes a (B*T, C) loop and a
// contiguous tensor of any rank one run. The CPU loops (backend/cpu/loops.h, byte strides), the CUDA
// kernels' Geometry (backend/cuda/common.cuh, element strides in fixed arrays) and the wgpu code
// generator's indexing (backend/wgpu/elementwise.cpp) all start from this plan.
#include <array>
#include <cstdint>
#include <vector>

#include "spiraltorch/tensor.h"

namespace st::backend {

template <int N>
struct LoopPlan {
  std::vector<int64_t> sizes;                   // outermost first; never empty (a scalar is one dim of 1)
  std::vector<std::array<int64_t, N>> strides;  // per dim, per operand, in the caller's unit
  int nd() const { return static_cast<int>(sizes.size()); }
};

// The loop over `shape` for operands whose element strides are `*strides[i]` (each of shape's
// rank), each stride multiplied by `scale[i]` (an element size for byte strides, 1 for elements).
template <int N>
LoopPlan<N> plan_loop(const Shape& shape, const std::array<const Shape*, N>& strides,
                      const std::array<int64_t, N>& scale) {
  LoopPlan<N> plan;
  plan.sizes.reserve(shape.size());
  plan.strides.reserve(shape.size());
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1) continue;
    std::array<int64_t, N> s;
    for (int i = 0; i < N; ++i) s[i] = (*strides[i])[d] * scale[i];
    if (!plan.sizes.empty()) {
      bool mergeable = true;
      for (int i = 0; i < N; ++i) mergeable &= plan.strides.back()[i] == s[i] * shape[d];
      if (mergeable) {
        plan.sizes.back() *= shape[d];
        plan.strides.back() = s;
        continue;
      }
    }
    plan.sizes.push_back(shape[d]);
    plan.strides.push_back(s);
  }
  if (plan.sizes.empty()) {
    plan.sizes.push_back(1);
    plan.strides.push_back({});
  }
  return plan;
}

// The same with element strides (scale 1 for every operand).
template <int N>
LoopPlan<N> plan_loop(const Shape& shape, const std::array<const Shape*, N>& strides) {
  std::array<int64_t, N> ones;
  ones.fill(1);
  return plan_loop<N>(shape, strides, ones);
}

}  // namespace st::backend
