#pragma once
// A dataset of tensors whose rows along dim 0 form the samples (toolkit layer, `spiraltorch.data`).
#include <cstdint>
#include <vector>

#include "spiraltorch/tensor.h"

namespace st::data {

// Fields are tensors with rows along dim 0. Sample i of field f is the row range
// [row_begin(f, i), row_begin(f, i) + rows(f, i)): one row per sample for a plain tensor
// dataset (PyTorch's TensorDataset), or variable row segments for concatenated samples
// (spiraltorch.dataset, where an (R, C) sample contributes R rows).
// CPU fields are stored contiguous so that a sample is one memcpy.
class TensorDataset {
 public:
  // One row per sample; every field needs the same first dim (ShapeError otherwise).
  explicit TensorDataset(std::vector<Tensor> fields);
  // offsets[f] has size()+1 non-decreasing entries from 0 to fields[f].size(0).
  TensorDataset(std::vector<Tensor> fields, std::vector<std::vector<int64_t>> offsets);

  int64_t size() const { return size_; }
  size_t num_fields() const { return fields_.size(); }
  const Tensor& field(size_t f) const { return fields_.at(f); }
  bool segmented() const { return !offsets_.empty(); }
  int64_t row_begin(size_t f, int64_t i) const { return segmented() ? offsets_[f][i] : i; }
  int64_t rows(size_t f, int64_t i) const { return segmented() ? offsets_[f][i + 1] - offsets_[f][i] : 1; }

 private:
  std::vector<Tensor> fields_;
  std::vector<std::vector<int64_t>> offsets_;  // empty: one row per sample
  int64_t size_ = 0;
};

}  // namespace st::data
