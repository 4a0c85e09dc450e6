#include "spiraltorch/zspace/complex_tensor.h"

#include <cmath>
#include <numbers>
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

std::string shape_of(const ComplexTensor& t) {
  return "(" + std::to_string(t.rows()) + ", " + std::to_string(t.cols()) + ")";
}

void check_same(const ComplexTensor& a, const ComplexTensor& b, const char* op) {
  if (a.shape() != b.shape()) {
    throw ShapeError(std::string(op) + ": shapes " + shape_of(a) + " and " + shape_of(b) + " differ");
  }
}

// NumPy's promotion: complex64 only when both are.
ComplexDtype promote(const ComplexTensor& a, const ComplexTensor& b) {
  return a.dtype() == ComplexDtype::Complex64 && b.dtype() == ComplexDtype::Complex64 ? ComplexDtype::Complex64
                                                                                      : ComplexDtype::Complex128;
}

// One value rounded to single precision. The volatile keeps GCC 12 from vectorising the rounding
// loop: at -O3 -march=native (AVX-512) it emitted a loop that skipped vectors of fewer than four
// entries, leaving them unrounded.
double to_single(double v) {
  volatile float f = static_cast<float>(v);
  return f;
}

std::complex<double> round64(std::complex<double> z) { return {to_single(z.real()), to_single(z.imag())}; }

template <class F>
ComplexTensor entrywise(const ComplexTensor& a, const ComplexTensor& b, const char* op, F f) {
  check_same(a, b, op);
  std::vector<std::complex<double>> out(a.data().size());
  for (size_t i = 0; i < out.size(); ++i) out[i] = f(a.data()[i], b.data()[i]);
  return {a.rows(), a.cols(), std::move(out), promote(a, b)};
}

// One row transformed in place; sign -1 forward, +1 inverse (unscaled).
void transform_row(std::complex<double>* x, size_t n, double sign) {
  if (n <= 1) return;
  if ((n & (n - 1)) != 0) {
    // Not a power of two: the direct sum (rows here are short; exactness matters more than speed).
    std::vector<std::complex<double>> out(n);
    for (size_t k = 0; k < n; ++k) {
      std::complex<double> acc = 0;
      for (size_t j = 0; j < n; ++j) {
        acc += x[j] * std::polar(1.0, sign * 2.0 * std::numbers::pi * static_cast<double>((k * j) % n) /
                                          static_cast<double>(n));
      }
      out[k] = acc;
    }
    std::copy(out.begin(), out.end(), x);
    return;
  }
  // Iterative radix-2 Cooley-Tukey: bit-reversal permutation, then butterflies.
  for (size_t i = 1, j = 0; i < n; ++i) {
    size_t bit = n >> 1;
    for (; j & bit; bit >>= 1) j ^= bit;
    j ^= bit;
    if (i < j) std::swap(x[i], x[j]);
  }
  for (size_t len = 2; len <= n; len <<= 1) {
    for (size_t i = 0; i < n; i += len) {
      for (size_t k = 0; k < len / 2; ++k) {
        // Twiddles from polar() per index (not by repeated multiplication) keep the error flat.
        const auto w =
            std::polar(1.0, sign * 2.0 * std::numbers::pi * static_cast<double>(k) / static_cast<double>(len));
        const auto u = x[i + k], v = x[i + k + len / 2] * w;
        x[i + k] = u + v;
        x[i + k + len / 2] = u - v;
      }
    }
  }
}

ComplexTensor transform(const ComplexTensor& t, double sign, double scale) {
  std::vector<std::complex<double>> out = t.data();
  const auto cols = static_cast<size_t>(t.cols());
  for (int64_t r = 0; r < t.rows(); ++r) transform_row(out.data() + static_cast<size_t>(r) * cols, cols, sign);
  if (scale != 1.0) {
    for (auto& z : out) z *= scale;
  }
  return {t.rows(), t.cols(), std::move(out), t.dtype()};
}

}  // namespace

const char* complex_dtype_name(ComplexDtype d) { return d == ComplexDtype::Complex64 ? "complex64" : "complex128"; }

ComplexTensor::ComplexTensor(int64_t rows, int64_t cols, ComplexDtype dtype)
    : rows_(rows), cols_(cols), data_(static_cast<size_t>(checked_size(rows, cols))), dtype_(dtype) {}

ComplexTensor::ComplexTensor(int64_t rows, int64_t cols, std::vector<value_type> data, ComplexDtype dtype)
    : rows_(rows), cols_(cols), data_(std::move(data)), dtype_(dtype) {
  if (data_.size() != static_cast<size_t>(checked_size(rows, cols))) {
    throw ValueError("ComplexTensor: " + std::to_string(data_.size()) + " values for shape (" + std::to_string(rows) +
                     ", " + std::to_string(cols) + ")");
  }
  if (dtype_ == ComplexDtype::Complex64) {
    for (auto& z : data_) z = round64(z);
  }
}

ComplexTensor ComplexTensor::to(ComplexDtype dtype) const { return {rows_, cols_, data_, dtype}; }

Tensor ComplexTensor::to_tensor() const {
  std::vector<float> flat;
  flat.reserve(2 * data_.size());
  for (const auto& z : data_) {
    flat.push_back(static_cast<float>(z.real()));
    flat.push_back(static_cast<float>(z.imag()));
  }
  return Tensor::from_vector(flat, {rows_, 2 * cols_});
}

ComplexTensor ComplexTensor::conj() const {
  std::vector<value_type> out(data_.size());
  for (size_t i = 0; i < out.size(); ++i) out[i] = std::conj(data_[i]);
  return {rows_, cols_, std::move(out), dtype_};
}

Tensor ComplexTensor::abs() const {
  std::vector<double> out(data_.size());
  for (size_t i = 0; i < out.size(); ++i) out[i] = std::abs(data_[i]);
  const Tensor t = Tensor::from_vector(out, {rows_, cols_});
  return dtype_ == ComplexDtype::Complex64 ? t.to(Dtype::Float32) : t;
}

ComplexTensor ComplexTensor::fft() const { return transform(*this, -1.0, 1.0); }

ComplexTensor ComplexTensor::ifft() const {
  return transform(*this, 1.0, cols_ > 0 ? 1.0 / static_cast<double>(cols_) : 1.0);
}

ComplexTensor add(const ComplexTensor& a, const ComplexTensor& b) {
  return entrywise(a, b, "ComplexTensor.add", [](auto x, auto y) { return x + y; });
}

ComplexTensor sub(const ComplexTensor& a, const ComplexTensor& b) {
  return entrywise(a, b, "ComplexTensor.sub", [](auto x, auto y) { return x - y; });
}

ComplexTensor mul(const ComplexTensor& a, const ComplexTensor& b) {
  return entrywise(a, b, "ComplexTensor.mul", [](auto x, auto y) { return x * y; });
}

ComplexTensor matmul(const ComplexTensor& a, const ComplexTensor& b) {
  if (a.cols() != b.rows()) {
    throw ShapeError("ComplexTensor.matmul: shapes " + shape_of(a) + " and " + shape_of(b) + " are incompatible");
  }
  const auto n = static_cast<size_t>(a.rows()), k = static_cast<size_t>(a.cols()), m = static_cast<size_t>(b.cols());
  std::vector<std::complex<double>> out(n * m);
  for (size_t i = 0; i < n; ++i) {
    for (size_t p = 0; p < k; ++p) {
      const auto aip = a.data()[i * k + p];
      for (size_t j = 0; j < m; ++j) out[i * m + j] += aip * b.data()[p * m + j];
    }
  }
  return {a.rows(), b.cols(), std::move(out), promote(a, b)};
}

}  // namespace st::zspace
