// scaled_dot_product_attention's fused forward and backward through cuDNN's graph API (the
// header-only cudnn-frontend from PyPI's nvidia-cudnn-frontend): cuDNN's Hopper (wgmma/TMA) flash
// kernels, which the flash kernels of flash_attention.cuh (Ampere-style mma.sync) trail on sm_90.
//
// Taken: float16 / bfloat16 (B, H, rows, d) operands with a unit last stride, 16-byte aligned
// pointers and rows, d = dv a multiple of 8 up to 128, where cuDNN supports the graph on this
// device. One graph per (direction, dtype, sizes, strides, scale, causal, device), built once
// (cuDNN's heuristic plan) and kept; a graph cuDNN declines is remembered as declined, and the
// callers then run the flash kernels. cuDNN's Stats output is each row's natural log-sum-exp of
// the scaled, masked scores, the lse of Backend::flash_attention, so either backward can follow
// either forward.
#include "backend/cuda/attention_cudnn.h"

#ifdef SPIRALTORCH_HAVE_CUDNN_FRONTEND

#define CUDNN_FRONTEND_SKIP_JSON_LIB
// The frontend's headers carry NVRTC-compiled engines (other architectures' normalisations) that
// this file never runs; with dynamic loading their NVRTC calls resolve at run time, only if made,
// so the library needs no libnvrtc. cuDNN's own functions then resolve through cudnn_dlhandle
// (below): the libcudnn the library is linked against.
#define NV_CUDNN_FRONTEND_USE_DYNAMIC_LOADING
#include <cudnn_frontend.h>
#include <dlfcn.h>

#include <array>
#include <cstring>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "backend/cuda/cudnn_handle.h"
#include "backend/cuda/plan_key.h"
#include "spiraltorch/error.h"

namespace cudnn_frontend {
// Where the frontend looks up cuDNN's functions: the libcudnn this library links (already loaded,
// found by its soname; set before the first graph is built).
void* cudnn_dlhandle = nullptr;
}  // namespace cudnn_frontend

namespace st::backend::cuda {

namespace {

namespace fe = cudnn_frontend;

enum Uid : int64_t { kQ = 1, kK, kV, kO, kStats, kDO, kDQ, kDK, kDV };

// The operands of one call, (B, H, rows, d) each: q, k, v, o, and in the backward do, dq, dk, dv.
constexpr int kMaxOperands = 8;

using Key = PlanKey<10 + 3 * kMaxOperands>;

// A built graph and its workspace size; graph null where cuDNN declined these operands.
struct Plan {
  std::shared_ptr<fe::graph::Graph> graph;
  int64_t workspace = 0;
};

std::vector<int64_t> dims_of(const Tensor& t) { return {t.size(0), t.size(1), t.size(2), t.size(3)}; }
std::vector<int64_t> strides_of(const Tensor& t) {
  return {t.strides()[0], t.strides()[1], t.strides()[2], t.strides()[3]};
}

// Whether cuDNN can bind t as a (B, H, rows, d) operand: unit last stride, 16-byte aligned rows.
bool bindable(const Tensor& t) {
  if (t.dim() != 4 || t.strides()[3] != 1) return false;
  if (reinterpret_cast<uintptr_t>(t.raw_data()) % 16 != 0) return false;
  for (int i = 0; i < 3; ++i) {
    if (t.size(i) > 1 && t.strides()[i] % 8 != 0) return false;  // 8 half elements = 16 bytes
  }
  return true;
}

// The operand checks both directions share; q, k, v and o of one dtype.
bool takes(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& o, const Tensor& lse) {
  if (!st::cuda::cudnn_sdp_enabled()) return false;
  const Dtype dt = q.dtype();
  if (dt != Dtype::Float16 && dt != Dtype::BFloat16) return false;
  if (k.dtype() != dt || v.dtype() != dt || o.dtype() != dt || q.dim() != 4) return false;
  const int64_t d = q.size(3);
  if (d % 8 != 0 || d > 128 || k.size(3) != d || v.size(3) != d) return false;
  // Stats bind as a packed (B, H, L, 1) tensor (cuDNN before 9.26 requires it in the backward).
  if (lse.dtype() != Dtype::Float32 || lse.dim() != 3 || !lse.is_contiguous()) return false;
  return bindable(q) && bindable(k) && bindable(v) && bindable(o);
}

Key key_of(int direction, const Tensor& q, double scale, bool causal, std::initializer_list<const Tensor*> operands) {
  Key key;
  int n = 0;
  float s = static_cast<float>(scale);
  uint32_t scale_bits = 0;
  std::memcpy(&scale_bits, &s, sizeof(s));
  key.v[n++] = direction;
  key.v[n++] = static_cast<int64_t>(q.dtype());
  key.v[n++] = q.device().index;
  key.v[n++] = causal;
  key.v[n++] = scale_bits;
  for (const Tensor* t : operands) {
    key.v[n++] = t->size(2);  // rows: q/o/do L, k/v S; B, H and d are q's, below
    for (int i = 0; i < 3; ++i) key.v[n++] = t->strides()[i];
  }
  key.v[n++] = q.size(0);
  key.v[n++] = q.size(1);
  key.v[n++] = q.size(3);
  return key;
}

fe::DataType_t io_type(Dtype dt) { return dt == Dtype::Float16 ? fe::DataType_t::HALF : fe::DataType_t::BFLOAT16; }

std::shared_ptr<fe::graph::Tensor_attributes> operand(fe::graph::Graph& g, const char* name, Uid uid, const Tensor& t) {
  return g.tensor(
      fe::graph::Tensor_attributes().set_name(name).set_uid(uid).set_dim(dims_of(t)).set_stride(strides_of(t)));
}

void bind_output(const std::shared_ptr<fe::graph::Tensor_attributes>& a, Uid uid, const Tensor& t) {
  a->set_output(true).set_uid(uid).set_dim(dims_of(t)).set_stride(strides_of(t));
}

// Stats (B, H, L, 1), float32, packed: lse's layout.
void bind_stats(const std::shared_ptr<fe::graph::Tensor_attributes>& a, const Tensor& q, bool output) {
  const int64_t H = q.size(1), L = q.size(2);
  a->set_uid(kStats).set_data_type(fe::DataType_t::FLOAT).set_dim({q.size(0), H, L, 1}).set_stride({H * L, L, 1, 1});
  if (output) a->set_output(true);
}

// Validates and builds g for the current device; false where cuDNN does not support it.
bool build(fe::graph::Graph& g, int64_t& workspace) {
  static void* const lib = fe::cudnn_dlhandle = dlopen("libcudnn.so.9", RTLD_NOW | RTLD_NOLOAD);
  if (!lib) return false;
  cudnnHandle_t h = cudnn_handle();
  if (!g.validate().is_good() || !g.build_operation_graph(h).is_good()) return false;
  if (!g.create_execution_plans({fe::HeurMode_t::A}).is_good() || !g.check_support(h).is_good()) return false;
  if (!g.build_plans(h, fe::BuildPlanPolicy_t::HEURISTICS_CHOICE).is_good()) return false;
  return g.get_workspace_size(workspace).is_good();
}

std::shared_ptr<fe::graph::Graph> new_graph(Dtype dt) {
  auto g = std::make_shared<fe::graph::Graph>();
  g->set_io_data_type(io_type(dt))
      .set_intermediate_data_type(fe::DataType_t::FLOAT)
      .set_compute_data_type(fe::DataType_t::FLOAT);
  return g;
}

// The plan for key, built by make() on first use (null graph: declined). Building runs outside
// the lock; two threads racing on one key build twice and keep the first.
template <typename Make>
std::shared_ptr<const Plan> plan_for(const Key& key, Make make) {
  static std::mutex mu;
  static std::unordered_map<Key, std::shared_ptr<const Plan>, PlanKeyHash> cache;
  {
    std::lock_guard<std::mutex> lock(mu);
    if (auto it = cache.find(key); it != cache.end()) return it->second;
  }
  auto plan = std::make_shared<Plan>();
  try {  // the frontend throws where it cannot load a library it needs: declined, like unsupported
    auto g = make();
    if (g && build(*g, plan->workspace)) plan->graph = std::move(g);
  } catch (const std::exception&) {
    plan->graph = nullptr;
  }
  std::lock_guard<std::mutex> lock(mu);
  return cache.emplace(key, std::move(plan)).first->second;
}

void* ptr(const Tensor& t) { return t.raw_data(); }

void run(const Plan& plan, std::unordered_map<int64_t, void*>& pack, Device device, const char* what) {
  const Tensor ws = Tensor::empty({std::max<int64_t>(plan.workspace, 1)}, Dtype::UInt8, device);
  auto status = plan.graph->execute(cudnn_handle(), pack, ws.raw_data());
  if (!status.is_good()) throw SpiralError(std::string(what) + " (cuDNN): " + status.get_message());
}

}  // namespace

bool cudnn_attention_forward(const Tensor& q, const Tensor& k, const Tensor& v, double scale, bool causal, Tensor& o,
                             Tensor& lse) {
  if (!takes(q, k, v, o, lse)) return false;
  const auto plan = plan_for(key_of(0, q, scale, causal, {&q, &k, &v, &o}), [&] {
    auto g = new_graph(q.dtype());
    auto attrs = fe::graph::SDPA_attributes()
                     .set_name("sdpa")
                     .set_generate_stats(true)
                     .set_attn_scale(static_cast<float>(scale))
                     .set_causal_mask(causal);
    auto [out, stats] = g->sdpa(operand(*g, "q", kQ, q), operand(*g, "k", kK, k), operand(*g, "v", kV, v), attrs);
    bind_output(out, kO, o);
    bind_stats(stats, q, true);
    return g;
  });
  if (!plan->graph) return false;
  std::unordered_map<int64_t, void*> pack{{kQ, ptr(q)}, {kK, ptr(k)}, {kV, ptr(v)}, {kO, ptr(o)}, {kStats, ptr(lse)}};
  run(*plan, pack, q.device(), "scaled_dot_product_attention");
  return true;
}

bool cudnn_attention_backward(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& o, const Tensor& dout,
                              const Tensor& lse, double scale, bool causal, Tensor& dq, Tensor& dk, Tensor& dv) {
  if (!takes(q, k, v, o, lse) || dout.dtype() != q.dtype() || dq.dtype() != q.dtype() || dk.dtype() != q.dtype() ||
      dv.dtype() != q.dtype()) {
    return false;
  }
  if (!bindable(dout) || !bindable(dq) || !bindable(dk) || !bindable(dv)) return false;
  const auto plan = plan_for(key_of(1, q, scale, causal, {&q, &k, &v, &o, &dout, &dq, &dk, &dv}), [&] {
    auto g = new_graph(q.dtype());
    auto attrs = fe::graph::SDPA_backward_attributes()
                     .set_name("sdpa_backward")
                     .set_attn_scale(static_cast<float>(scale))
                     .set_causal_mask(causal);
    auto stats = g->tensor(fe::graph::Tensor_attributes().set_name("stats"));
    bind_stats(stats, q, false);
    auto [gq, gk, gv] = g->sdpa_backward(operand(*g, "q", kQ, q), operand(*g, "k", kK, k), operand(*g, "v", kV, v),
                                         operand(*g, "o", kO, o), operand(*g, "dO", kDO, dout), stats, attrs);
    bind_output(gq, kDQ, dq);
    bind_output(gk, kDK, dk);
    bind_output(gv, kDV, dv);
    return g;
  });
  if (!plan->graph) return false;
  std::unordered_map<int64_t, void*> pack{{kQ, ptr(q)},   {kK, ptr(k)},     {kV, ptr(v)},
                                          {kO, ptr(o)},   {kDO, ptr(dout)}, {kStats, ptr(lse)},
                                          {kDQ, ptr(dq)}, {kDK, ptr(dk)},   {kDV, ptr(dv)}};
  run(*plan, pack, q.device(), "scaled_dot_product_attention backward");
  return true;
}

bool cudnn_attention_built() { return true; }

}  // namespace st::backend::cuda

#else

namespace st::backend::cuda {

bool cudnn_attention_forward(const Tensor&, const Tensor&, const Tensor&, double, bool, Tensor&, Tensor&) {
  return false;
}
bool cudnn_attention_backward(const Tensor&, const Tensor&, const Tensor&, const Tensor&, const Tensor&, const Tensor&,
                              double, bool, Tensor&, Tensor&, Tensor&) {
  return false;
}
bool cudnn_attention_built() { return false; }

}  // namespace st::backend::cuda

#endif
