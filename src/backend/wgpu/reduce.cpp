// Reductions of the wgpu backend (kernels/reduce.wgsl): sum/prod/max/min/any/all, arg
// max/min and cumsum.
#include <algorithm>
#include <limits>

#include "backend/wgpu/kernels.h"
#include "spiraltorch/error.h"

namespace st::backend::wgpu {

using backend::ReduceOp;
using backend::ScanOp;

namespace {

struct OpText {
  std::string t, id, comb, load;
};

OpText op_text(ReduceOp op, Dtype dt) {
  const bool f = is_float_domain(dt);
  const std::string d = f ? "f" : "i";
  const std::string T = f ? "f32" : "i32";
  const std::string ld = "ld" + d + "_x(k)";
  switch (op) {
    case ReduceOp::Sum:
      return {T, f ? "0.0" : "0", "a + b", ld};
    case ReduceOp::Prod:
      return {T, f ? "1.0" : "1", "a * b", ld};
    case ReduceOp::Max:
      return {T, f ? "-f_inf()" : "-2147483647 - 1", f ? "f_max(a, b)" : "max(a, b)", ld};
    case ReduceOp::Min:
      return {T, f ? "f_inf()" : "2147483647", f ? "f_min(a, b)" : "min(a, b)", ld};
    case ReduceOp::Any:
      return {"i32", "0", "max(a, b)", "select(0, 1, " + ld + (f ? " != 0.0)" : " != 0)")};
    case ReduceOp::All:
      return {"i32", "1", "min(a, b)", "select(0, 1, " + ld + (f ? " != 0.0)" : " != 0)")};
  }
  return {};
}

Subs op_subs(const OpText& t) {
  return {{"T", t.t}, {"ID", t.id}, {"COMB", t.comb}, {"LOAD", t.load}, {"O", t.t == "f32" ? "f" : "i"}};
}

// One pass: x (outer, r, inner) at element offset xoff -> out (outer, C, inner), chunks of L.
void pass(ReduceOp op, const Tensor& x, int32_t xoff, int64_t outer, int64_t r, int64_t inner, int64_t C, int64_t L,
          const Tensor& out, int32_t ooff) {
  const OpText t = op_text(op, x.dtype());
  const int64_t outputs = outer * C * inner;
  const std::vector<int32_t> p{i32(outputs, "outputs"),
                               i32(r, "reduced size"),
                               i32(inner, "inner size"),
                               i32(C, "chunks"),
                               i32(L, "chunk"),
                               xoff,
                               ooff};
  const Subs subs = op_subs(t);
  const std::vector<Arg> args{{"x", x.dtype()}, {"out", out.dtype(), true}};
  // One invocation per output when neighbouring invocations read neighbouring elements (inner >= 64)
  // or the reduced run is short; else one workgroup per output, a tree in workgroup memory.
  if (inner >= 64 || L <= 128) {
    run("reduce", "cols", args, {ref(x), ref(out)}, p, outputs, subs);
  } else {
    run("reduce", "rows", args, {ref(x), ref(out)}, p, outputs * 256, subs);
  }
}

// One pass of cols_tile (x (outer, r, inner) -> out (outer, inner)).
void tile_pass(ReduceOp op, const Tensor& x, int64_t outer, int64_t r, int64_t inner, const Tensor& out) {
  const OpText t = op_text(op, x.dtype());
  const std::vector<int32_t> p{
      i32(outer * inner, "outputs"), i32(r, "reduced size"), i32(inner, "inner size"), 1,
      i32(r, "reduced size"),        elem_offset(x),         elem_offset(out),         i32(outer, "outer size")};
  const Subs subs = op_subs(t);
  run("reduce", "cols_tile", {{"x", x.dtype()}, {"out", out.dtype(), true}}, {ref(x), ref(out)}, p,
      outer * ((inner + 15) / 16) * 256, subs);
}

}  // namespace

void reduce(ReduceOp op, const Tensor& x, int64_t outer, int64_t r, int64_t inner, Tensor& out) {
  check_dtype("reduce", x.dtype());
  check_dtype("reduce", out.dtype());
  if (out.numel() == 0) return;
  if (r == 0) {
    const OpText t = op_text(op, x.dtype());
    switch (op) {
      case ReduceOp::Sum:
      case ReduceOp::Any:
        return fill(out, Scalar(int64_t{0}));
      case ReduceOp::Prod:
      case ReduceOp::All:
        return fill(out, Scalar(int64_t{1}));
      default:
        throw ValueError("wgpu.reduce: max/min of an empty dimension");
    }
  }
  const int64_t outputs = outer * inner;
  // Long reductions with too few outputs to fill a GPU: a first pass into C partial results per
  // output, C chosen for about 2^18 invocations in flight (a workgroup per chunk when the
  // reduced axis is the contiguous one, an invocation per chunk otherwise) with chunks of at
  // least 2048 (resp. 64) elements; a second pass reduces the partials.
  const bool col_kernel = inner >= 64;
  const int64_t per_chunk = col_kernel ? 1 : 256, min_chunk = col_kernel ? 64 : 2048;
  const int64_t want = std::max<int64_t>(1, (int64_t{1} << 18) / std::max<int64_t>(outputs * per_chunk, 1));
  const int64_t C = std::min<int64_t>({want, r / min_chunk, 4096});
  if (C > 1 && col_kernel && r <= 1024) return tile_pass(op, x, outer, r, inner, out);
  if (C > 1) {
    const int64_t L = (r + C - 1) / C;
    const Dtype pd = op == ReduceOp::Any || op == ReduceOp::All ? Dtype::Int32
                     : is_float_domain(x.dtype())               ? Dtype::Float32
                                                                : Dtype::Int32;
    Tensor part = Tensor::empty({outer, C, inner}, pd, x.device());
    pass(op, x, elem_offset(x), outer, r, inner, C, L, part, elem_offset(part));
    // The partials of Any/All are 0/1 flags: combine them as Max/Min.
    const ReduceOp second = op == ReduceOp::Any ? ReduceOp::Max : op == ReduceOp::All ? ReduceOp::Min : op;
    pass(second, part, elem_offset(part), outer, C, inner, 1, C, out, elem_offset(out));
    return;
  }
  pass(op, x, elem_offset(x), outer, r, inner, 1, r, out, elem_offset(out));
}

void arg_reduce(bool is_max, const Tensor& x, int64_t outer, int64_t r, int64_t inner, Tensor& values,
                Tensor& indices) {
  check_dtype("arg_reduce", x.dtype());
  if (values.numel() == 0) return;
  const bool f = is_float_domain(x.dtype());
  const int64_t outputs = outer * inner;
  run("reduce", "arg", {{"x", x.dtype()}, {"values", values.dtype(), true}, {"indices", indices.dtype(), true}},
      {ref(x), ref(values), ref(indices)},
      {i32(outputs, "outputs"), i32(r, "reduced size"), i32(inner, "inner size"), is_max ? 1 : 0, elem_offset(x),
       elem_offset(values), elem_offset(indices)},
      outputs * 256, {{"T", f ? "f32" : "i32"}, {"D", f ? "f" : "i"}, {"NANQ", f ? "is_nan(v)" : "false"}});
}

void cumsum(const Tensor& x, int64_t outer, int64_t n, int64_t inner, Tensor& out) {
  check_dtype("cumsum", x.dtype());
  if (out.numel() == 0) return;
  const bool f = is_float_domain(x.dtype());
  run("reduce", "cumsum", {{"x", x.dtype()}, {"out", out.dtype(), true}}, {ref(x), ref(out)},
      {i32(outer * inner, "lines"), i32(n, "length"), i32(inner, "inner size"), elem_offset(x), elem_offset(out)},
      outer * inner, {{"T", f ? "f32" : "i32"}, {"D", f ? "f" : "i"}});
}

void scan(ScanOp op, const Tensor& x, int64_t outer, int64_t n, int64_t inner, Tensor& out, Tensor& indices) {
  check_dtype("scan", x.dtype());
  if (out.numel() == 0) return;
  const bool f = is_float_domain(x.dtype());
  const bool extreme = op == ScanOp::Max || op == ScanOp::Min;
  if (op == ScanOp::LogSumExp && !f) {
    throw DtypeError(std::string("wgpu.scan: logcumsumexp needs a floating dtype, got ") + dtype_name(x.dtype()));
  }
  const std::string nan_acc = f ? "is_nan(acc)" : "false", nan_v = f ? "is_nan(v)" : "false";
  std::string step;
  switch (op) {
    case ScanOp::Prod:
      step = "acc = acc * v;";
      break;
    case ScanOp::LogSumExp:
      step =
          "if (is_nan(acc) || is_nan(v)) { acc = acc + v; } else {\n"
          "      let hi = max(acc, v);\n"
          "      let lo = min(acc, v);\n"
          "      if (is_inf(hi)) { acc = hi; } else { acc = hi + log(1.0 + exp(lo - hi)); }\n"
          "    }";
      break;
    case ScanOp::Max:
    case ScanOp::Min:
      step = "if (" + nan_v + " || (!" + nan_acc + " && v " + (op == ScanOp::Max ? ">=" : "<=") +
             " acc)) { acc = v; at = j; }";
      break;
  }
  std::vector<Arg> args = {{"x", x.dtype()}, {"out", out.dtype(), true}};
  std::vector<BufferRef> buffers = {ref(x), ref(out)};
  if (extreme) {
    args.push_back({"indices", indices.dtype(), true});
    buffers.push_back(ref(indices));
  }
  run("reduce", "scan", args, buffers,
      {i32(outer * inner, "lines"), i32(n, "length"), i32(inner, "inner size"), elem_offset(x), elem_offset(out),
       extreme ? elem_offset(indices) : 0},
      outer * inner,
      {{"T", f ? "f32" : "i32"},
       {"D", f ? "f" : "i"},
       {"STEP", step},
       {"STORE_INDEX", extreme ? "sti_indices(P[5] + base, at);" : ""},
       {"STORE_INDEX_K", extreme ? "sti_indices(P[5] + k, at);" : ""}});
}

}  // namespace st::backend::wgpu
