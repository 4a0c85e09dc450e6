#pragma once
#include <cstdint>

#include "spiraltorch/dtype.h"

namespace st {

// A Python-style number: bool, int or float. Used for tensor-scalar ops, where it
// does not promote a tensor's dtype within its category (PyTorch semantics).
class Scalar {
 public:
  enum class Kind : uint8_t { Bool, Int, Float };
  Scalar(double v) : kind_(Kind::Float), d_(v), i_(static_cast<int64_t>(v)) {}
  Scalar(float v) : Scalar(static_cast<double>(v)) {}
  Scalar(int64_t v) : kind_(Kind::Int), d_(static_cast<double>(v)), i_(v) {}
  Scalar(int v) : Scalar(static_cast<int64_t>(v)) {}
  Scalar(bool v) : kind_(Kind::Bool), d_(v ? 1.0 : 0.0), i_(v ? 1 : 0) {}
  Kind kind() const { return kind_; }
  double to_double() const { return d_; }
  int64_t to_int() const { return i_; }
  bool is_float() const { return kind_ == Kind::Float; }
  // The dtype a tensor of this scalar alone would get.
  Dtype natural_dtype() const {
    return kind_ == Kind::Float ? Dtype::Float32 : kind_ == Kind::Int ? Dtype::Int64 : Dtype::Bool;
  }

 private:
  Kind kind_;
  double d_;
  int64_t i_;
};

}  // namespace st
