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

  // The complex conjugate.
  ComplexTensor conj() const;
  // |z| per entry as a (rows, cols) float64 tensor.
  Tensor abs() const;
  // The unnormalised DFT of each row, X_k = sum_j x_j exp(-2 pi i k j / cols): radix-2 FFT when
  // cols is a power of two, the direct O(cols^2) sum otherwise.
  ComplexTensor fft() const;
  // The inverse of fft() (with the 1/cols factor), so ifft(fft(x)) == x up to rounding.
  ComplexTensor ifft() const;

 private:
  int64_t rows_, cols_;
  std::vector<value_type> data_;
};

// Entrywise sum, difference and product of equal shapes (ShapeError otherwise).
ComplexTensor add(const ComplexTensor& a, const ComplexTensor& b);
ComplexTensor sub(const ComplexTensor& a, const ComplexTensor& b);
ComplexTensor mul(const ComplexTensor& a, const ComplexTensor& b);
// The matrix product (rows, k) x (k, cols).
ComplexTensor matmul(const ComplexTensor& a, const ComplexTensor& b);

}  // namespace st::zspace
