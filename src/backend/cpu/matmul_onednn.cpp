#include "backend/cpu/matmul_onednn.h"

#include "backend/cpu/lru_cache.h"
#include "backend/cpu/onednn_common.h"

#include <string>

namespace st::backend::onednn {

#ifdef SPIRALTORCH_WITH_ONEDNN

namespace {

using detail::engine;
using detail::rethrow;
using detail::Staging;
using detail::stream;
using detail::user_scratchpad;
using MatmulKey = detail::Key<11>;
using MatmulKeyHash = detail::KeyHash<11>;

struct Entry {
  dnnl::matmul::primitive_desc pd;
  dnnl::matmul prim;
};

// Creating a primitive JIT-compiles its kernel, so primitives are cached by geometry; a null
// entry records that oneDNN has none for one.
LruCache<MatmulKey, Entry, MatmulKeyHash>& cache() {
  engine();
  static LruCache<MatmulKey, Entry, MatmulKeyHash> c(256);
  return c;
}

// A (rows, cols) operand per batch at leading dimension ld, stored transposed when `trans`.
dnnl::memory::desc operand(dnnl::memory::data_type dt, int64_t batch_stride, int64_t batch, int64_t rows, int64_t cols,
                           bool trans, int64_t ld) {
  const int64_t nb = batch_stride == 0 ? 1 : batch;
  return dnnl::memory::desc({nb, rows, cols}, dt,
                            {batch_stride == 0 ? rows * cols : batch_stride, trans ? 1 : ld, trans ? ld : 1});
}

// C = op(A) @ op(B) in data type dt (bf16 or f32) with float32 accumulation; false when oneDNN
// has no implementation for the geometry.
bool run_matmul(dnnl::memory::data_type dt, bool ta, bool tb, int64_t m, int64_t n, int64_t k, const void* a,
                int64_t lda, int64_t sa, const void* b, int64_t ldb, int64_t sb, void* c, int64_t batch) {
  const MatmulKey key{{static_cast<int64_t>(dt), ta, tb, m, n, k, lda, ldb, sa, sb, batch}};
  const auto entry = cache().get(key, [&]() -> std::shared_ptr<const Entry> {
    try {
      const dnnl::memory::desc dst({batch, m, n}, dt, {m * n, n, 1});
      const dnnl::matmul::primitive_desc pd(engine(), operand(dt, sa, batch, m, k, ta, lda),
                                            operand(dt, sb, batch, k, n, tb, ldb), dst, user_scratchpad());
      return std::make_shared<const Entry>(Entry{pd, dnnl::matmul(pd)});
    } catch (const dnnl::error&) {
      return nullptr;  // no implementation for this geometry: the caller takes its other path
    }
  });
  if (!entry) return false;
  try {
    dnnl::stream& s = stream();
    Staging staging(s);
    std::unordered_map<int, dnnl::memory> args;
    args.emplace(DNNL_ARG_SRC, dnnl::memory(entry->pd.src_desc(), engine(), const_cast<void*>(a)));
    args.emplace(DNNL_ARG_WEIGHTS, dnnl::memory(entry->pd.weights_desc(), engine(), const_cast<void*>(b)));
    args.emplace(DNNL_ARG_DST, dnnl::memory(entry->pd.dst_desc(), engine(), c));
    staging.add_scratchpad(entry->pd.scratchpad_desc(), args);
    entry->prim.execute(s, args);
    s.wait();
  } catch (const dnnl::error& e) {
    rethrow(e, "matmul", dt == dnnl::memory::data_type::bf16 ? "bf16 execution" : "f32 execution",
            std::to_string(batch) + " x (" + std::to_string(m) + ", " + std::to_string(k) + ") @ (" +
                std::to_string(k) + ", " + std::to_string(n) + ")");
  }
  return true;
}

}  // namespace

bool bf16_matmul_available() {
  static const bool ok = [] {
    try {
      return dnnl::get_effective_cpu_isa() >= dnnl::cpu_isa::avx512_core_bf16;
    } catch (const dnnl::error&) {
      return false;
    }
  }();
  return ok;
}

bool bf16_matmul(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const void* a, int64_t lda, int64_t sa,
                 const void* b, int64_t ldb, int64_t sb, void* c, int64_t batch) {
  return run_matmul(dnnl::memory::data_type::bf16, ta, tb, m, n, k, a, lda, sa, b, ldb, sb, c, batch);
}

bool f32_matmul(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const void* a, int64_t lda, int64_t sa,
                const void* b, int64_t ldb, int64_t sb, void* c, int64_t batch) {
  return run_matmul(dnnl::memory::data_type::f32, ta, tb, m, n, k, a, lda, sa, b, ldb, sb, c, batch);
}

std::string effective_isa() {
  try {
    switch (dnnl::get_effective_cpu_isa()) {
      case dnnl::cpu_isa::sse41:
        return "sse41";
      case dnnl::cpu_isa::avx:
        return "avx";
      case dnnl::cpu_isa::avx2:
        return "avx2";
      case dnnl::cpu_isa::avx2_vnni:
        return "avx2_vnni";
      case dnnl::cpu_isa::avx2_vnni_2:
        return "avx2_vnni_2";
      case dnnl::cpu_isa::avx512_core:
        return "avx512_core";
      case dnnl::cpu_isa::avx512_core_vnni:
        return "avx512_core_vnni";
      case dnnl::cpu_isa::avx512_core_bf16:
        return "avx512_core_bf16";
      case dnnl::cpu_isa::avx512_core_fp16:
        return "avx512_core_fp16";
      case dnnl::cpu_isa::avx512_core_amx:
        return "avx512_core_amx";
      case dnnl::cpu_isa::avx512_core_amx_fp16:
        return "avx512_core_amx_fp16";
      default:
        return "other";
    }
  } catch (const dnnl::error&) {
    return "unknown";
  }
}

#else

bool bf16_matmul_available() { return false; }
bool bf16_matmul(bool, bool, int64_t, int64_t, int64_t, const void*, int64_t, int64_t, const void*, int64_t, int64_t,
                 void*, int64_t) {
  return false;
}
bool f32_matmul(bool, bool, int64_t, int64_t, int64_t, const void*, int64_t, int64_t, const void*, int64_t, int64_t,
                void*, int64_t) {
  return false;
}
std::string effective_isa() { return "none (no oneDNN)"; }

#endif

}  // namespace st::backend::onednn
