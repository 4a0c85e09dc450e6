// embedding_bag: sums, means or maxima of bags of embedding rows without materialising the
// (bags, length, dim) block of a padded embedding + reduction where it can be avoided. Composed
// from the differentiable embedding, scatter_add and max ops, so gradients (weight and
// per_sample_weights) and devices come from them; the bag layout (which entry goes to which bag)
// is read on the host from the indices and offsets.
#include "spiraltorch/nn/embedding_bag.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "spiraltorch/autograd.h"
#include "spiraltorch/nn/functional.h"
#include "spiraltorch/ops.h"

namespace st::nn {

namespace {

// Which bag each kept entry belongs to, and which entries are kept (padding_idx entries are not).
struct BagLayout {
  int64_t bags = 0;
  std::vector<int64_t> kept;    // positions into the flat indices
  std::vector<int64_t> bag_of;  // bag of each kept entry
  std::vector<int64_t> counts;  // kept entries per bag
};

BagLayout layout(const std::vector<int64_t>& idx, const std::vector<int64_t>& offsets, bool include_last_offset,
                 std::optional<int64_t> padding_idx) {
  const char* op = "embedding_bag";
  const auto n = static_cast<int64_t>(idx.size());
  if (offsets.empty()) throw ValueError(std::string(op) + ": offsets must not be empty");
  if (offsets[0] != 0) {
    throw ValueError(std::string(op) + ": offsets[0] must be 0, got " + std::to_string(offsets[0]));
  }
  for (size_t i = 1; i < offsets.size(); ++i) {
    if (offsets[i] < offsets[i - 1] || offsets[i] > n) {
      throw ValueError(std::string(op) + ": offsets must be non-decreasing and at most the number of indices (" +
                       std::to_string(n) + "), got offsets[" + std::to_string(i) + "] = " + std::to_string(offsets[i]) +
                       " after " + std::to_string(offsets[i - 1]));
    }
  }
  if (include_last_offset && offsets.back() != n) {
    throw ValueError(std::string(op) + ": with include_last_offset the last offset must equal the number of indices (" +
                     std::to_string(n) + "), got " + std::to_string(offsets.back()));
  }
  BagLayout L;
  L.bags = static_cast<int64_t>(offsets.size()) - (include_last_offset ? 1 : 0);
  L.counts.assign(static_cast<size_t>(L.bags), 0);
  for (int64_t b = 0; b < L.bags; ++b) {
    const int64_t end = b + 1 < static_cast<int64_t>(offsets.size()) ? offsets[static_cast<size_t>(b) + 1] : n;
    for (int64_t i = offsets[static_cast<size_t>(b)]; i < end; ++i) {
      if (padding_idx && idx[static_cast<size_t>(i)] == *padding_idx) continue;
      L.kept.push_back(i);
      L.bag_of.push_back(b);
      ++L.counts[static_cast<size_t>(b)];
    }
  }
  return L;
}

Tensor long_tensor(const std::vector<int64_t>& v, Device device) {
  return to_device(Tensor::from_vector(v, {static_cast<int64_t>(v.size())}), device);
}

}  // namespace

Tensor embedding_bag(const Tensor& weight, const Tensor& input, const Tensor& offsets, const std::string& mode,
                     const Tensor& per_sample_weights, bool include_last_offset, std::optional<int64_t> padding_idx) {
  const char* op = "embedding_bag";
  if (!weight.defined() || !input.defined()) throw ValueError(std::string(op) + ": weight and input are required");
  if (weight.dim() != 2) {
    throw ShapeError(std::string(op) + ": weight must be 2-D (num_embeddings, embedding_dim), got shape " +
                     shape_str(weight.shape()));
  }
  if (mode != "sum" && mode != "mean" && mode != "max") {
    throw ValueError(std::string(op) + ": mode must be 'sum', 'mean' or 'max', got '" + mode + "'");
  }
  if (input.dtype() != Dtype::Int64 && input.dtype() != Dtype::Int32) {
    throw DtypeError(std::string(op) + ": expected int64 (or int32) indices, got " + dtype_name(input.dtype()));
  }
  const int64_t num = weight.shape()[0], dim = weight.shape()[1];
  std::optional<int64_t> pad;
  if (padding_idx) {
    if (*padding_idx < -num || *padding_idx >= num) {
      throw ValueError(std::string(op) + ": padding_idx " + std::to_string(*padding_idx) + " is out of range for " +
                       std::to_string(num) + " embeddings");
    }
    pad = *padding_idx < 0 ? *padding_idx + num : *padding_idx;
  }
  std::vector<int64_t> offs;
  if (input.dim() == 2) {
    if (offsets.defined()) {
      throw ValueError(std::string(op) + ": offsets must be None for 2-D input (each row is a bag), got shape " +
                       shape_str(offsets.shape()));
    }
    if (include_last_offset) {
      throw ValueError(std::string(op) + ": include_last_offset applies to 1-D input with offsets, not to 2-D input");
    }
    for (int64_t b = 0; b < input.shape()[0]; ++b) offs.push_back(b * input.shape()[1]);
  } else if (input.dim() == 1) {
    if (!offsets.defined() || offsets.dim() != 1) {
      throw ValueError(std::string(op) + ": 1-D input needs 1-D offsets (where each bag starts)");
    }
    offs = to_device(offsets, Device{}).to(Dtype::Int64).to_vector<int64_t>();
  } else {
    throw ShapeError(std::string(op) + ": expected 1-D indices with offsets or 2-D (bags, length) indices, got shape " +
                     shape_str(input.shape()));
  }
  const Tensor flat = reshape(input.to(Dtype::Int64), {input.numel()});
  const std::vector<int64_t> idx = to_device(flat, Device{}).to_vector<int64_t>();
  for (const int64_t v : idx) {
    if (v < 0 || v >= num) {
      throw IndexError(std::string(op) + ": index " + std::to_string(v) + " is out of range for " +
                       std::to_string(num) + " embeddings");
    }
  }
  if (per_sample_weights.defined()) {
    if (mode != "sum") {
      throw ValueError(std::string(op) + ": per_sample_weights are only supported for mode='sum', got mode='" + mode +
                       "'");
    }
    if (per_sample_weights.shape() != input.shape()) {
      throw ShapeError(std::string(op) + ": per_sample_weights of shape " + shape_str(per_sample_weights.shape()) +
                       " must match input of shape " + shape_str(input.shape()));
    }
  }
  const bool no_bags = input.dim() == 2 && input.shape()[0] == 0;
  const BagLayout L = no_bags ? BagLayout{} : layout(idx, offs, include_last_offset, pad);
  const Device dev = weight.device();
  if (L.bags == 0) return zeros({0, dim}, weight.dtype(), dev);

  const Tensor kept = long_tensor(L.kept, dev);
  Tensor rows = embedding(weight, index_select(to_device(flat, dev), 0, kept));  // (kept, dim)
  if (per_sample_weights.defined()) {
    const Tensor w = index_select(reshape(per_sample_weights, {input.numel()}), 0, kept);
    rows = mul(rows, unsqueeze(w.to(rows.dtype()), 1));
  }
  if (mode == "max") {
    // Bags padded to the longest with a row of -inf (empty bags see one row of zeros, PyTorch's
    // result for them); max along the bag gives each output element's gradient to one entry.
    const int64_t longest = std::max<int64_t>(1, *std::max_element(L.counts.begin(), L.counts.end()));
    const auto k = static_cast<int64_t>(L.kept.size());
    const int64_t neg_row = k, zero_row = k + 1;
    std::vector<int64_t> slots(static_cast<size_t>(L.bags * longest), neg_row);
    std::vector<int64_t> fill(static_cast<size_t>(L.bags), 0);
    for (int64_t e = 0; e < k; ++e) {
      const int64_t b = L.bag_of[static_cast<size_t>(e)];
      slots[static_cast<size_t>(b * longest + fill[static_cast<size_t>(b)]++)] = e;
    }
    for (int64_t b = 0; b < L.bags; ++b) {
      if (L.counts[static_cast<size_t>(b)] == 0) slots[static_cast<size_t>(b * longest)] = zero_row;
    }
    const Tensor padded = cat({rows, full({1, dim}, -INFINITY, rows.dtype(), dev), zeros({1, dim}, rows.dtype(), dev)});
    const Tensor gathered = reshape(index_select(padded, 0, long_tensor(slots, dev)), {L.bags, longest, dim});
    return max(gathered, 1).first;
  }
  // sum / mean: scatter the kept rows into their bags.
  const Tensor target = reshape(long_tensor(L.bag_of, dev), {static_cast<int64_t>(L.kept.size()), 1});
  Tensor out = scatter_add(zeros({L.bags, dim}, rows.dtype(), dev), 0,
                           expand(target, {static_cast<int64_t>(L.kept.size()), dim}), rows);
  if (mode == "mean") {
    std::vector<double> inv(L.counts.size());
    for (size_t b = 0; b < inv.size(); ++b) inv[b] = L.counts[b] ? 1.0 / static_cast<double>(L.counts[b]) : 0.0;
    out = mul(out, to_device(Tensor::from_vector(inv, {L.bags, 1}).to(rows.dtype()), dev));
  }
  return out;
}

}  // namespace st::nn
