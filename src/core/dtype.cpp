#include "spiraltorch/dtype.h"

#include "spiraltorch/error.h"

namespace st {

uint16_t Half::from_float(float f) {
  const uint32_t x = std::bit_cast<uint32_t>(f);
  const uint32_t sign = (x >> 16) & 0x8000u;
  const uint32_t absx = x & 0x7fffffffu;
  if (absx > 0x7f800000u) return static_cast<uint16_t>(sign | 0x7e00u);  // NaN
  if (absx >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // overflow -> inf
  if (absx < 0x38800000u) {  // subnormal half or zero
    if (absx < 0x33000000u) return static_cast<uint16_t>(sign);
    const uint32_t mant = (absx & 0x7fffffu) | 0x800000u;
    const int shift = 113 - static_cast<int>(absx >> 23) + 13;
    uint32_t v = mant >> shift;
    const uint32_t rem = mant & ((1u << shift) - 1);
    const uint32_t half = 1u << (shift - 1);
    if (rem > half || (rem == half && (v & 1u))) ++v;
    return static_cast<uint16_t>(sign | v);
  }
  uint32_t v = ((absx - 0x38000000u) >> 13);
  const uint32_t rem = absx & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (v & 1u))) ++v;
  return static_cast<uint16_t>(sign | v);
}

float Half::to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t mant = h & 0x3ffu;
  uint32_t bits;
  if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else {  // normalise a subnormal
      int e = -1;
      do {
        ++e;
        mant <<= 1;
      } while ((mant & 0x400u) == 0);
      bits = sign | (static_cast<uint32_t>(112 - e) << 23) | ((mant & 0x3ffu) << 13);
    }
  } else if (exp == 31) {
    bits = sign | 0x7f800000u | (mant << 13);
  } else {
    bits = sign | ((exp + 112) << 23) | (mant << 13);
  }
  return std::bit_cast<float>(bits);
}

size_t dtype_size(Dtype d) {
  switch (d) {
    case Dtype::Bool:
    case Dtype::UInt8: return 1;
    case Dtype::Float16:
    case Dtype::BFloat16: return 2;
    case Dtype::Int32:
    case Dtype::Float32: return 4;
    case Dtype::Int64:
    case Dtype::Float64: return 8;
  }
  return 0;
}

const char* dtype_name(Dtype d) {
  switch (d) {
    case Dtype::Bool: return "bool";
    case Dtype::UInt8: return "uint8";
    case Dtype::Int32: return "int32";
    case Dtype::Int64: return "int64";
    case Dtype::Float16: return "float16";
    case Dtype::BFloat16: return "bfloat16";
    case Dtype::Float32: return "float32";
    case Dtype::Float64: return "float64";
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
