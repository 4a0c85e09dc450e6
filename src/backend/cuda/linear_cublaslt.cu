// nn.Linear's bias inside cuBLASLt's GEMM epilogue: the forward adds the bias as the product is
// written (CUBLASLT_EPILOGUE_BIAS), so the broadcast add is not a kernel of its own. The bias
// gradient, the output gradient's column sums, is bias_grad's one read of it (column_sums.cuh):
// cuBLASLt's BGRADB epilogue ran the same sum as a separate, slower kernel after the GEMM.
//
// Row-major (m, n) = (m, k) x (n, k)^T is column-major (n, m) = (k, n)^T x (k, m): cuBLASLt sees
// A = w (op T), B = x (op N), D rows = n = the bias length. The weight gradient dw (n, k) = dy^T x
// is column-major (k, n) = x (k, m) x dy^T with B = dy (op T): D has n columns, the bias gradient's
// length, summed over the GEMM's k = m rows.
//
// The feed-forward block's first linear and its GELU (tanh approximation, cuBLASLt's) share one
// GEMM (CUBLASLT_EPILOGUE_GELU_AUX_BIAS: the activation and, as the auxiliary output, the
// pre-activation the backward needs); the second linear's input gradient applies GELU's derivative
// to the product as it is written (CUBLASLT_EPILOGUE_DGELU): neither the activation nor its backward
// is a kernel of its own. The first bias's gradient is bias_grad's, as nn.Linear's is.
//
// Without a bias the same GEMMs run with the default epilogue. Under autocast the weight gradient of
// float16/bfloat16 operands is written in float32 (D and the bias gradient float32, products and
// sums accumulated in float32 as always): the master weights' gradients come out of the GEMM unrounded.
#include <algorithm>
#include <array>
#include <atomic>
#include <limits>
#include <memory>
#include <mutex>
#include <span>
#include <unordered_map>

#include "backend/cuda/column_sums.cuh"
#include "backend/cuda/common.cuh"
#include "backend/cuda/kernels.h"
#include "backend/cuda/plan_key.h"
#ifdef SPIRALTORCH_HAVE_CUBLAS
#include <cublasLt.h>
#endif

namespace st::backend::cuda {
namespace {
std::atomic<bool> g_tuning{false};
}  // namespace
}  // namespace st::backend::cuda

namespace st::cuda {
bool gemm_tuning() { return backend::cuda::g_tuning.load(std::memory_order_relaxed); }
void set_gemm_tuning(bool on) { backend::cuda::g_tuning.store(on, std::memory_order_relaxed); }
}  // namespace st::cuda

namespace st::backend::cuda {

#ifndef SPIRALTORCH_HAVE_CUBLAS

bool linear_bias(const Tensor&, const Tensor&, const Tensor&, Tensor&) { return false; }
bool linear_bias_backward_weight(const Tensor&, const Tensor&, Tensor&, Tensor&, bool) { return false; }
bool linear_bias_gelu(const Tensor&, const Tensor&, const Tensor&, Tensor&, Tensor&) { return false; }
bool linear_gelu_backward_input(const Tensor&, const Tensor&, const Tensor&, Tensor&) { return false; }

#else

namespace {

void check(cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS) {
    throw SpiralError(std::string("linear (cuBLASLt): ") + what + " failed with status " + std::to_string(s));
  }
}

cublasLtHandle_t lt_handle() {
  return device_handle<cublasLtHandle_t>([] {
    cublasLtHandle_t made = nullptr;
    check(cublasLtCreate(&made), "cublasLtCreate");
    return made;
  });
}

cudaDataType_t data_type(Dtype dt) {
  return dt == Dtype::Float32 ? CUDA_R_32F : dt == Dtype::Float16 ? CUDA_R_16F : CUDA_R_16BF;
}

// The workspace cuBLASLt's heuristics may plan with (its kernels for these shapes need little).
constexpr size_t kWorkspace = size_t{4} << 20;

// The operation of one call: compute type, transposes, epilogue, the bias (gradient) pointer and
// the GELU epilogues' auxiliary matrix (the pre-activation, of dt, leading dimension aux_ld).
struct Desc {
  cublasLtMatmulDesc_t op = nullptr;
  Desc(Dtype dt, cublasLtEpilogue_t epi, bool ta, bool tb, const void* bias, cudaDataType_t bias_type,
       const void* aux = nullptr, int64_t aux_ld = 0) {
    const bool tf32 = dt == Dtype::Float32 && st::cuda::allow_tf32();
    check(cublasLtMatmulDescCreate(&op, tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F, CUDA_R_32F),
          "cublasLtMatmulDescCreate");
    const cublasOperation_t opa = ta ? CUBLAS_OP_T : CUBLAS_OP_N, opb = tb ? CUBLAS_OP_T : CUBLAS_OP_N;
    check(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &opa, sizeof(opa)), "set TRANSA");
    check(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSB, &opb, sizeof(opb)), "set TRANSB");
    check(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof(epi)), "set EPILOGUE");
    if (bias != nullptr) {
      check(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof(bias)), "set BIAS");
      check(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &bias_type, sizeof(bias_type)),
            "set BIAS_DATA_TYPE");
    }
    if (aux != nullptr) {
      const cudaDataType_t aux_type = data_type(dt);
      check(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, &aux, sizeof(aux)),
            "set EPILOGUE_AUX_POINTER");
      check(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD, &aux_ld, sizeof(aux_ld)),
            "set EPILOGUE_AUX_LD");
      check(
          cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_DATA_TYPE, &aux_type, sizeof(aux_type)),
          "set EPILOGUE_AUX_DATA_TYPE");
    }
  }
  ~Desc() { cublasLtMatmulDescDestroy(op); }
  Desc(const Desc&) = delete;
  Desc& operator=(const Desc&) = delete;
};

// The matrix layouts of one GEMM shape and the algorithm chosen for it (immutable once made).
struct Layouts {
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, d = nullptr;
  cublasLtMatmulAlgo_t algo{};
  bool ok = false;
  ~Layouts() {
    if (a) cublasLtMatrixLayoutDestroy(a);
    if (b) cublasLtMatrixLayoutDestroy(b);
    if (d) cublasLtMatrixLayoutDestroy(d);
  }
};

using Key = PlanKey<8>;
using KeyHash = PlanKeyHash;

// One column-major GEMM D (rows x cols) = op(A) op(B) with an epilogue, A and B of dtype dt, D of
// dtype dd and the bias (gradient) of dtype db.
struct Shape {
  Dtype dt, dd, db;
  cublasLtEpilogue_t epi;
  bool ta, tb;
  int64_t rows, cols, k, lda, ldb, ldd;
};

// The candidates tuning times, the timed runs of each (after one untimed run; its median counts),
// and how much faster than the heuristic's first choice a candidate must time to replace it: one
// timing of close candidates swaps between processes, and a swap that is noise can cost more in
// the step than it saved in the timing.
constexpr int kCandidates = 8;
constexpr int kTimedRuns = 5;
constexpr float kMargin = 0.03f;

cublasStatus_t matmul(const Desc& desc, const Layouts& p, const cublasLtMatmulAlgo_t& algo, const void* a,
                      const void* b, void* d, void* ws, float beta) {
  const float one = 1.f;
  return cublasLtMatmul(lt_handle(), desc.op, &one, a, p.a, b, p.b, &beta, d, p.d, d, p.d, &algo, ws, kWorkspace,
                        stream());
}

// A timing event, destroyed with its scope.
struct TimingEvent {
  cudaEvent_t e = nullptr;
  TimingEvent() { ST_CUDA_CHECK(cudaEventCreate(&e)); }
  ~TimingEvent() { cudaEventDestroy(e); }
  TimingEvent(const TimingEvent&) = delete;
  TimingEvent& operator=(const TimingEvent&) = delete;
};

// The fastest of the heuristic's candidates on this call's operands, written to the call's own D
// (and epilogue outputs), which the call that follows rewrites; a call that accumulates into D
// (d null) is timed on a scratch matrix instead, and where that does not fit in memory the
// heuristic's first choice stands. Each timed run starts with a cold L2 (a buffer twice its size
// written in between, outside the timing, as Triton's do_bench does): in a training step the
// operands arrive from other kernels, not from the previous run of the same GEMM. Runs outside
// graph capture only.
cublasLtMatmulAlgo_t fastest(const Desc& desc, const Layouts& p, const Shape& s,
                             std::span<const cublasLtMatmulHeuristicResult_t> found, const void* a, const void* b,
                             void* d, Device device) {
  Tensor scratch;
  if (d == nullptr) {
    try {
      scratch = Tensor::empty({s.ldd * s.cols}, s.dd, device);
    } catch (const SpiralError&) {
      return found.front().algo;
    }
    d = scratch.raw_data();
  }
  const Tensor ws = Tensor::empty({static_cast<int64_t>(kWorkspace)}, Dtype::UInt8, device);
  Tensor flush;  // without room for it the runs are timed warm
  try {
    flush =
        Tensor::empty({2 * static_cast<int64_t>(st::cuda::properties(device.index).l2_cache)}, Dtype::UInt8, device);
  } catch (const SpiralError&) {
  }
  const std::array<TimingEvent, kTimedRuns> start, stop;
  // the median of kTimedRuns timed runs of `algo`, or infinity where it fails to launch
  const auto median_ms = [&](const cublasLtMatmulAlgo_t& algo) {
    if (matmul(desc, p, algo, a, b, d, ws.raw_data(), 0.f) != CUBLAS_STATUS_SUCCESS) {
      return std::numeric_limits<float>::infinity();
    }
    for (int i = 0; i < kTimedRuns; ++i) {
      if (flush.defined())
        ST_CUDA_CHECK(cudaMemsetAsync(flush.raw_data(), i, static_cast<size_t>(flush.numel()), stream()));
      ST_CUDA_CHECK(cudaEventRecord(start[i].e, stream()));
      check(matmul(desc, p, algo, a, b, d, ws.raw_data(), 0.f), "cublasLtMatmul (tuning)");
      ST_CUDA_CHECK(cudaEventRecord(stop[i].e, stream()));
    }
    ST_CUDA_CHECK(cudaEventSynchronize(stop[kTimedRuns - 1].e));
    std::array<float, kTimedRuns> ms{};
    for (int i = 0; i < kTimedRuns; ++i) ST_CUDA_CHECK(cudaEventElapsedTime(&ms[i], start[i].e, stop[i].e));
    std::nth_element(ms.begin(), ms.begin() + kTimedRuns / 2, ms.end());
    return ms[kTimedRuns / 2];
  };
  // The heuristic's first always launches; an algorithm that fails to launch is not a candidate.
  const float first_ms = median_ms(found.front().algo);
  float best_ms = first_ms * (1.f - kMargin);
  cublasLtMatmulAlgo_t best = found.front().algo;
  for (const auto& r : found.subspan(1)) {
    if (r.state != CUBLAS_STATUS_SUCCESS || r.workspaceSize > kWorkspace) continue;
    const float ms = median_ms(r.algo);
    if (ms < best_ms) best_ms = ms, best = r.algo;
  }
  return best;
}

// The layouts of `s` and its algorithm: the heuristic's first, or with tuning on (and the stream
// not being captured) the fastest of its first kCandidates timed on the call's operands a and b
// into its output d (null: the call accumulates into its output, which timing must not touch).
// Cached per (dtypes, TF32, tuning, epilogue, sizes, transposes); ok = false: cuBLASLt has no
// algorithm for it (the caller then declines).
std::shared_ptr<const Layouts> plan(const Desc& desc, const Shape& s, const void* a, const void* b, void* d,
                                    Device device) {
  const bool tf32 = s.dt == Dtype::Float32 && st::cuda::allow_tf32();
  const bool tuning = g_tuning.load(std::memory_order_relaxed);
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  ST_CUDA_CHECK(cudaStreamIsCapturing(stream(), &capture));
  const bool tune = tuning && capture == cudaStreamCaptureStatusNone;
  // the three dtypes (below 64 each), TF32, tuning and the transposes as one key field
  const int64_t types = static_cast<int64_t>(s.dt) << 16 | static_cast<int64_t>(s.dd) << 10 |
                        static_cast<int64_t>(s.db) << 4 | int64_t{tf32} << 3 | int64_t{tuning} << 2 |
                        int64_t{s.ta} << 1 | int64_t{s.tb};
  const Key key{{types, static_cast<int64_t>(s.epi), s.rows, s.cols, s.k, s.lda, s.ldb + (s.ldd << 32), device.index}};
  static std::mutex mu;
  static std::unordered_map<Key, std::shared_ptr<const Layouts>, KeyHash> cache;
  {
    std::lock_guard<std::mutex> lock(mu);
    if (auto it = cache.find(key); it != cache.end()) return it->second;
  }
  auto p = std::make_shared<Layouts>();
  const cudaDataType_t type = data_type(s.dt);
  check(cublasLtMatrixLayoutCreate(&p->a, type, s.ta ? s.k : s.rows, s.ta ? s.rows : s.k, s.lda), "layout A");
  check(cublasLtMatrixLayoutCreate(&p->b, type, s.tb ? s.cols : s.k, s.tb ? s.k : s.cols, s.ldb), "layout B");
  check(cublasLtMatrixLayoutCreate(&p->d, data_type(s.dd), s.rows, s.cols, s.ldd), "layout D");
  cublasLtMatmulPreference_t pref = nullptr;
  check(cublasLtMatmulPreferenceCreate(&pref), "cublasLtMatmulPreferenceCreate");
  const size_t ws = kWorkspace;
  cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof(ws));
  std::array<cublasLtMatmulHeuristicResult_t, kCandidates> results{};
  int found = 0;
  const cublasStatus_t status = cublasLtMatmulAlgoGetHeuristic(lt_handle(), desc.op, p->a, p->b, p->d, p->d, pref,
                                                               tune ? kCandidates : 1, results.data(), &found);
  cublasLtMatmulPreferenceDestroy(pref);
  if (status == CUBLAS_STATUS_SUCCESS && found > 0) {
    p->algo = tune && found > 1 ? fastest(desc, *p, s, std::span(results.data(), found), a, b, d, device)
                                : results.front().algo;
    p->ok = true;
  }
  // Under capture with tuning on, the untimed choice serves this call only: the shape is timed
  // when it next runs eagerly.
  if (tuning && !tune) return p;
  std::lock_guard<std::mutex> lock(mu);
  return cache.emplace(key, std::move(p)).first->second;
}

// Whether cuBLASLt takes these operands: each of dtype dt, contiguous, 16-byte aligned, int sizes;
// undefined tensors (no bias) are skipped.
bool takes(std::initializer_list<const Tensor*> ts, Dtype dt) {
  if (dt != Dtype::Float32 && dt != Dtype::Float16 && dt != Dtype::BFloat16) return false;
  for (const Tensor* t : ts) {
    if (!t->defined()) continue;
    if (t->dtype() != dt || !t->is_contiguous() || reinterpret_cast<uintptr_t>(t->raw_data()) % 16 != 0) return false;
    if (t->numel() == 0 || t->numel() > INT32_MAX) return false;
  }
  return true;
}

// D = op(A) op(B) (+ D when accumulate: beta 1, C = D).
void run(const Desc& desc, const Layouts& p, const void* a, const void* b, void* d, Device device,
         bool accumulate = false) {
  const Tensor ws = Tensor::empty({static_cast<int64_t>(kWorkspace)}, Dtype::UInt8, device);
  check(matmul(desc, p, p.algo, a, b, d, ws.raw_data(), accumulate ? 1.f : 0.f), "cublasLtMatmul");
}

}  // namespace

bool linear_bias(const Tensor& x, const Tensor& w, const Tensor& bias, Tensor& out) {
  const Dtype dt = x.dtype();
  const bool has_bias = bias.defined();
  if (x.dim() != 2 || w.dim() != 2 || (has_bias && bias.dim() != 1) || !takes({&x, &w, &bias, &out}, dt)) return false;
  const int64_t m = x.size(0), k = x.size(1), n = w.size(0);
  if (w.size(1) != k || (has_bias && bias.size(0) != n) || out.size(0) != m || out.size(1) != n || k % 4 != 0 ||
      n % 4 != 0) {
    return false;
  }
  const cublasLtEpilogue_t epi = has_bias ? CUBLASLT_EPILOGUE_BIAS : CUBLASLT_EPILOGUE_DEFAULT;
  const Desc desc(dt, epi, true, false, has_bias ? bias.raw_data() : nullptr, data_type(dt));
  const auto p = plan(desc, {dt, dt, dt, epi, true, false, n, m, k, k, k, n}, w.raw_data(), x.raw_data(),
                      out.raw_data(), x.device());
  if (!p->ok) return false;
  run(desc, *p, w.raw_data(), x.raw_data(), out.raw_data(), x.device());
  return true;
}

bool linear_bias_backward_weight(const Tensor& dy, const Tensor& x, Tensor& dw, Tensor& db, bool accumulate) {
  const Dtype dt = dy.dtype(), dd = dw.dtype();  // dd: dt, or float32 for half operands (master weights)
  const bool has_bias = db.defined();
  if (accumulate && has_bias) return false;  // the bias gradient is written, never added to
  if (dd != dt && !(dd == Dtype::Float32 && (dt == Dtype::Float16 || dt == Dtype::BFloat16))) return false;
  if (dy.dim() != 2 || x.dim() != 2 || dw.dim() != 2 || (has_bias && db.dim() != 1) || !takes({&dy, &x}, dt) ||
      !takes({&dw, &db}, dd)) {
    return false;
  }
  const int64_t m = x.size(0), k = x.size(1), n = dy.size(1);
  if (dy.size(0) != m || dw.size(0) != n || dw.size(1) != k || (has_bias && db.size(0) != n) || k % 4 != 0 ||
      n % (has_bias ? 8 : 4) != 0) {
    return false;
  }
  // dw column-major (k, n) = x (k, m) x dy^T; dy column-major is (n, m), ld n, op T.
  const cublasLtEpilogue_t epi = CUBLASLT_EPILOGUE_DEFAULT;
  const Desc desc(dt, epi, false, true, nullptr, data_type(dd));
  const auto p = plan(desc, {dt, dd, dd, epi, false, true, k, n, m, k, n, k}, x.raw_data(), dy.raw_data(),
                      accumulate ? nullptr : dw.raw_data(), x.device());
  if (!p->ok || (has_bias && !bias_grad(dy, db))) return false;
  run(desc, *p, x.raw_data(), dy.raw_data(), dw.raw_data(), x.device(), accumulate);
  return true;
}

bool linear_bias_gelu(const Tensor& x, const Tensor& w, const Tensor& bias, Tensor& out, Tensor& pre) {
  const Dtype dt = x.dtype();
  const bool has_bias = bias.defined();
  if (x.dim() != 2 || w.dim() != 2 || (has_bias && bias.dim() != 1) || !takes({&x, &w, &bias, &out, &pre}, dt)) {
    return false;
  }
  const int64_t m = x.size(0), k = x.size(1), n = w.size(0);
  if (w.size(1) != k || (has_bias && bias.size(0) != n) || out.shape() != pre.shape() || out.size(0) != m ||
      out.size(1) != n || k % 4 != 0 || n % 8 != 0) {  // the auxiliary matrix's leading dimension: a multiple of 8
    return false;
  }
  const cublasLtEpilogue_t epi = has_bias ? CUBLASLT_EPILOGUE_GELU_AUX_BIAS : CUBLASLT_EPILOGUE_GELU_AUX;
  const Desc desc(dt, epi, true, false, has_bias ? bias.raw_data() : nullptr, data_type(dt), pre.raw_data(), n);
  const auto p = plan(desc, {dt, dt, dt, epi, true, false, n, m, k, k, k, n}, w.raw_data(), x.raw_data(),
                      out.raw_data(), x.device());
  if (!p->ok) return false;
  run(desc, *p, w.raw_data(), x.raw_data(), out.raw_data(), x.device());
  return true;
}

bool linear_gelu_backward_input(const Tensor& dy, const Tensor& w, const Tensor& pre, Tensor& da) {
  const Dtype dt = dy.dtype();
  if (dy.dim() != 2 || w.dim() != 2 || pre.dim() != 2 || !takes({&dy, &w, &pre, &da}, dt)) return false;
  const int64_t m = dy.size(0), n2 = dy.size(1), n = w.size(1);
  if (w.size(0) != n2 || pre.size(0) != m || pre.size(1) != n || da.shape() != pre.shape() || n2 % 4 != 0 ||
      n % 8 != 0) {
    return false;
  }
  // da column-major (n, m) = w (n, n2) x dy (n2, m): w row-major (n2, n) is column-major (n, n2), op N.
  const cublasLtEpilogue_t epi = CUBLASLT_EPILOGUE_DGELU;
  const Desc desc(dt, epi, false, false, nullptr, data_type(dt), pre.raw_data(), n);
  const auto p = plan(desc, {dt, dt, dt, epi, false, false, n, m, n2, n, n2, n}, w.raw_data(), dy.raw_data(),
                      da.raw_data(), dy.device());
  if (!p->ok) return false;
  run(desc, *p, w.raw_data(), dy.raw_data(), da.raw_data(), dy.device());
  return true;
}

#endif

}  // namespace st::backend::cuda
