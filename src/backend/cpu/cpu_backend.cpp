#include "backend/cpu/kernels.h"

namespace st::backend {

namespace {

class CpuBackend final : public Backend {
 public:
  void binary(BinaryOp op, const Tensor& a, const Tensor& b, Tensor& out) override { cpu::binary(op, a, b, out); }
  void unary(UnaryOp op, const Tensor& x, Tensor& out, double p0, double p1) override {
    cpu::unary(op, x, out, p0, p1);
  }
  void copy(const Tensor& src, Tensor& dst) override { cpu::copy(src, dst); }
  void fill(Tensor& dst, Scalar value) override { cpu::fill(dst, value); }
  void where(const Tensor& cond, const Tensor& a, const Tensor& b, Tensor& out) override {
    cpu::where(cond, a, b, out);
  }
  void reduce(ReduceOp op, const Tensor& x, int64_t outer, int64_t r, int64_t inner, Tensor& out) override {
    cpu::reduce(op, x, outer, r, inner, out);
  }
  void arg_reduce(bool is_max, const Tensor& x, int64_t outer, int64_t r, int64_t inner, Tensor& values,
                  Tensor& indices) override {
    cpu::arg_reduce(is_max, x, outer, r, inner, values, indices);
  }
  void gemm(Dtype dtype, bool ta, bool tb, int64_t m, int64_t n, int64_t k, double alpha, const void* a, int64_t lda,
            int64_t sa, const void* b, int64_t ldb, int64_t sb, double beta, void* c, int64_t ldc, int64_t sc,
            int64_t batch) override {
    cpu::gemm(dtype, ta, tb, m, n, k, alpha, a, lda, sa, b, ldb, sb, beta, c, ldc, sc, batch);
  }
  void random(Tensor& out, bool normal, double p0, double p1, uint64_t seed, uint64_t counter) override {
    cpu::random(out, normal, p0, p1, seed, counter);
  }
  void softmax(const Tensor& x, int64_t rows, int64_t cols, bool log, Tensor& out) override {
    cpu::softmax(x, rows, cols, log, out);
  }

  // ---- indexing kernels ----
  void cat(const std::vector<Tensor>& xs, int64_t outer, Tensor& out) override { cpu::cat(xs, outer, out); }
  void gather(const Tensor& x, const Tensor& index, int64_t outer, int64_t n, int64_t k, int64_t inner,
              Tensor& out) override {
    cpu::gather(x, index, outer, n, k, inner, out);
  }
  void scatter_add(Tensor& out, const Tensor& index, const Tensor& src, int64_t outer, int64_t n, int64_t k,
                   int64_t inner) override {
    cpu::scatter_add(out, index, src, outer, n, k, inner);
  }
  void index_select(const Tensor& x, const Tensor& index, int64_t outer, int64_t n, int64_t k, int64_t inner,
                    Tensor& out) override {
    cpu::index_select(x, index, outer, n, k, inner, out);
  }
  void masked_select(const Tensor& x, const Tensor& mask, Tensor& out) override { cpu::masked_select(x, mask, out); }
  void sort(const Tensor& x, int64_t outer, int64_t n, int64_t inner, int64_t k, bool descending, Tensor& values,
            Tensor& indices) override {
    cpu::sort(x, outer, n, inner, k, descending, values, indices);
  }
  void cumsum(const Tensor& x, int64_t outer, int64_t n, int64_t inner, Tensor& out) override {
    cpu::cumsum(x, outer, n, inner, out);
  }
  void triangle(const Tensor& x, int64_t batch, int64_t rows, int64_t cols, int64_t diagonal, bool upper,
                Tensor& out) override {
    cpu::triangle(x, batch, rows, cols, diagonal, upper, out);
  }
};

}  // namespace

Backend& cpu_backend() {
  static CpuBackend instance;
  return instance;
}

Backend& backend_for(Device device) {
  if (device.type == DeviceType::CPU) return cpu_backend();
  throw DeviceUnavailableError("backend: device " + device.str() + " is not available in this build");
}

}  // namespace st::backend
