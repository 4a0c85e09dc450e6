#pragma once
// A (rows, cols) matrix of complex numbers (double precision), the seed's ComplexTensor.
#include <complex>
#include <cstdint>
#include <utility>
#include <vector>

#include "spiraltorch/tensor.h"

namespace st::zspace {

class ComplexTensor {
 public:
  using value_type = std::complex<double>;

  // A zero matrix.
  ComplexTensor(int64_t rows, int64_t cols);
  // data holds rows * cols values, row-major.
  ComplexTensor(int64_t rows, int64_t cols, std::vector<value_type> data);

  std::pair<int64_t, int64_t> shape() const { return {rows_, cols_}; }
  int64_t rows() const { return rows_; }
  int64_t cols() const { return cols_; }
  const std::vector<value_type>& data() const { return data_; }
  // The real (rows, 2 * cols) float32 tensor [re, im, re, im, ...] per row.
  Tensor to_tensor() const;

 private:
  int64_t rows_, cols_;
  std::vector<value_type> data_;
};

}  // namespace st::zspace
