#include "spiraltorch/data/dataset.h"

#include <string>

#include "spiraltorch/error.h"

namespace st::data {
namespace {

std::string shapes_of(const std::vector<Tensor>& fields) {
  std::string s = "[";
  for (size_t i = 0; i < fields.size(); ++i) s += (i ? ", " : "") + shape_str(fields[i].shape());
  return s + "]";
}

std::vector<Tensor> prepared(std::vector<Tensor> fields, const char* who) {
  if (fields.empty()) throw ValueError(std::string(who) + ": need at least one tensor");
  for (Tensor& t : fields) {
    if (!t.defined()) throw ValueError(std::string(who) + ": got an undefined tensor");
    if (t.dim() == 0) throw ShapeError(std::string(who) + ": tensors need a first dim to index, got a 0-d tensor");
    // Batches are copies: they never take part in the dataset tensors' autograd graph.
    t = t.detach();
    if (t.device().type == DeviceType::CPU && !t.is_contiguous()) t = t.contiguous();
  }
  return fields;
}

}  // namespace

TensorDataset::TensorDataset(std::vector<Tensor> fields) : fields_(prepared(std::move(fields), "TensorDataset")) {
  size_ = fields_[0].size(0);
  for (const Tensor& t : fields_)
    if (t.size(0) != size_)
      throw ShapeError("TensorDataset: all tensors need the same first dim, got " + shapes_of(fields_));
}

TensorDataset::TensorDataset(std::vector<Tensor> fields, std::vector<std::vector<int64_t>> offsets)
    : fields_(prepared(std::move(fields), "TensorDataset")), offsets_(std::move(offsets)) {
  if (offsets_.size() != fields_.size())
    throw ValueError("TensorDataset: got " + std::to_string(offsets_.size()) + " offset lists for " +
                     std::to_string(fields_.size()) + " tensors");
  size_ = static_cast<int64_t>(offsets_[0].size()) - 1;
  if (size_ < 0) throw ValueError("TensorDataset: an offset list needs at least the entry 0");
  for (size_t f = 0; f < fields_.size(); ++f) {
    const auto& o = offsets_[f];
    if (static_cast<int64_t>(o.size()) != size_ + 1)
      throw ShapeError("TensorDataset: field " + std::to_string(f) + " has " + std::to_string(o.size() - 1) +
                       " segments, field 0 has " + std::to_string(size_));
    if (o.front() != 0 || o.back() != fields_[f].size(0))
      throw ShapeError("TensorDataset: the segments of field " + std::to_string(f) + " cover rows [" +
                       std::to_string(o.front()) + ", " + std::to_string(o.back()) + "), the tensor has " +
                       std::to_string(fields_[f].size(0)) + " rows");
    for (size_t i = 1; i < o.size(); ++i)
      if (o[i] < o[i - 1])
        throw ValueError("TensorDataset: offsets of field " + std::to_string(f) + " decrease at " + std::to_string(i));
  }
}

}  // namespace st::data
