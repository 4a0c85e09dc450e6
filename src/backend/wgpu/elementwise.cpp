// Elementwise entries of the wgpu backend: binary, unary, copy, fill, where
// (kernels/elementwise.wgsl; scalar maths in kernels/math.wgsl).
#include "backend/wgpu/kernels.h"

#include <array>
#include <cctype>
#include <type_traits>

#include "backend/common/loop_plan.h"
#include "spiraltorch/error.h"

namespace st::backend::wgpu {

using backend::BinaryOp;
using backend::UnaryOp;

namespace {

// How an elementwise kernel indexes operand t over the output's shape: 'f' contiguous in that
// shape (element i at offset + i), 's' one element broadcast (offset), 't' a contiguous trailing
// block broadcast over leading dimensions (offset + i % block: a bias row), 'n' N-d strided.
// Read from t's loop plan against a contiguous output (backend/common/loop_plan.h): one run of
// stride 1, stride 0 everywhere, or a broadcast outer dimension around a contiguous inner one.
char access(const Tensor& t, const Shape& shape, int64_t& block) {
  block = 1;
  if (shape.empty() || (t.is_contiguous() && t.shape() == shape)) return 'f';
  if (t.strides().size() != shape.size()) return 'n';
  const Shape out = contiguous_strides(shape);
  const backend::LoopPlan<2> plan = backend::plan_loop<2>(shape, {&out, &t.strides()});
  bool broadcast = true;
  for (const auto& s : plan.strides) broadcast &= s[1] == 0;
  if (broadcast) return 's';
  if (plan.nd() == 1 && plan.strides[0][1] == 1) return 'f';
  if (plan.nd() == 2 && plan.strides[0][1] == 0 && plan.strides[1][1] == 1) {
    block = plan.sizes[1];
    return 't';
  }
  return 'n';
}

// The fast indexing of every operand, or "" when some operand (or the output, the last one)
// needs the N-d strided indexing.
std::string fast_modes(const Shape& shape, const std::vector<const Tensor*>& ops, std::vector<int64_t>* blocks) {
  std::string modes;
  for (const Tensor* t : ops) {
    int64_t block;
    const char m = access(*t, shape, block);
    if (m == 'n') return "";
    modes += m;
    if (blocks) blocks->push_back(block);
  }
  if (modes.empty() || modes.back() != 'f') return "";
  return modes;
}

}  // namespace

std::vector<int32_t> strided_params(const Shape& shape, const std::vector<const Tensor*>& ops) {
  const int64_t n = shape_numel(shape);
  std::vector<int32_t> p{i32(n, "numel")};
  std::vector<int64_t> blocks;
  if (!fast_modes(shape, ops, &blocks).empty()) {  // one dimension of n; per operand (offset, block)
    p.push_back(1);
    p.push_back(i32(std::max<int64_t>(n, 1), "numel"));
    for (size_t k = 0; k < ops.size(); ++k) {
      p.push_back(elem_offset(*ops[k]));
      p.push_back(i32(blocks[k], "block"));
    }
    return p;
  }
  // N-d strided: the operands' joint loop plan (fewer dimensions to divide out per element).
  const auto push_plan = [&]<int N>(std::integral_constant<int, N>) {
    std::array<const Shape*, N> strides;
    for (int k = 0; k < N; ++k) strides[k] = &ops[k]->strides();
    const backend::LoopPlan<N> plan = backend::plan_loop<N>(shape, strides);
    p.push_back(plan.nd());
    for (int64_t s : plan.sizes) p.push_back(i32(s, "size"));
    for (int k = 0; k < N; ++k) {
      p.push_back(elem_offset(*ops[k]));
      for (const auto& s : plan.strides) p.push_back(i32(s[k], "stride"));
    }
  };
  switch (ops.size()) {
    case 1:
      push_plan(std::integral_constant<int, 1>{});
      break;
    case 2:
      push_plan(std::integral_constant<int, 2>{});
      break;
    case 3:
      push_plan(std::integral_constant<int, 3>{});
      break;
    case 4:
      push_plan(std::integral_constant<int, 4>{});
      break;
    default:
      throw ValueError("wgpu: strided_params takes 1 to 4 operands, got " + std::to_string(ops.size()));
  }
  return p;
}

namespace {

// Runs elementwise kernel `kernel` over `shape` (its P words from strided_params(shape, ops)
// plus extras). When every operand has a fast indexing (see access()), ix() is a switch over
// the operand with no N-d index arithmetic and each invocation takes four elements; else
// strided() and one element per invocation.
// `vec`: the kernel has a "<kernel>4" variant taking one vec4 per invocation (float32 operands
// and output; the caller checks the dtypes), used when every operand is fast-indexed with
// 4-aligned offsets and blocks and numel is a multiple of 4; `names` are its arrays per operand.
void ew_run(const std::string& kernel, const std::vector<Arg>& args, const std::vector<BufferRef>& buffers,
            const std::vector<int32_t>& params, const Shape& shape, const std::vector<const Tensor*>& ops,
            Subs subs = {}, bool vec = false, const std::vector<std::string>& names = {}) {
  const int64_t n = shape_numel(shape);
  const std::string modes = fast_modes(shape, ops, nullptr);
  if (vec && !modes.empty() && n % 4 == 0) {
    bool ok = true;
    for (size_t k = 0; k < modes.size(); ++k) {
      ok = ok && (modes[k] == 's' || (params[3 + 2 * k] % 4 == 0 && (modes[k] == 'f' || params[4 + 2 * k] % 4 == 0)));
    }
    if (ok) {
      for (size_t k = 0; k + 1 < modes.size(); ++k) {
        const std::string o = "P[" + std::to_string(3 + 2 * k) + "]", b = "P[" + std::to_string(4 + 2 * k) + "]";
        const std::string& N = names[k];
        std::string ld = modes[k] == 'f'   ? "return " + N + "[(" + o + " >> 2u) + q];"
                         : modes[k] == 's' ? "let o = " + o + "; return vec4<f32>(" + N + "[o >> 2u][o & 3]);"
                                           : "return " + N + "[(" + o + " + (4 * q) % " + b + ") >> 2u];";
        subs.emplace_back("LD" + std::string(1, static_cast<char>(std::toupper(N[1]))), ld);
      }
      Context& c = Context::require(kernel.c_str());
      c.launch(pipeline_for("elementwise", kernel + "4", {}, subs, static_cast<int>(buffers.size())), buffers, params,
               n / 4);
      return;
    }
  }
  const int64_t ept = modes.empty() ? 1 : 4;
  std::string ix = "return strided(i, k);";
  if (!modes.empty()) {
    ix = "switch k {";
    for (size_t k = 0; k < modes.size(); ++k) {
      const std::string o = "P[" + std::to_string(3 + 2 * k) + "]", b = "P[" + std::to_string(4 + 2 * k) + "]";
      const std::string e = modes[k] == 'f' ? o + " + i" : modes[k] == 's' ? o : o + " + i % " + b;
      ix += (k + 1 == modes.size() ? " default: { return " : " case " + std::to_string(k) + ": { return ") + e + "; }";
    }
    ix += " }";
  }
  subs.emplace_back("IX", ix);
  subs.emplace_back("EPT", std::to_string(ept));
  run("elementwise", kernel, args, buffers, params, (n + ept - 1) / ept, subs);
}

std::string binary_expr(BinaryOp op, bool f) {
  switch (op) {
    case BinaryOp::Add:
      return "a + b";
    case BinaryOp::Sub:
      return "a - b";
    case BinaryOp::Mul:
      return "a * b";
    case BinaryOp::Div:
      return f ? "a / b" : "select(a / b, 0, b == 0)";
    case BinaryOp::FloorDiv:
      return f ? "f_floordiv(a, b)" : "i_floordiv(a, b)";
    case BinaryOp::Rem:
      return f ? "f_rem(a, b)" : "i_rem(a, b)";
    case BinaryOp::Pow:
      return f ? "f_pow(a, b)" : "i_pow(a, b)";
    case BinaryOp::Min:
      return f ? "f_min(a, b)" : "min(a, b)";
    case BinaryOp::Max:
      return f ? "f_max(a, b)" : "max(a, b)";
    case BinaryOp::Atan2:
      return "atan2(a, b)";
    case BinaryOp::ReluGrad:
      return f ? "select(0.0, a, b > 0.0)" : "select(0, a, b > 0)";
    case BinaryOp::GeluGrad:
      return "f_gelu_grad(a, b)";
    case BinaryOp::GeluTanhGrad:
      return "f_gelu_tanh_grad(a, b)";
    case BinaryOp::Eq:
      return "select(0, 1, a == b)";
    case BinaryOp::Ne:
      return "select(0, 1, a != b)";
    case BinaryOp::Lt:
      return "select(0, 1, a < b)";
    case BinaryOp::Le:
      return "select(0, 1, a <= b)";
    case BinaryOp::Gt:
      return "select(0, 1, a > b)";
    case BinaryOp::Ge:
      return "select(0, 1, a >= b)";
    case BinaryOp::And:
      return f ? "select(0, 1, a != 0.0 && b != 0.0)" : "select(0, 1, a != 0 && b != 0)";
    case BinaryOp::Or:
      return f ? "select(0, 1, a != 0.0 || b != 0.0)" : "select(0, 1, a != 0 || b != 0)";
    case BinaryOp::Xor:
      return f ? "select(0, 1, (a != 0.0) != (b != 0.0))" : "select(0, 1, (a != 0) != (b != 0))";
  }
  return "";
}

// The expression of a unary op over v (domain f32 when f), or "" when the op has none there.
std::string unary_expr(UnaryOp op, bool f) {
  if (!f) {
    switch (op) {
      case UnaryOp::Neg:
        return "-v";
      case UnaryOp::Abs:
        return "abs(v)";
      case UnaryOp::Sign:
        return "sign(v)";
      case UnaryOp::Square:
        return "v * v";
      case UnaryOp::Relu:
        return "max(v, 0)";
      case UnaryOp::Floor:
      case UnaryOp::Ceil:
      case UnaryOp::Round:
      case UnaryOp::Trunc:
        return "v";
      case UnaryOp::Clamp:
        return "i_clamp(v, p0, p1)";
      case UnaryOp::Not:
        return "select(0, 1, v == 0)";
      case UnaryOp::IsNan:
      case UnaryOp::IsInf:
        return "0";
      case UnaryOp::IsFinite:
        return "1";
      default:
        return "";
    }
  }
  switch (op) {
    case UnaryOp::Neg:
      return "-v";
    case UnaryOp::Abs:
      return "abs(v)";
    case UnaryOp::Sign:
      return "f_sign(v)";
    case UnaryOp::Exp:
      return "exp(v)";
    case UnaryOp::Log:
      return "log(v)";
    case UnaryOp::Log1p:
      return "f_log1p(v)";
    case UnaryOp::Expm1:
      return "f_expm1(v)";
    case UnaryOp::Sqrt:
      return "sqrt(v)";
    case UnaryOp::Rsqrt:
      return "1.0 / sqrt(v)";
    case UnaryOp::Square:
      return "v * v";
    case UnaryOp::Reciprocal:
      return "1.0 / v";
    case UnaryOp::Sin:
      return "sin(v)";
    case UnaryOp::Cos:
      return "cos(v)";
    case UnaryOp::Tan:
      return "tan(v)";
    case UnaryOp::Tanh:
      return "f_tanh(v)";
    case UnaryOp::Atanh:
      return "f_atanh(v)";
    case UnaryOp::Sigmoid:
      return "f_sigmoid(v)";
    case UnaryOp::Relu:
      return "select(select(0.0, v, v > 0.0), v, is_nan(v))";
    case UnaryOp::Gelu:
      return "f_gelu(v)";
    case UnaryOp::GeluTanh:
      return "f_gelu_tanh(v)";
    case UnaryOp::Silu:
      return "v * f_sigmoid(v)";
    case UnaryOp::Softplus:
      return "f_softplus(v, p0, p1)";
    case UnaryOp::LeakyRelu:
      return "select(v * p0, v, v > 0.0)";
    case UnaryOp::Elu:
      return "select(p0 * f_expm1(v), v, v > 0.0)";
    case UnaryOp::Floor:
      return "floor(v)";
    case UnaryOp::Ceil:
      return "ceil(v)";
    case UnaryOp::Round:
      return "round(v)";
    case UnaryOp::Trunc:
      return "trunc(v)";
    case UnaryOp::Not:
      return "select(0, 1, v == 0.0)";
    case UnaryOp::IsNan:
      return "select(0, 1, is_nan(v))";
    case UnaryOp::IsInf:
      return "select(0, 1, is_inf(v))";
    case UnaryOp::IsFinite:
      return "select(0, 1, !is_nan(v) && !is_inf(v))";
    case UnaryOp::Clamp:
      return "f_clamp(v, p0, p1)";
    case UnaryOp::Erf:
      return "f_erf(v)";
  }
  return "";
}

bool unary_to_bool(UnaryOp op) {
  return op == UnaryOp::Not || op == UnaryOp::IsNan || op == UnaryOp::IsInf || op == UnaryOp::IsFinite;
}

}  // namespace

void binary(BinaryOp op, const Tensor& a, const Tensor& b, Tensor& out) {
  check_dtype("binary", a.dtype());
  check_dtype("binary", out.dtype());
  if (out.numel() == 0) return;
  const bool f = is_float_domain(a.dtype());
  const bool cmp = backend::is_comparison(op);
  if (!f && (op == BinaryOp::Atan2 || op == BinaryOp::GeluGrad || op == BinaryOp::GeluTanhGrad)) {
    throw DtypeError(std::string("wgpu.binary: this op needs a floating dtype, got ") + dtype_name(a.dtype()));
  }
  const std::string d = f ? "f" : "i";
  const bool vec = a.dtype() == Dtype::Float32 && b.dtype() == Dtype::Float32 && out.dtype() == Dtype::Float32;
  ew_run("binary", {{"a", a.dtype()}, {"b", b.dtype()}, {"out", out.dtype(), true}}, {ref(a), ref(b), ref(out)},
         strided_params(out.shape(), {&a, &b, &out}), out.shape(), {&a, &b, &out},
         {{"D", d}, {"O", cmp ? "i" : d}, {"EXPR", binary_expr(op, f)}}, vec, {"VA", "VB", "VO"});
}

void unary(UnaryOp op, const Tensor& x, Tensor& out, double p0, double p1) {
  check_dtype("unary", x.dtype());
  check_dtype("unary", out.dtype());
  if (out.numel() == 0) return;
  bool f = is_float_domain(x.dtype());
  std::string e = unary_expr(op, f);
  if (e.empty()) {  // integer input to a floating op: the op layer gives a floating out
    f = true;
    e = unary_expr(op, true);
  }
  auto params = strided_params(out.shape(), {&x, &out});
  const int32_t px = static_cast<int32_t>(params.size());
  params.push_back(fbits(p0));
  params.push_back(fbits(p1));
  const std::string d = f ? "f" : "i";
  const bool vec = f && x.dtype() == Dtype::Float32 && out.dtype() == Dtype::Float32;
  ew_run("unary", {{"x", x.dtype()}, {"out", out.dtype(), true}}, {ref(x), ref(out)}, params, out.shape(), {&x, &out},
         {{"D", d}, {"O", unary_to_bool(op) ? "i" : d}, {"EXPR", e}, {"PX", std::to_string(px)}}, vec, {"VX", "VO"});
}

void copy_on_device(const Tensor& src, Tensor& dst) {
  check_dtype("copy", src.dtype());
  check_dtype("copy", dst.dtype());
  if (dst.numel() == 0) return;
  if (src.dtype() == dst.dtype() && src.is_contiguous() && dst.is_contiguous() && src.shape() == dst.shape()) {
    // Same bytes: a buffer-to-buffer copy (WebGPU needs 4-byte aligned offsets and sizes).
    const size_t nbytes = static_cast<size_t>(dst.numel()) * dst.itemsize();
    Context& c = Context::require("copy");
    const BufferRef s = c.resolve(src.raw_data()), d = c.resolve(dst.raw_data());
    // 16-byte aligned on a GPU: a vec4 compute copy (on NVIDIA's Vulkan driver about 3x the
    // bandwidth of a buffer-to-buffer copy command); else, 4-byte aligned, a copy command (a
    // memcpy on a CPU adapter; WebGPU copies only between distinct buffers).
    if (s.offset % 16 == 0 && d.offset % 16 == 0 && nbytes % 16 == 0 && !c.cpu_adapter()) {
      const int64_t words = static_cast<int64_t>(nbytes / 16);
      c.launch(pipeline_for("elementwise", "copy16", {}, {}, 2), {s, d},
               {i32(words, "words"), i32(static_cast<int64_t>(s.offset / 16), "offset"),
                i32(static_cast<int64_t>(d.offset / 16), "offset")},
               words);
      return;
    }
    if (s.buffer != d.buffer && s.offset % 4 == 0 && d.offset % 4 == 0 && nbytes % 4 == 0) {
      c.copy_bytes(src.raw_data(), dst.raw_data(), nbytes);
      return;
    }
  }
  auto params = strided_params(dst.shape(), {&src, &dst});
  if (src.dtype() == Dtype::Int64 && dst.dtype() == Dtype::Int64) {
    ew_run("copy64", {{"x", src.dtype()}, {"out", dst.dtype(), true}}, {ref(src), ref(dst)}, params, dst.shape(),
           {&src, &dst});
    return;
  }
  const bool f = is_float_domain(dst.dtype()) || (dst.dtype() == Dtype::Bool && is_float_domain(src.dtype())) ||
                 (is_float_domain(src.dtype()) && src.dtype() == dst.dtype());
  ew_run("copy", {{"x", src.dtype()}, {"out", dst.dtype(), true}}, {ref(src), ref(dst)}, params, dst.shape(),
         {&src, &dst}, {{"D", f ? "f" : "i"}});
}

void fill(Tensor& dst, Scalar value) {
  check_dtype("fill", dst.dtype());
  if (dst.numel() == 0) return;
  auto params = strided_params(dst.shape(), {&dst});
  const bool f = is_float_domain(dst.dtype());
  if (f) {
    params.push_back(fbits(value.to_double()));
  } else {
    const int64_t v = dst.dtype() == Dtype::Bool ? (value.to_double() != 0) : value.to_int();
    params.push_back(i32(v, "fill value"));
  }
  ew_run("fill", {{"out", dst.dtype(), true}}, {ref(dst)}, params, dst.shape(), {&dst},
         {{"ISF", f ? "true" : "false"}});
}

void where(const Tensor& cond, const Tensor& a, const Tensor& b, Tensor& out) {
  check_dtype("where", out.dtype());
  if (out.numel() == 0) return;
  const bool f = is_float_domain(out.dtype());
  ew_run("where", {{"c", cond.dtype()}, {"a", a.dtype()}, {"b", b.dtype()}, {"out", out.dtype(), true}},
         {ref(cond), ref(a), ref(b), ref(out)}, strided_params(out.shape(), {&cond, &a, &b, &out}), out.shape(),
         {&cond, &a, &b, &out}, {{"D", f ? "f" : "i"}});
}

}  // namespace st::backend::wgpu
