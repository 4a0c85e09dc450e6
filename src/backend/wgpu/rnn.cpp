// The fused LSTM / GRU recurrences of the wgpu backend: per time step one GEMM (gemm.cpp) for
// h_{t-1} W_hh^T and one pointwise kernel for the gates (kernels/rnn.wgsl); the backward mirrors
// it in reverse time. The CUDA backend's structure, formulas and saved tensors
// (src/backend/cuda/rnn.cu), float32 (WGSL has no float64).
#include "backend/wgpu/kernels.h"
#include "spiraltorch/error.h"

namespace st::backend::wgpu {

namespace {

constexpr Dtype F = Dtype::Float32;

// A float32 element of a device-virtual address: its buffer and element offset there.
struct Loc {
  BufferRef ref;
  int32_t off;
};
Loc loc(const void* va) {
  const BufferRef r = Context::require("rnn").resolve(va);
  return {r, i32(static_cast<int64_t>(r.offset / 4), "offset")};
}
// Device-virtual address arithmetic in float32 elements (never dereferenced on the host).
const char* at(const void* base, int64_t elems) { return static_cast<const char*>(base) + elems * 4; }
char* at(void* base, int64_t elems) { return static_cast<char*>(base) + elems * 4; }

// Row-major C (m x n) = op(A) op(B) + beta C.
void gemm1(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const void* a, int64_t lda, const void* b, int64_t ldb,
           double beta, void* c, int64_t ldc) {
  if (m == 0 || n == 0) return;
  gemm(F, ta, tb, m, n, k, 1.0, a, lda, 0, b, ldb, 0, beta, c, ldc, 0, 1);
}

void copy_elems(void* dst, const void* src, int64_t n) {
  if (n > 0) Context::require("rnn").copy_bytes(src, dst, static_cast<size_t>(n) * 4);
}

void require_float32(const Tensor& w, const char* op) {
  if (w.dtype() != F) {
    check_dtype(op, w.dtype());
    throw DtypeError(std::string("wgpu.") + op + ": expected float32, got " + dtype_name(w.dtype()));
  }
}

}  // namespace

void lstm_forward(const Tensor& xproj, const Tensor& w, const Tensor& h0, const Tensor& c0, Tensor& hc, Tensor& acts) {
  require_float32(w, "lstm_forward");
  const int64_t steps = xproj.shape()[0], B = xproj.shape()[1], H = w.shape()[1], G = 4 * H, BH = B * H;
  if (steps * BH == 0) return;
  run("rnn", "lstm_load_x", {{"x", F}, {"a", F, true}}, {ref(xproj), ref(acts)},
      {i32(steps * B * G, "numel"), i32(G, "gates"), i32(B, "batch"), i32(xproj.strides()[0], "stride"),
       i32(xproj.strides()[1], "stride"), elem_offset(xproj), elem_offset(acts)},
      steps * B * G);
  void* a = acts.raw_data();
  void* hs = hc.raw_data();
  void* cs = at(hs, steps * BH);
  for (int64_t t = 0; t < steps; ++t) {
    void* a_t = at(a, t * B * G);
    const void* hprev = t == 0 ? h0.raw_data() : at(hs, (t - 1) * BH);
    const void* cprev = t == 0 ? c0.raw_data() : at(cs, (t - 1) * BH);
    gemm1(false, true, B, G, H, hprev, H, w.raw_data(), H, 1.0, a_t, G);
    const Loc la = loc(a_t), lh = loc(hprev), lc = loc(cprev), ho = loc(at(hs, t * BH)), co = loc(at(cs, t * BH));
    run("rnn", "lstm_gates", {{"a", F, true}, {"hp", F}, {"cp", F}, {"h", F, true}, {"c", F, true}},
        {la.ref, lh.ref, lc.ref, ho.ref, co.ref}, {i32(BH, "B*H"), i32(H, "H"), la.off, lh.off, lc.off, ho.off, co.off},
        BH);
  }
}

void lstm_backward(const Tensor& g, const Tensor& hc, const Tensor& acts, const Tensor& w, const Tensor& h0,
                   const Tensor& c0, Tensor& dx, Tensor& dw, Tensor& dh0, Tensor& dc0) {
  require_float32(w, "lstm_backward");
  const int64_t steps = hc.shape()[1], B = hc.shape()[2], H = hc.shape()[3], G = 4 * H, BH = B * H;
  Tensor dc_t = Tensor::empty({B, H}, F, w.device()), dhrec_t = Tensor::empty({B, H}, F, w.device());
  fill(dc_t, Scalar(0.0));
  fill(dhrec_t, Scalar(0.0));
  if (steps * BH > 0) {
    const void* gh = g.raw_data();
    const void* gc = at(gh, steps * BH);
    const void* cs = at(hc.raw_data(), steps * BH);
    for (int64_t t = steps - 1; t >= 0; --t) {
      const void* cprev = t == 0 ? c0.raw_data() : at(cs, (t - 1) * BH);
      void* dgates = at(dx.raw_data(), t * B * G);
      const Loc la = loc(at(acts.raw_data(), t * B * G)), lct = loc(at(cs, t * BH)), lcp = loc(cprev),
                lgh = loc(at(gh, t * BH)), lgc = loc(at(gc, t * BH)), ld = loc(dgates), ldc = loc(dc_t.raw_data()),
                ldh = loc(dhrec_t.raw_data());
      run("rnn", "lstm_back_gates",
          {{"a", F}, {"hc", F}, {"cp", F}, {"g", F}, {"d", F, true}, {"dc", F, true}, {"dhrec", F}},
          {la.ref, lct.ref, lcp.ref, lgh.ref, ld.ref, ldc.ref, ldh.ref},
          {i32(BH, "B*H"), i32(H, "H"), la.off, lct.off, lcp.off, lgh.off, lgc.off, ld.off, ldc.off, ldh.off}, BH);
      gemm1(false, false, B, H, G, dgates, G, w.raw_data(), H, 0.0, dhrec_t.raw_data(), H);  // dh_{t-1}
    }
  }
  if (dh0.defined()) copy_elems(dh0.raw_data(), dhrec_t.raw_data(), BH);
  if (dc0.defined()) copy_elems(dc0.raw_data(), dc_t.raw_data(), BH);
  if (dw.defined()) {  // dW = sum_t dgates_t^T h_{t-1}
    if (steps * B == 0) return fill(dw, Scalar(0.0));
    gemm1(true, false, G, H, B, dx.raw_data(), G, h0.raw_data(), H, 0.0, dw.raw_data(), H);
    if (steps > 1) {
      gemm1(true, false, G, H, (steps - 1) * B, at(dx.raw_data(), B * G), G, hc.raw_data(), H, 1.0, dw.raw_data(), H);
    }
  }
}

void gru_forward(const Tensor& xproj, const Tensor& w, const Tensor& bhh, const Tensor& h0, Tensor& hs_out,
                 Tensor& saved) {
  require_float32(w, "gru_forward");
  const int64_t steps = xproj.shape()[0], B = xproj.shape()[1], H = w.shape()[1], G = 3 * H, S = 4 * H, BH = B * H;
  if (steps * BH == 0) return;
  const int64_t st_t = xproj.strides()[0], st_b = xproj.strides()[1];
  Tensor gh = Tensor::empty({B, G}, F, w.device());  // h_{t-1} W_hh^T of the current step
  const Tensor& bias = bhh.defined() ? bhh : w;      // an unread stand-in without a bias
  void* hs = hs_out.raw_data();
  for (int64_t t = 0; t < steps; ++t) {
    const void* hprev = t == 0 ? h0.raw_data() : at(hs, (t - 1) * BH);
    gemm1(false, true, B, G, H, hprev, H, w.raw_data(), H, 0.0, gh.raw_data(), G);
    const Loc lh = loc(hprev), ho = loc(at(hs, t * BH)), ls = loc(at(saved.raw_data(), t * B * S));
    run("rnn", "gru_gates", {{"x", F}, {"gh", F}, {"bias", F}, {"hp", F}, {"h", F, true}, {"s", F, true}},
        {ref(xproj), ref(gh), ref(bias), lh.ref, ho.ref, ls.ref},
        {i32(BH, "B*H"), i32(H, "H"), i32(elem_offset(xproj) + t * st_t, "offset"), i32(st_b, "stride"),
         elem_offset(gh), bhh.defined() ? 1 : 0, bhh.defined() ? elem_offset(bhh) : 0, lh.off, ho.off, ls.off},
        BH);
  }
}

void gru_backward(const Tensor& g, const Tensor& hs_in, const Tensor& saved, const Tensor& w, const Tensor& h0,
                  Tensor& dx, Tensor& dw, Tensor& dbhh, Tensor& dh0) {
  require_float32(w, "gru_backward");
  const int64_t steps = hs_in.shape()[0], B = hs_in.shape()[1], H = hs_in.shape()[2], G = 3 * H, S = 4 * H, BH = B * H;
  // dgh: the gradient w.r.t. h_{t-1} W_hh^T + b_hh per step (feeds dW and db); dhrec / next:
  // dh_t carried backwards (double-buffered).
  Tensor dgh = Tensor::empty({steps, B, G}, F, w.device());
  Tensor dhrec = Tensor::empty({B, H}, F, w.device()), next = Tensor::empty({B, H}, F, w.device());
  fill(dhrec, Scalar(0.0));
  for (int64_t t = steps - 1; t >= 0 && BH > 0; --t) {
    const void* hprev = t == 0 ? h0.raw_data() : at(hs_in.raw_data(), (t - 1) * BH);
    void* dgt = at(dgh.raw_data(), t * B * G);
    const Loc ls = loc(at(saved.raw_data(), t * B * S)), lh = loc(hprev), lg = loc(at(g.raw_data(), t * BH)),
              lr = loc(dhrec.raw_data()), ldx = loc(at(dx.raw_data(), t * B * G)), ldg = loc(dgt),
              ln = loc(next.raw_data());
    run("rnn", "gru_back_gates",
        {{"s", F}, {"hp", F}, {"go", F}, {"dr", F}, {"dx", F, true}, {"dg", F, true}, {"nx", F, true}},
        {ls.ref, lh.ref, lg.ref, lr.ref, ldx.ref, ldg.ref, ln.ref},
        {i32(BH, "B*H"), i32(H, "H"), ls.off, lh.off, lg.off, lr.off, ldx.off, ldg.off, ln.off}, BH);
    gemm1(false, false, B, H, G, dgt, G, w.raw_data(), H, 1.0, next.raw_data(), H);  // dh_{t-1} = dh_t z + dgh W
    std::swap(dhrec, next);
  }
  if (dh0.defined()) copy_elems(dh0.raw_data(), dhrec.raw_data(), BH);
  if (dw.defined()) {
    if (steps * B == 0) {
      fill(dw, Scalar(0.0));
    } else {
      gemm1(true, false, G, H, B, dgh.raw_data(), G, h0.raw_data(), H, 0.0, dw.raw_data(), H);
      if (steps > 1) {
        gemm1(true, false, G, H, (steps - 1) * B, at(dgh.raw_data(), B * G), G, hs_in.raw_data(), H, 1.0, dw.raw_data(),
              H);
      }
    }
  }
  if (dbhh.defined()) reduce(backend::ReduceOp::Sum, dgh, 1, steps * B, G, dbhh);
}

}  // namespace st::backend::wgpu
