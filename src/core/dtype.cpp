#include "spiraltorch/dtype.h"

#include "spiraltorch/error.h"

namespace st {

size_t dtype_size(Dtype d) {
  switch (d) {
    case Dtype::Bool:
    case Dtype::UInt8:
      return 1;
    case Dtype::Float16:
    case Dtype::BFloat16:
      return 2;
    case Dtype::Int32:
    case Dtype::Float32:
      return 4;
    case Dtype::Int64:
    case Dtype::Float64:
      return 8;
  }
  return 0;
}

const char* dtype_name(Dtype d) {
  switch (d) {
    case Dtype::Bool:
      return "bool";
    case Dtype::UInt8:
      return "uint8";
    case Dtype::Int32:
      return "int32";
    case Dtype::Int64:
      return "int64";
    case Dtype::Float16:
      return "float16";
    case Dtype::BFloat16:
      return "bfloat16";
    case Dtype::Float32:
      return "float32";
    case Dtype::Float64:
      return "float64";
  }
  return "?";
}

Dtype dtype_from_name(const std::string& n) {
  if (n == "float32" || n == "float" || n == "f32") return Dtype::Float32;
  if (n == "float64" || n == "double" || n == "f64") return Dtype::Float64;
  if (n == "float16" || n == "half" || n == "f16") return Dtype::Float16;
  if (n == "bfloat16" || n == "bf16") return Dtype::BFloat16;
  if (n == "int64" || n == "long" || n == "i64") return Dtype::Int64;
  if (n == "int32" || n == "int" || n == "i32") return Dtype::Int32;
  if (n == "uint8" || n == "u8") return Dtype::UInt8;
  if (n == "bool") return Dtype::Bool;
  throw DtypeError("dtype: unknown dtype name '" + n + "'");
}

Dtype promote_types(Dtype a, Dtype b) {
  if (a == b) return a;
  // float16 with bfloat16 has no common 16-bit type: PyTorch gives float32.
  if (is_half(a) && is_half(b)) return Dtype::Float32;
  return a > b ? a : b;  // the enum is ordered by promotion rank
}

}  // namespace st
