#include "backend/wgpu/codegen.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <mutex>
#include <unordered_map>

#include "spiraltorch/error.h"

namespace st::backend::wgpu {

bool is_float_domain(Dtype d) {
  return d == Dtype::Float32 || d == Dtype::Float16 || d == Dtype::BFloat16 || d == Dtype::Float64;
}
const char* domain(Dtype d) { return is_float_domain(d) ? "f32" : "i32"; }

void check_dtype(const char* op, Dtype d) {
  if (d == Dtype::Float64) {
    throw DtypeError(std::string("wgpu.") + op +
                     ": float64 is not supported on the wgpu backend (WGSL has no 64-bit floats); use float32");
  }
}

namespace {

bool subword(Dtype d) { return d == Dtype::Bool || d == Dtype::UInt8 || d == Dtype::Float16 || d == Dtype::BFloat16; }

void replace_all(std::string& s, const std::string& from, const std::string& to) {
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size()))
    s.replace(at, from.size(), to);
}

// The text of `//@<kind> name` up to the next `//@kernel` or `//@part` marker.
std::string marked(const std::string& text, const std::string& family, const std::string& kind,
                   const std::string& name) {
  const std::string tag = "//@" + kind + " " + name + "\n";
  const size_t start = text.find(tag);
  if (start == std::string::npos)
    throw SpiralError("wgpu: " + kind + " " + family + "/" + name + " is not in the build");
  const size_t body = start + tag.size();
  const size_t end = std::min(text.find("//@kernel ", body), text.find("//@part ", body));
  return text.substr(body, end == std::string::npos ? std::string::npos : end - body);
}

// A kernel's text; each `//@use name` line in it becomes the family's `//@part name`, and each
// `//@use other/name` the part `name` of family `other` (shared module-scope helpers such as the
// workgroup row reductions or random.wgsl's Philox: WGSL has no includes).
std::string section(const std::string& family, const std::string& kernel) {
  const std::string text = kernel_file(family);
  std::string body = marked(text, family, "kernel", kernel);
  for (size_t at = body.find("//@use "); at != std::string::npos; at = body.find("//@use ", at)) {
    const size_t eol = body.find('\n', at);
    const std::string name = body.substr(at + 7, eol == std::string::npos ? std::string::npos : eol - at - 7);
    const size_t slash = name.find('/');
    const std::string part = slash == std::string::npos ? marked(text, family, "part", name)
                                                        : marked(kernel_file(name.substr(0, slash)),
                                                                 name.substr(0, slash), "part", name.substr(slash + 1));
    body.replace(at, eol == std::string::npos ? std::string::npos : eol + 1 - at, part);
    at += part.size();
  }
  return body;
}

// Typed access to one word buffer.
std::string accessors(const Arg& a, int binding) {
  const std::string n = a.name, B = "B_" + n;
  const bool atomic = a.write && subword(a.dtype);
  std::string s = "@group(0) @binding(" + std::to_string(binding) + ") var<storage, read_write> " + B +
                  (atomic ? ": array<atomic<u32>>;\n" : ": array<u32>;\n");
  const std::string W = atomic ? "atomicLoad(&" + B + "[j])" : B + "[j]";
  auto word = [&](const std::string& j) {
    std::string w = W;
    replace_all(w, "[j]", "[" + j + "]");
    return w;
  };
  std::string ldf, ldi;
  switch (a.dtype) {
    case Dtype::Float32:
    case Dtype::Float64:  // never bound (check_dtype), kept for exhaustiveness
      ldf = "bitcast<f32>(" + word("i") + ")";
      ldi = "i32(" + ldf + ")";
      break;
    case Dtype::Int32:
      ldi = "bitcast<i32>(" + word("i") + ")";
      ldf = "f32(" + ldi + ")";
      break;
    case Dtype::Int64:
      ldi = "bitcast<i32>(" + word("2 * i") + ")";
      ldf = "f32(" + ldi + ")";
      break;
    case Dtype::Bool:
    case Dtype::UInt8:
      ldi = "i32((" + word("i >> 2u") + " >> (u32(i & 3) * 8u)) & 0xffu)";
      ldf = "f32(" + ldi + ")";
      break;
    case Dtype::Float16:
      ldf = "unpack2x16float(" + word("i >> 1u") + ")[i & 1]";
      ldi = "i32(" + ldf + ")";
      break;
    case Dtype::BFloat16:
      ldf = "bitcast<f32>(((" + word("i >> 1u") + " >> (u32(i & 1) * 16u)) & 0xffffu) << 16u)";
      ldi = "i32(" + ldf + ")";
      break;
    default:
      throw DtypeError("wgpu: dtype " + std::string(dtype_name(a.dtype)) + " cannot be bound to a kernel");
  }
  s += "fn ldf_" + n + "(i: i32) -> f32 { return " + ldf + "; }\n";
  s += "fn ldi_" + n + "(i: i32) -> i32 { return " + ldi + "; }\n";
  if (!a.write) return s;
  // Sub-word stores merge into their word with atomics: each element has one writer, and
  // and/or on disjoint bits commute, so neighbours written by other invocations survive.
  auto merge = [&](const std::string& bits, const std::string& width) {
    return "  let sh = u32(i & " + std::string(width == "8" ? "3" : "1") + ") * " + width + "u;\n  atomicAnd(&" + B +
           "[i >> " + (width == "8" ? "2u" : "1u") + "], ~(" + (width == "8" ? "0xffu" : "0xffffu") +
           " << sh));\n  atomicOr(&" + B + "[i >> " + (width == "8" ? "2u" : "1u") + "], (" + bits + ") << sh);\n";
  };
  std::string stf, sti;
  switch (a.dtype) {
    case Dtype::Float32:
    case Dtype::Float64:
      stf = "  " + B + "[i] = bitcast<u32>(v);\n";
      sti = "  stf_" + n + "(i, f32(v));\n";
      break;
    case Dtype::Int32:
      sti = "  " + B + "[i] = bitcast<u32>(v);\n";
      stf = "  sti_" + n + "(i, i32(v));\n";
      break;
    case Dtype::Int64:
      sti = "  " + B + "[2 * i] = bitcast<u32>(v);\n  " + B + "[2 * i + 1] = bitcast<u32>(v >> 31u);\n";
      stf = "  sti_" + n + "(i, i32(v));\n";
      break;
    case Dtype::Bool:
      sti = merge("select(0u, 1u, v != 0)", "8");
      stf = merge("select(0u, 1u, v != 0.0)", "8");
      break;
    case Dtype::UInt8:
      sti = merge("u32(v) & 0xffu", "8");
      stf = "  sti_" + n + "(i, i32(v));\n";
      break;
    case Dtype::Float16:
      stf = merge("pack2x16float(vec2<f32>(v, 0.0)) & 0xffffu", "16");
      sti = "  stf_" + n + "(i, f32(v));\n";
      break;
    case Dtype::BFloat16:  // round to nearest even; NaN stays a quiet NaN
      stf =
          "  let u = bitcast<u32>(v);\n  let r = select((u + 0x7fffu + ((u >> 16u) & 1u)) >> 16u, 0x7fc0u, "
          "(u & 0x7fffffffu) > 0x7f800000u);\n" +
          merge("r", "16");
      sti = "  stf_" + n + "(i, f32(v));\n";
      break;
    default:
      break;
  }
  s += "fn stf_" + n + "(i: i32, v: f32) {\n" + stf + "}\n";
  s += "fn sti_" + n + "(i: i32, v: i32) {\n" + sti + "}\n";
  return s;
}

constexpr const char* kCommon = R"WGSL(
@group(0) @binding(0) var<storage, read> P: array<i32>;
fn pf(k: i32) -> f32 { return bitcast<f32>(P[k]); }
fn linear_id(wid: vec3<u32>, nw: vec3<u32>, lid: u32, wg: u32) -> i32 { return i32((wid.y * nw.x + wid.x) * wg + lid); }
fn is_nan(v: f32) -> bool { return (bitcast<u32>(v) & 0x7fffffffu) > 0x7f800000u; }
fn is_inf(v: f32) -> bool { return (bitcast<u32>(v) & 0x7fffffffu) == 0x7f800000u; }
fn f_nan() -> f32 { return bitcast<f32>(0x7fc00000u); }
fn f_inf() -> f32 { return bitcast<f32>(0x7f800000u); }
// The byte offset of element i of an N-d strided operand k: P = [n, nd, shape[nd], then per
// operand (offset, strides[nd])].
fn strided(i: i32, k: i32) -> i32 {
  let nd = P[1];
  let base = 2 + nd + k * (nd + 1);
  var off = P[base];
  var rem = i;
  for (var d = nd - 1; d >= 0; d = d - 1) {
    let s = P[2 + d];
    off = off + (rem % s) * P[base + 1 + d];
    rem = rem / s;
  }
  return off;
}
)WGSL";

}  // namespace

std::string wgsl(const std::string& family, const std::string& kernel, const std::vector<Arg>& args, const Subs& subs) {
  std::string s = kCommon;
  std::string math = kernel_file("math");
  s += math;
  for (size_t i = 0; i < args.size(); ++i) s += accessors(args[i], static_cast<int>(i + 1));
  std::string body = section(family, kernel);
  for (const auto& [k, v] : subs) replace_all(body, "{{" + k + "}}", v);
  return s + body;
}

BufferRef ref(const Tensor& t) {
  Context& c = Context::require("kernel");
  return c.resolve(t.storage()->data());
}

int32_t i32(int64_t v, const char* what) {
  if (v > INT32_MAX || v < INT32_MIN) {
    throw ValueError(std::string("wgpu: ") + what + " = " + std::to_string(v) +
                     " exceeds the 32-bit indexing of the wgpu kernels");
  }
  return static_cast<int32_t>(v);
}

int32_t elem_offset(const Tensor& t) {
  const BufferRef r = ref(t);
  return i32(static_cast<int64_t>(r.offset / t.itemsize()) + t.offset(), "element offset");
}

int32_t fbits(double v) {
  const float f = static_cast<float>(v);
  int32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}

WGPUComputePipeline pipeline_for(const std::string& family, const std::string& kernel, const std::vector<Arg>& args,
                                 const Subs& subs, int nbuffers) {
  // Keyed by what determines the text (family, kernel, buffer dtypes, substitutions), so an op
  // call on a hot path neither assembles nor hashes the whole module.
  std::string key;
  key.reserve(128);
  key += family;
  key += '/';
  key += kernel;
  for (const Arg& a : args) {
    key += '|';
    key += a.name;
    key += ':';
    key += std::to_string(static_cast<int>(a.dtype));
    key += a.write ? 'w' : 'r';
  }
  key += '#';
  key += std::to_string(nbuffers);
  for (const auto& [k, v] : subs) {
    key += '\x01';
    key += k;
    key += '=';
    key += v;
  }
  static std::mutex mu;
  static std::unordered_map<std::string, WGPUComputePipeline> cache;
  {
    std::lock_guard<std::mutex> lock(mu);
    if (auto it = cache.find(key); it != cache.end()) return it->second;
  }
  Context& c = Context::require(kernel.c_str());
  std::string label = family + "/" + kernel;
  for (const auto& [k, v] : subs) {
    if (k == "EXPR") label += " (" + v + ")";
  }
  const WGPUComputePipeline p =
      c.pipeline(wgsl(family, kernel, args, subs), nbuffers >= 0 ? nbuffers : static_cast<int>(args.size()), 0, label);
  std::lock_guard<std::mutex> lock(mu);
  cache.emplace(std::move(key), p);
  return p;
}

void run(const std::string& family, const std::string& kernel, const std::vector<Arg>& args,
         const std::vector<BufferRef>& buffers, const std::vector<int32_t>& params, int64_t threads, const Subs& subs,
         int64_t wg) {
  if (threads <= 0) return;
  Context& c = Context::require(kernel.c_str());
  c.launch(pipeline_for(family, kernel, args, subs), buffers, params, threads, wg);
}

}  // namespace st::backend::wgpu
