#pragma once
// A (rows, cols) matrix of complex numbers, the seed's ComplexTensor, in complex128 (double
// precision) or complex64 (single precision). A complex64 tensor holds only values representable
// in complex64: every result is computed in double (sums accumulate wide, as the library's
// float32 reductions do) and rounded once to complex64, so it is at least as accurate as NumPy's
// complex64 arithmetic. Binary operations on mixed dtypes give complex128, as in NumPy.
#include <complex>
#include <cstdint>
#include <utility>
#include <vector>

#include "spiraltorch/tensor.h"

namespace st::zspace {

enum class ComplexDtype { Complex64, Complex128 };
const char* complex_dtype_name(ComplexDtype d);

class ComplexTensor {
 public:
  using value_type = std::complex<double>;

  // A zero matrix.
  ComplexTensor(int64_t rows, int64_t cols, ComplexDtype dtype = ComplexDtype::Complex128);
  // data holds rows * cols values, row-major (rounded to complex64 for that dtype).
  ComplexTensor(int64_t rows, int64_t cols, std::vector<value_type> data,
                ComplexDtype dtype = ComplexDtype::Complex128);

  ComplexDtype dtype() const { return dtype_; }
  // The same values in another dtype (rounded when narrowing).
  ComplexTensor to(ComplexDtype dtype) const;

  std::pair<int64_t, int64_t> shape() const { return {rows_, cols_}; }
  int64_t rows() const { return rows_; }
  int64_t cols() const { return cols_; }
  const std::vector<value_type>& data() const { return data_; }
  // The real (rows, 2 * cols) float32 tensor [re, im, re, im, ...] per row.
  Tensor to_tensor() const;

  // The complex conjugate.
  ComplexTensor conj() const;
  // |z| per entry as a (rows, cols) tensor: float64 for complex128, float32 for complex64.
  Tensor abs() const;
  // The unnormalised DFT of each row, X_k = sum_j x_j exp(-2 pi i k j / cols): radix-2 FFT when
  // cols is a power of two, the direct O(cols^2) sum otherwise.
  ComplexTensor fft() const;
  // The inverse of fft() (with the 1/cols factor), so ifft(fft(x)) == x up to rounding.
  ComplexTensor ifft() const;

 private:
  int64_t rows_, cols_;
  std::vector<value_type> data_;
  ComplexDtype dtype_;
};

// Entrywise sum, difference and product of equal shapes (ShapeError otherwise).
ComplexTensor add(const ComplexTensor& a, const ComplexTensor& b);
ComplexTensor sub(const ComplexTensor& a, const ComplexTensor& b);
ComplexTensor mul(const ComplexTensor& a, const ComplexTensor& b);
// The matrix product (rows, k) x (k, cols).
ComplexTensor matmul(const ComplexTensor& a, const ComplexTensor& b);

}  // namespace st::zspace
