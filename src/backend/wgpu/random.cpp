// Random fills and the dropout mask of the wgpu backend (kernels/random.wgsl): the CPU's
// Philox streams, so a seed gives the same tensor on either device.
#include "backend/wgpu/kernels.h"
#include "spiraltorch/error.h"

namespace st::backend::wgpu {

namespace {

// The uniform in [0, 1) of element i: the top 24 bits of its Philox word, like the CPU's float path.
constexpr const char* kUniform = "let b = philox(u32(i / 4)); let u = f32(b[i % 4] >> 8u) * (1.0 / 16777216.0);";

std::vector<int32_t> stream_params(const Tensor& out, uint64_t seed, uint64_t counter) {
  return {i32(out.numel(), "numel"),
          elem_offset(out),
          static_cast<int32_t>(seed & 0xffffffffu),
          static_cast<int32_t>(seed >> 32),
          static_cast<int32_t>(counter & 0xffffffffu),
          static_cast<int32_t>(counter >> 32)};
}

void check_float(const char* op, const Tensor& out) {
  check_dtype(op, out.dtype());
  if (!is_float_domain(out.dtype())) {
    throw DtypeError(std::string("wgpu.") + op + ": expected a floating dtype, got " + dtype_name(out.dtype()));
  }
}

}  // namespace

void random(Tensor& out, bool normal, double p0, double p1, uint64_t seed, uint64_t counter) {
  check_float("random", out);
  if (out.numel() == 0) return;
  auto params = stream_params(out, seed, counter);
  params.push_back(fbits(p0));
  params.push_back(fbits(p1));
  const std::string body = normal ? "let b = philox(u32(i / 2));\n"
                                    "  let u1 = (f32(b[0] >> 8u) + 1.0) * (1.0 / 16777217.0);\n"
                                    "  let u2 = f32(b[1] >> 8u) * (1.0 / 16777216.0);\n"
                                    "  let radius = sqrt(-2.0 * log(u1));\n"
                                    "  let angle = 6.283185307179586 * u2;\n"
                                    "  let z = select(radius * sin(angle), radius * cos(angle), i % 2 == 0);\n"
                                    "  stf_out(P[1] + i, pf(6) + pf(7) * z);"
                                  : std::string(kUniform) +
                                        "\n  var v = pf(6) + (pf(7) - pf(6)) * u;\n"
                                        "  if (v >= pf(7) && pf(7) > pf(6)) { v = bitcast<f32>(bitcast<u32>(pf(7)) + "
                                        "select(0xffffffffu, 1u, pf(7) < 0.0)); }\n"
                                        "  stf_out(P[1] + i, v);";
  run("random", "uniform", {{"out", out.dtype(), true}}, {ref(out)}, params, out.numel(), {{"BODY", body}});
}

void dropout_mask(Tensor& out, uint64_t seed, uint64_t counter, double scale, double keep) {
  check_float("dropout_mask", out);
  if (out.numel() == 0) return;
  auto params = stream_params(out, seed, counter);
  params.push_back(fbits(scale));
  params.push_back(fbits(keep));
  run("random", "uniform", {{"out", out.dtype(), true}}, {ref(out)}, params, out.numel(),
      {{"BODY", std::string(kUniform) + "\n  stf_out(P[1] + i, select(0.0, pf(6), u < pf(7)));"}});
}

void poisson(const Tensor& rates, Tensor& out, uint64_t seed, uint64_t counter) {
  check_float("poisson", out);
  if (out.numel() == 0) return;
  auto params = stream_params(out, seed, counter);
  params.push_back(elem_offset(rates));
  params.push_back(static_cast<int32_t>(backend::kPoissonRoundKey & 0xffffffffu));
  params.push_back(static_cast<int32_t>(backend::kPoissonRoundKey >> 32));
  run("random", "poisson", {{"rates", rates.dtype()}, {"out", out.dtype(), true}}, {ref(rates), ref(out)}, params,
      out.numel());
}

}  // namespace st::backend::wgpu
