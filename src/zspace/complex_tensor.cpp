#include "spiraltorch/zspace/complex_tensor.h"

#include <string>

#include "spiraltorch/error.h"

namespace st::zspace {

namespace {

int64_t checked_size(int64_t rows, int64_t cols) {
  if (rows < 0 || cols < 0) {
    throw ValueError("ComplexTensor: negative shape (" + std::to_string(rows) + ", " + std::to_string(cols) + ")");
  }
  return rows * cols;
}

}  // namespace

ComplexTensor::ComplexTensor(int64_t rows, int64_t cols)
    : rows_(rows), cols_(cols), data_(static_cast<size_t>(checked_size(rows, cols))) {}

ComplexTensor::ComplexTensor(int64_t rows, int64_t cols, std::vector<value_type> data)
    : rows_(rows), cols_(cols), data_(std::move(data)) {
  if (data_.size() != static_cast<size_t>(checked_size(rows, cols))) {
    throw ValueError("ComplexTensor: " + std::to_string(data_.size()) + " values for shape (" + std::to_string(rows) +
                     ", " + std::to_string(cols) + ")");
  }
}

Tensor ComplexTensor::to_tensor() const {
  std::vector<float> flat;
  flat.reserve(2 * data_.size());
  for (const auto& z : data_) {
    flat.push_back(static_cast<float>(z.real()));
    flat.push_back(static_cast<float>(z.imag()));
  }
  return Tensor::from_vector(flat, {rows_, 2 * cols_});
}

}  // namespace st::zspace
