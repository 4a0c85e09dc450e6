// st::linalg: values against known matrices, gradients against central differences in float64
// (first and second order), error types and messages; the CPU backend's factorization entries on
// raw buffers, and a backend that declines them.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "backend/backend.h"
#include "spiraltorch/cuda.h"
#include "spiraltorch/linalg.h"
#include "spiraltorch/spiraltorch.h"
#include "spiraltorch/wgpu.h"
#include "gradcheck.h"

using namespace st;
using st::test_util::gradcheck;
using st::test_util::gradcheck_all;

namespace {

Tensor mat(const std::vector<double>& v, const Shape& shape, Dtype dt = Dtype::Float64) {
  return Tensor::from_vector<double>(v, shape).to(dt);
}

Tensor mT(const Tensor& x) { return transpose(x, -1, -2); }

void expect_close(const Tensor& a, const Tensor& b, double tol) {
  ASSERT_EQ(a.shape(), b.shape());
  const auto x = a.to(Dtype::Float64).to_vector<double>(), y = b.to(Dtype::Float64).to_vector<double>();
  for (size_t i = 0; i < x.size(); ++i) EXPECT_NEAR(x[i], y[i], tol) << "element " << i;
}

// A well-conditioned random batch: noise plus n on the diagonal.
Tensor well_conditioned(const Shape& shape, Dtype dt = Dtype::Float64) {
  const int64_t n = shape.back();
  return add(randn(shape, Dtype::Float64), mul(eye(n, n, Dtype::Float64), static_cast<double>(n))).to(dt);
}

// A symmetric positive-definite batch.
Tensor spd(const Shape& shape, Dtype dt = Dtype::Float64) {
  const Tensor x = randn(shape, Dtype::Float64);
  const int64_t n = shape.back();
  return add(matmul(x, mT(x)), eye(n, n, Dtype::Float64)).to(dt);
}

// Second order: the gradient of sum(f(x) * w), taken with create_graph, is itself checked.
void gradgradcheck(const std::function<Tensor(const Tensor&)>& f, const Tensor& x0, double tol = 1e-5) {
  manual_seed(11);
  const Tensor w = randn(f(x0).shape(), Dtype::Float64);
  gradcheck([&](const Tensor& x) {
    if (!grad_enabled()) {
      // Finite-difference probes (run under no_grad): the same first gradient, on a fresh leaf.
      Tensor leaf = x.detach().clone();
      leaf.set_requires_grad(true);
      EnableGradGuard eg;
      return grad({sum(mul(f(leaf), w))}, {leaf})[0].detach();
    }
    return grad({sum(mul(f(x), w))}, {x}, {}, true, true)[0];
  }, x0, tol);
}

// Symmetric inputs for the ops that read one triangle: finite differences then move both halves.
Tensor sym(const Tensor& x) { return mul(add(x, mT(x)), 0.5); }

template <typename E>
std::string message_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const E& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected an exception";
  return "";
}

}  // namespace

TEST(DenseLinalg, InvKnownAndBatched) {
  const Tensor A = mat({4, 7, 2, 6}, {2, 2});
  expect_close(linalg::inv(A), mat({0.6, -0.7, -0.2, 0.4}, {2, 2}), 1e-12);
  manual_seed(1);
  for (Dtype dt : {Dtype::Float32, Dtype::Float64}) {
    const Tensor B = well_conditioned({2, 3, 4, 4}, dt);
    const Tensor Bi = linalg::inv(B);
    EXPECT_EQ(Bi.dtype(), dt);
    EXPECT_EQ(Bi.shape(), (Shape{2, 3, 4, 4}));
    expect_close(matmul(B, Bi), expand(eye(4, 4, dt), {2, 3, 4, 4}), dt == Dtype::Float32 ? 1e-5 : 1e-12);
  }
  // A strided (transposed) input and an empty one.
  expect_close(linalg::inv(mT(A)), mT(linalg::inv(A)), 1e-12);
  EXPECT_EQ(linalg::inv(zeros({3, 0, 0}, Dtype::Float64)).shape(), (Shape{3, 0, 0}));
}

TEST(DenseLinalg, SolveShapesAndBroadcast) {
  const Tensor A = mat({3, 1, 1, 2}, {2, 2});
  expect_close(linalg::solve(A, mat({9, 8}, {2})), mat({2, 3}, {2}), 1e-12);
  manual_seed(2);
  for (Dtype dt : {Dtype::Float32, Dtype::Float64}) {
    const double tol = dt == Dtype::Float32 ? 1e-4 : 1e-11;
    const Tensor As = well_conditioned({2, 1, 3, 3}, dt), Bs = randn({4, 3, 2}, dt);
    const Tensor X = linalg::solve(As, Bs);
    EXPECT_EQ(X.shape(), (Shape{2, 4, 3, 2}));
    expect_close(matmul(As, X), expand(Bs, {2, 4, 3, 2}), tol);
    // A batch of vectors: B has A's shape without the last dim.
    const Tensor Av = well_conditioned({5, 3, 3}, dt), bv = randn({5, 3}, dt);
    const Tensor xv = linalg::solve(Av, bv);
    EXPECT_EQ(xv.shape(), (Shape{5, 3}));
    expect_close(squeeze(matmul(Av, unsqueeze(xv, -1)), -1), bv, tol);
    // X A = B.
    const Tensor Br = randn({2, 4, 2, 3}, dt);
    expect_close(matmul(linalg::solve(As, Br, false), As), expand(Br, {2, 4, 2, 3}), tol);
  }
}

TEST(DenseLinalg, SolveTriangular) {
  manual_seed(3);
  const Tensor L = add(tril(randn({2, 4, 4}, Dtype::Float64)), mul(eye(4, 4, Dtype::Float64), 4.0));
  const Tensor B = randn({2, 4, 3}, Dtype::Float64);
  expect_close(linalg::solve_triangular(L, B, false), linalg::solve(L, B), 1e-11);
  // Only the named triangle is read: garbage above the diagonal changes nothing.
  const Tensor noisy = add(L, triu(randn({2, 4, 4}, Dtype::Float64), 1));
  expect_close(linalg::solve_triangular(noisy, B, false), linalg::solve(L, B), 1e-11);
  // X A = B and a unit diagonal.
  const Tensor Bt = randn({2, 3, 4}, Dtype::Float64);
  expect_close(matmul(linalg::solve_triangular(mT(L), Bt, true, false), mT(L)), Bt, 1e-11);
  const Tensor unit = add(tril(L, -1), eye(4, 4, Dtype::Float64));
  expect_close(linalg::solve_triangular(L, B, false, true, true), linalg::solve(unit, B), 1e-11);
}

TEST(DenseLinalg, DetAndSlogdet) {
  expect_close(linalg::det(mat({1, 2, 3, 4}, {2, 2})), mat({-2}, {}), 1e-12);
  expect_close(linalg::det(mat({2, 0, 1, 1, 3, 2, 1, 1, 2}, {3, 3})), mat({6}, {}), 1e-12);
  // Singular: 0, no error; the empty matrix has determinant 1.
  expect_close(linalg::det(mat({1, 2, 2, 4}, {2, 2})), mat({0}, {}), 0.0);
  expect_close(linalg::det(zeros({2, 0, 0}, Dtype::Float64)), mat({1, 1}, {2}), 0.0);
  auto [sign, logabs] = linalg::slogdet(mat({1, 2, 3, 4}, {2, 2}));
  EXPECT_EQ(sign.item(), -1.0);
  EXPECT_NEAR(logabs.item(), std::log(2.0), 1e-12);
  auto [s0, l0] = linalg::slogdet(mat({1, 2, 2, 4}, {2, 2}, Dtype::Float32));
  EXPECT_EQ(s0.item(), 0.0);
  EXPECT_EQ(l0.item(), -std::numeric_limits<double>::infinity());
  manual_seed(4);
  const Tensor A = well_conditioned({3, 5, 5}, Dtype::Float64);
  auto [s, l] = linalg::slogdet(A);
  expect_close(mul(s, exp(l)), linalg::det(A), 1e-8);
}

TEST(DenseLinalg, Cholesky) {
  const Tensor A = mat({4, 2, 2, 3}, {2, 2});
  const Tensor L = linalg::cholesky(A);
  expect_close(L, mat({2, 0, 1, std::sqrt(2.0)}, {2, 2}), 1e-12);
  expect_close(linalg::cholesky(A, true), mT(L), 1e-12);
  manual_seed(5);
  for (Dtype dt : {Dtype::Float32, Dtype::Float64}) {
    const Tensor S = spd({3, 4, 4}, dt);
    const Tensor F = linalg::cholesky(S);
    expect_close(matmul(F, mT(F)), S, dt == Dtype::Float32 ? 1e-4 : 1e-11);
    expect_close(F, tril(F), 0.0);
    const Tensor U = linalg::cholesky(S, true);
    expect_close(matmul(mT(U), U), S, dt == Dtype::Float32 ? 1e-4 : 1e-11);
  }
}

TEST(DenseLinalg, EighAndEigvalsh) {
  const Tensor A = mat({2, 1, 1, 2}, {2, 2});
  auto [w, V] = linalg::eigh(A);
  expect_close(w, mat({1, 3}, {2}), 1e-12);
  expect_close(matmul(A, V), mul(V, unsqueeze(w, -2)), 1e-12);
  manual_seed(6);
  for (Dtype dt : {Dtype::Float32, Dtype::Float64}) {
    const double tol = dt == Dtype::Float32 ? 1e-4 : 1e-10;
    const Tensor S = sym(randn({2, 3, 5, 5}, dt));
    auto [ws, Vs] = linalg::eigh(S);
    expect_close(matmul(mT(Vs), Vs), expand(eye(5, 5, dt), {2, 3, 5, 5}), tol);
    expect_close(matmul(mul(Vs, unsqueeze(ws, -2)), mT(Vs)), S, tol);
    expect_close(linalg::eigvalsh(S), ws, tol);
    const auto wv = ws.to(Dtype::Float64).to_vector<double>();
    for (size_t i = 0; i + 1 < wv.size(); ++i) {
      if ((i + 1) % 5 != 0) EXPECT_LE(wv[i], wv[i + 1]);
    }
  }
  // UPLO: only that triangle is read.
  const Tensor lower_only = mat({2, 99, 1, 2}, {2, 2}), upper_only = mat({2, 1, 99, 2}, {2, 2});
  expect_close(linalg::eigvalsh(lower_only, "L"), mat({1, 3}, {2}), 1e-12);
  expect_close(linalg::eigvalsh(upper_only, "U"), mat({1, 3}, {2}), 1e-12);
}

TEST(DenseLinalg, QrModes) {
  manual_seed(7);
  for (Dtype dt : {Dtype::Float32, Dtype::Float64}) {
    const double tol = dt == Dtype::Float32 ? 1e-5 : 1e-12;
    for (const Shape& shape : {Shape{2, 5, 3}, Shape{3, 5}, Shape{4, 4}}) {
      const Tensor A = randn(shape, dt);
      const int64_t m = shape[shape.size() - 2], n = shape.back(), k = std::min(m, n);
      auto [Q, R] = linalg::qr(A);
      EXPECT_EQ(Q.shape().back(), k);
      EXPECT_EQ(R.shape()[R.dim() - 2], k);
      expect_close(matmul(Q, R), A, tol * 10);
      const Tensor QtQ = matmul(mT(Q), Q);
      expect_close(QtQ, expand(eye(k, k, dt), QtQ.shape()), tol * 10);
      expect_close(R, triu(R), 0.0);
      auto [Qc, Rc] = linalg::qr(A, "complete");
      EXPECT_EQ(Qc.shape().back(), m);
      EXPECT_EQ(Rc.shape()[Rc.dim() - 2], m);
      expect_close(matmul(Qc, Rc), A, tol * 10);
      const Tensor QctQc = matmul(mT(Qc), Qc);
      expect_close(QctQc, expand(eye(m, m, dt), QctQc.shape()), tol * 10);
      auto [Qr, Rr] = linalg::qr(A, "r");
      EXPECT_EQ(Qr.shape(), (Shape{0}));
      expect_close(Rr, R, 0.0);
    }
  }
}

TEST(DenseLinalg, SvdAndSvdvals) {
  expect_close(linalg::svdvals(mat({3, 0, 4, 5}, {2, 2})), mat({3 * std::sqrt(5.0), std::sqrt(5.0)}, {2}), 1e-12);
  manual_seed(12);
  for (Dtype dt : {Dtype::Float32, Dtype::Float64}) {
    const double tol = dt == Dtype::Float32 ? 1e-4 : 1e-11;
    for (const Shape& shape : {Shape{2, 5, 3}, Shape{3, 5}, Shape{4, 4}}) {
      const Tensor A = randn(shape, dt);
      const int64_t m = shape[shape.size() - 2], n = shape.back(), k = std::min(m, n);
      auto [U, S, Vh] = linalg::svd(A, false);
      EXPECT_EQ(U.shape().back(), k);
      EXPECT_EQ(Vh.shape()[Vh.dim() - 2], k);
      expect_close(matmul(mul(U, unsqueeze(S, -2)), Vh), A, tol);
      expect_close(linalg::svdvals(A), S, tol);
      auto [Uf, Sf, Vhf] = linalg::svd(A);
      EXPECT_EQ(Uf.shape().back(), m);
      EXPECT_EQ(Vhf.shape().back(), n);
      const Tensor UtU = matmul(mT(Uf), Uf), VVt = matmul(Vhf, mT(Vhf));
      expect_close(UtU, expand(eye(m, m, dt), UtU.shape()), tol);
      expect_close(VVt, expand(eye(n, n, dt), VVt.shape()), tol);
    }
  }
}

TEST(DenseLinalg, GradientsFirstOrder) {
  manual_seed(8);
  gradcheck([](const Tensor& x) { return linalg::inv(x); }, well_conditioned({2, 3, 3}));
  const Tensor B = randn({4, 3, 2}, Dtype::Float64);
  const Tensor A = well_conditioned({2, 1, 3, 3});
  // Broadcast batch dims on both sides, and the vector case.
  gradcheck([&](const Tensor& x) { return linalg::solve(x, B); }, A);
  gradcheck([&](const Tensor& x) { return linalg::solve(A, x); }, B);
  const Tensor Av = well_conditioned({2, 3, 3});
  gradcheck([&](const Tensor& x) { return linalg::solve(Av, x); }, randn({2, 3}, Dtype::Float64));
  gradcheck([&](const Tensor& x) { return linalg::solve(x, mT(B), false); }, A);
  gradcheck([](const Tensor& x) { return linalg::det(x); }, well_conditioned({2, 3, 3}), 1e-5);
  gradcheck([](const Tensor& x) { return linalg::slogdet(x).second; }, well_conditioned({2, 3, 3}));
  gradcheck([](const Tensor& x) { return linalg::cholesky(sym(x)); }, spd({2, 3, 3}));
  gradcheck([](const Tensor& x) { return linalg::cholesky(sym(x), true); }, spd({3, 3}));
  gradcheck([](const Tensor& x) { return linalg::eigvalsh(sym(x)); }, randn({2, 4, 4}, Dtype::Float64));
  gradcheck([](const Tensor& x) { return linalg::eigh(sym(x), "U").first; }, randn({4, 4}, Dtype::Float64));
  // Eigenvectors are defined up to sign: each column times its own first entry is not.
  gradcheck([](const Tensor& x) {
    const Tensor V = linalg::eigh(sym(x)).second;
    return mul(V, narrow(V, -2, 0, 1));
  }, randn({2, 4, 4}, Dtype::Float64));
  for (const Shape& shape : {Shape{5, 3}, Shape{2, 3, 3}, Shape{3, 5}}) {
    const Tensor X = randn(shape, Dtype::Float64);
    gradcheck([](const Tensor& x) { return linalg::qr(x).first; }, X);
    gradcheck([](const Tensor& x) { return linalg::qr(x).second; }, X);
    gradcheck([](const Tensor& x) { return linalg::qr(x, "r").second; }, X);
  }
  // The R of a complete tall QR is differentiable; its Q is not.
  gradcheck([](const Tensor& x) { return linalg::qr(x, "complete").second; }, randn({5, 3}, Dtype::Float64));
  gradcheck([](const Tensor& x) { return linalg::qr(x, "complete").first; }, randn({3, 5}, Dtype::Float64));
  // Singular vectors are defined up to a sign per pair: scale each by its own first entry.
  for (const Shape& shape : {Shape{5, 3}, Shape{2, 3, 3}, Shape{3, 5}}) {
    const Tensor X = randn(shape, Dtype::Float64);
    gradcheck([](const Tensor& x) { return linalg::svdvals(x); }, X);
    for (bool full : {false, true}) {
      gradcheck([full](const Tensor& x) { return std::get<1>(linalg::svd(x, full)); }, X);
      gradcheck([full](const Tensor& x) {
        const int64_t k = std::min(x.shape()[x.dim() - 2], x.shape().back());
        const Tensor U = narrow(std::get<0>(linalg::svd(x, full)), -1, 0, k);
        return mul(U, narrow(U, -2, 0, 1));
      }, X);
      gradcheck([full](const Tensor& x) {
        const int64_t k = std::min(x.shape()[x.dim() - 2], x.shape().back());
        const Tensor Vh = narrow(std::get<2>(linalg::svd(x, full)), -2, 0, k);
        return mul(Vh, narrow(Vh, -1, 0, 1));
      }, X);
    }
  }
  const Tensor L = add(tril(randn({3, 3}, Dtype::Float64)), mul(eye(3, 3, Dtype::Float64), 3.0));
  const Tensor Bt = randn({2, 3, 2}, Dtype::Float64);
  gradcheck([&](const Tensor& x) { return linalg::solve_triangular(tril(x), Bt, false); }, L);
  gradcheck([&](const Tensor& x) { return linalg::solve_triangular(L, x, false); }, Bt);
  gradcheck([&](const Tensor& x) { return linalg::solve_triangular(triu(x), mT(Bt), true, false); }, mT(L));
}

TEST(DenseLinalg, DetGradientAtSingularMatrices) {
  // Rank n - 1: the gradient is the cofactor matrix, computed through the SVD.
  const Tensor A = mat({1, 2, 3, 2, 4, 6, 1, 0, 1}, {3, 3});
  Tensor x = A.clone();
  x.set_requires_grad(true);
  linalg::det(x).backward();
  // Cofactors of A by hand: C_ij = (-1)^(i+j) M_ij.
  expect_close(x.grad(), mat({4, 4, -4, -2, -2, 2, 0, 0, 0}, {3, 3}), 1e-10);
  gradcheck([](const Tensor& v) { return linalg::det(v); }, A, 1e-5);
}

TEST(DenseLinalg, GradientsSecondOrder) {
  manual_seed(9);
  gradgradcheck([](const Tensor& x) { return linalg::inv(x); }, well_conditioned({3, 3}));
  const Tensor B = randn({3, 2}, Dtype::Float64);
  gradgradcheck([&](const Tensor& x) { return linalg::solve(x, B); }, well_conditioned({3, 3}));
  gradgradcheck([](const Tensor& x) { return linalg::det(x); }, well_conditioned({3, 3}), 1e-4);
  gradgradcheck([](const Tensor& x) { return linalg::slogdet(x).second; }, well_conditioned({3, 3}));
  gradgradcheck([](const Tensor& x) { return linalg::cholesky(sym(x)); }, spd({3, 3}));
  gradgradcheck([](const Tensor& x) { return linalg::eigvalsh(sym(x)); }, randn({3, 3}, Dtype::Float64));
  gradgradcheck([](const Tensor& x) { return linalg::qr(x).second; }, randn({4, 3}, Dtype::Float64));
  gradgradcheck([](const Tensor& x) { return linalg::svdvals(x); }, randn({4, 3}, Dtype::Float64));
}

// svd, qr and eigh record one node for all their outputs: gradients of functions that use
// several outputs at once, first and second order, against finite differences.
TEST(DenseLinalg, MultiOutputNodes) {
  manual_seed(12);
  Tensor A = randn({4, 3}, Dtype::Float64).set_requires_grad(true);
  const auto [U, S, Vh] = linalg::svd(A, false);
  EXPECT_EQ(U.grad_fn(), S.grad_fn());
  EXPECT_EQ(S.grad_fn(), Vh.grad_fn());
  EXPECT_EQ(Vh.output_nr(), 2u);
  const auto [Q, R] = linalg::qr(A);
  EXPECT_EQ(Q.grad_fn(), R.grad_fn());
  const auto [w, V] = linalg::eigh(sym(randn({3, 3}, Dtype::Float64).set_requires_grad(true)));
  EXPECT_EQ(w.grad_fn(), V.grad_fn());
  const auto flat = [](const Tensor& t) { return reshape(t, {-1}); };
  // Singular and eigenvectors are defined up to a sign each: times their own first entry they are not.
  const auto svd_all = [&](const Tensor& x) {
    const auto [u, s, vh] = linalg::svd(x, false);
    return cat({flat(mul(u, narrow(u, -2, 0, 1))), flat(s), flat(mul(vh, narrow(vh, -1, 0, 1)))});
  };
  const auto qr_all = [&](const Tensor& x) {
    const auto [q, r] = linalg::qr(x);
    return cat({flat(q), flat(r)});
  };
  const auto eigh_all = [&](const Tensor& x) {
    const auto [e, v] = linalg::eigh(sym(x));
    return cat({flat(e), flat(mul(v, narrow(v, -2, 0, 1)))});
  };
  for (const Shape& shape : {Shape{5, 3}, Shape{3, 5}, Shape{2, 3, 3}}) {
    const Tensor X = randn(shape, Dtype::Float64);
    gradcheck(svd_all, X);
    gradcheck(qr_all, X);
  }
  gradcheck(eigh_all, randn({2, 4, 4}, Dtype::Float64));
  // Second order: the backward reads the node's own outputs. (Squares fix the sign here: slicing's
  // backward is not differentiable under create_graph yet, so narrow() cannot be used.)
  gradgradcheck(qr_all, randn({4, 3}, Dtype::Float64));
  gradgradcheck([&](const Tensor& x) {
    const auto [e, v] = linalg::eigh(sym(x));
    return cat({flat(e), flat(mul(v, v))});
  }, randn({3, 3}, Dtype::Float64));
  for (const Shape& shape : {Shape{4, 3}, Shape{3, 4}}) {
    gradgradcheck([&](const Tensor& x) {
      const auto [u, s, vh] = linalg::svd(x, false);
      return cat({flat(mul(u, u)), flat(s), flat(mul(vh, vh))});
    }, randn(shape, Dtype::Float64));
  }
}

TEST(DenseLinalg, ErrorTypesAndMessages) {
  EXPECT_THROW(linalg::inv(zeros({2, 3}, Dtype::Float64)), ShapeError);
  EXPECT_THROW(linalg::det(zeros({3}, Dtype::Float64)), ShapeError);
  EXPECT_THROW(linalg::solve(eye(3, 3, Dtype::Float64), zeros({4, 2}, Dtype::Float64)), ShapeError);
  EXPECT_THROW(linalg::inv(zeros({2, 2}, Dtype::Int64)), DtypeError);
  EXPECT_THROW(linalg::cholesky(zeros({2, 2}, Dtype::Float16)), DtypeError);
  EXPECT_THROW(linalg::solve(eye(2, 2, Dtype::Float64), zeros({2}, Dtype::Float32)), DtypeError);
  EXPECT_THROW(linalg::eigh(eye(2, 2, Dtype::Float64), "X"), ValueError);
  EXPECT_THROW(linalg::qr(eye(2, 2, Dtype::Float64), "thin"), ValueError);

  const std::string shape_msg = message_of<ShapeError>([] { linalg::inv(zeros({2, 3})); });
  EXPECT_NE(shape_msg.find("linalg.inv"), std::string::npos) << shape_msg;
  EXPECT_NE(shape_msg.find("(2, 3)"), std::string::npos) << shape_msg;
  const std::string dtype_msg = message_of<DtypeError>([] { linalg::det(zeros({2, 2}, Dtype::Int32)); });
  EXPECT_NE(dtype_msg.find("linalg.det"), std::string::npos) << dtype_msg;
  EXPECT_NE(dtype_msg.find("int32"), std::string::npos) << dtype_msg;

  // Singular matrices name the zero pivot and, in a batch, the element.
  const Tensor singular = mat({1, 2, 3, 2, 4, 6, 1, 0, 1}, {3, 3});
  const std::string inv_msg = message_of<ValueError>([&] { linalg::inv(singular); });
  EXPECT_NE(inv_msg.find("linalg.inv: The diagonal element"), std::string::npos) << inv_msg;
  EXPECT_NE(inv_msg.find("singular"), std::string::npos) << inv_msg;
  const Tensor batch = stack({eye(3, 3, Dtype::Float64), singular});
  const std::string batch_msg = message_of<ValueError>([&] { linalg::inv(batch); });
  EXPECT_NE(batch_msg.find("(Batch element 1)"), std::string::npos) << batch_msg;
  const std::string solve_msg = message_of<ValueError>([&] { linalg::solve(batch, ones({2, 3, 1}, Dtype::Float64)); });
  EXPECT_NE(solve_msg.find("linalg.solve: (Batch element 1)"), std::string::npos) << solve_msg;
  const std::string chol_msg = message_of<ValueError>([] { linalg::cholesky(mat({1, 2, 2, 1}, {2, 2})); });
  EXPECT_NE(chol_msg.find("leading minor of order 2"), std::string::npos) << chol_msg;

  // The Q of a complete QR of a tall matrix has no gradient: its backward says so.
  Tensor tall = randn({4, 2}, Dtype::Float64);
  tall.set_requires_grad(true);
  const Tensor Q = linalg::qr(tall, "complete").first;
  EXPECT_THROW(sum(Q).backward(), ValueError);
}

TEST(DenseLinalg, InputsAreNotWritten) {
  manual_seed(10);
  const Tensor A = spd({2, 3, 3});
  const Tensor before = A.clone();
  linalg::inv(A);
  linalg::det(A);
  linalg::cholesky(A);
  linalg::eigh(A);
  linalg::qr(A);
  linalg::solve(A, ones({2, 3}, Dtype::Float64));
  linalg::solve_triangular(A, ones({2, 3, 1}, Dtype::Float64), true);
  expect_close(A, before, 0.0);
  // A 1x1 matrix is contiguous either way round: it must still be copied before LAPACK writes.
  const Tensor one = mat({4}, {1, 1});
  linalg::inv(one);
  linalg::cholesky(one);
  EXPECT_EQ(one.item(), 4.0);
}

TEST(DenseLinalg, OtherDevicesAreRefused) {
  Device dev;
  if (wgpu::is_available()) {
    dev = Device(DeviceType::WGPU);
  } else if (cuda::is_available()) {
    dev = Device(DeviceType::CUDA);
  } else {
    GTEST_SKIP() << "no cuda or wgpu device here";
  }
  const Tensor A = to_device(eye(2, 2, Dtype::Float32), dev);
  const std::string msg = message_of<DeviceUnavailableError>([&] { linalg::inv(A); });
  EXPECT_NE(msg.find("linalg.inv"), std::string::npos) << msg;
  EXPECT_NE(msg.find("CPU"), std::string::npos) << msg;
}

// The CPU backend's factorization entries on raw batched buffers (backend.h's contracts), checked by
// what each factorization must reconstruct, in float64.
TEST(DenseLinalg, CpuBackendEntries) {
  backend::Backend& cpu = backend::cpu_backend();
  ASSERT_TRUE(cpu.has_dense_linalg());
  manual_seed(12);
  const int64_t batch = 3, n = 4, k = 2;
  const Tensor A = well_conditioned({batch, n, n}), S = spd({batch, n, n}), B = randn({batch, n, k}, Dtype::Float64);
  const Tensor I = expand(eye(n, n, Dtype::Float64), {batch, n, n});
  // Column-major buffers: a contiguous x^T; read back through another transpose.
  const auto colmajor = [](const Tensor& x) { return mT(x).contiguous(); };
  std::vector<int> info(batch, -7);

  Tensor inv = colmajor(A);
  ASSERT_TRUE(cpu.lu_inverse(inv, batch, n, info));
  EXPECT_EQ(info, std::vector<int>(batch, 0));
  expect_close(matmul(A, mT(inv)), I, 1e-12);

  Tensor lu = colmajor(A), x = colmajor(B);
  ASSERT_TRUE(cpu.lu_solve(lu, x, batch, n, k, info));
  EXPECT_EQ(info, std::vector<int>(batch, 0));
  expect_close(matmul(A, mT(x)), B, 1e-12);

  Tensor det = Tensor::empty({batch}, Dtype::Float64), sign = Tensor::empty({batch}, Dtype::Float64),
         logabs = Tensor::empty({batch}, Dtype::Float64);
  Tensor lu2 = colmajor(A);
  ASSERT_TRUE(cpu.lu_determinant(lu2, batch, n, det, sign, logabs));
  const Tensor w0 = linalg::eigvalsh(S);  // det(S) = the product of its eigenvalues
  Tensor sdet = Tensor::empty({batch}, Dtype::Float64), undefined;
  Tensor lu3 = colmajor(S);
  ASSERT_TRUE(cpu.lu_determinant(lu3, batch, n, sdet, undefined, undefined));
  expect_close(sdet, prod(w0, {-1}), 1e-9);
  expect_close(mul(sign, exp(logabs)), det, 1e-9);

  // det's gradient at a nonsingular matrix: g det(A) A^-T (the column-major inverse read row-major).
  const Tensor g = randn({batch}, Dtype::Float64);
  Tensor gA = Tensor::empty({batch, n, n}, Dtype::Float64);
  ASSERT_TRUE(cpu.determinant_backward(colmajor(A), g, batch, n, gA, info));
  expect_close(gA, mul(unsqueeze(unsqueeze(mul(g, det), -1), -1), inv), 1e-9);

  // Row-major entries: the triangular solve reads one triangle, Cholesky and eigh one triangle.
  Tensor xt = B.clone();
  ASSERT_TRUE(cpu.triangular_solve(A, xt, batch, n, k, /*upper=*/false, /*unit=*/false));
  expect_close(matmul(tril(A), xt), B, 1e-12);
  for (bool upper : {false, true}) {
    Tensor f = S.clone();
    ASSERT_TRUE(cpu.cholesky(f, batch, n, upper, info));
    EXPECT_EQ(info, std::vector<int>(batch, 0));
    expect_close(upper ? matmul(mT(f), f) : matmul(f, mT(f)), S, 1e-12);
    expect_close(f, upper ? triu(f) : tril(f), 0.0);
  }
  Tensor v = S.clone(), w = Tensor::empty({batch, n}, Dtype::Float64);
  ASSERT_TRUE(cpu.eigh(v, batch, n, /*upper=*/false, /*vectors=*/true, w, info));
  EXPECT_EQ(info, std::vector<int>(batch, 0));
  // v holds V^T.
  expect_close(matmul(matmul(mT(v), mul(unsqueeze(w, -1), I)), v), S, 1e-11);

  // QR and SVD of a wide and a tall batch.
  for (const Shape shape : {Shape{batch, 3, 5}, Shape{batch, 5, 3}}) {
    const int64_t m = shape[1], nc = shape[2], kk = std::min(m, nc);
    const Tensor M = randn(shape, Dtype::Float64);
    Tensor q = Tensor::empty({batch, m, kk}, Dtype::Float64), r = Tensor::empty({batch, kk, nc}, Dtype::Float64);
    Tensor qa = colmajor(M), sa = colmajor(M);
    ASSERT_TRUE(cpu.qr(qa, batch, m, nc, /*complete=*/false, q, r, info));
    EXPECT_EQ(info, std::vector<int>(batch, 0));
    expect_close(matmul(q, r), M, 1e-12);
    expect_close(matmul(mT(q), q), expand(eye(kk, kk, Dtype::Float64), {batch, kk, kk}), 1e-12);
    expect_close(r, triu(r), 0.0);
    Tensor s = Tensor::empty({batch, kk}, Dtype::Float64), u = Tensor::empty({batch, m, kk}, Dtype::Float64),
           vh = Tensor::empty({batch, kk, nc}, Dtype::Float64);
    ASSERT_TRUE(cpu.svd(sa, batch, m, nc, /*full=*/false, s, u, vh, info));
    EXPECT_EQ(info, std::vector<int>(batch, 0));
    expect_close(matmul(mul(u, unsqueeze(s, -2)), vh), M, 1e-12);
  }

  // Failures are reported per matrix through info: the second matrix is singular / not
  // positive-definite, the others factorize.
  const Tensor bad = cat({unsqueeze(eye(n, n, Dtype::Float64), 0), zeros({1, n, n}, Dtype::Float64),
                          unsqueeze(eye(n, n, Dtype::Float64), 0)},
                         0);
  Tensor bi = colmajor(bad);
  ASSERT_TRUE(cpu.lu_inverse(bi, batch, n, info));
  EXPECT_EQ(info, (std::vector<int>{0, 1, 0}));
  Tensor bc = bad.clone();
  ASSERT_TRUE(cpu.cholesky(bc, batch, n, false, info));
  EXPECT_EQ(info, (std::vector<int>{0, 1, 0}));
}

// A backend without the factorizations (wgpu's: the table's declining defaults) writes nothing,
// and every linalg op refuses its tensors by name.
TEST(DenseLinalg, DecliningBackendWritesNothingAndOpsRefuse) {
  if (!wgpu::is_available()) GTEST_SKIP() << "no wgpu device here";
  const Device dev(DeviceType::WGPU);
  backend::Backend& gpu = backend::backend_for(dev);
  EXPECT_FALSE(gpu.has_dense_linalg());
  const Tensor A = to_device(mat({4, 7, 2, 6}, {1, 2, 2}, Dtype::Float32), dev);
  Tensor buf = A.clone(), w = to_device(zeros({1, 2}, Dtype::Float32), dev), undefined;
  std::vector<int> info{-7};
  EXPECT_FALSE(gpu.lu_inverse(buf, 1, 2, info));
  EXPECT_FALSE(gpu.cholesky(buf, 1, 2, false, info));
  EXPECT_FALSE(gpu.eigh(buf, 1, 2, false, true, w, info));
  EXPECT_FALSE(gpu.svd(buf, 1, 2, 2, false, w, undefined, undefined, info));
  EXPECT_EQ(info, std::vector<int>{-7});
  expect_close(to_device(buf, Device()), mat({4, 7, 2, 6}, {1, 2, 2}), 0.0);

  const Tensor S = to_device(eye(2, 2, Dtype::Float32), dev);
  const std::vector<std::pair<std::string, std::function<void()>>> ops = {
      {"linalg.inv", [&] { linalg::inv(S); }},
      {"linalg.det", [&] { linalg::det(S); }},
      {"linalg.slogdet", [&] { linalg::slogdet(S); }},
      {"linalg.solve", [&] { linalg::solve(S, S); }},
      {"linalg.solve_triangular", [&] { linalg::solve_triangular(S, S, true); }},
      {"linalg.cholesky", [&] { linalg::cholesky(S); }},
      {"linalg.eigh", [&] { linalg::eigh(S); }},
      {"linalg.eigvalsh", [&] { linalg::eigvalsh(S); }},
      {"linalg.qr", [&] { linalg::qr(S); }},
      {"linalg.svd", [&] { linalg::svd(S); }},
      {"linalg.svdvals", [&] { linalg::svdvals(S); }},
  };
  for (const auto& [op, call] : ops) {
    const std::string msg = message_of<DeviceUnavailableError>(call);
    EXPECT_EQ(msg.rfind(op + ": runs on the CPU only (LAPACK), but A is on wgpu", 0), 0u) << msg;
  }
  // B on the device beside a CPU A is named as B.
  const std::string msg =
      message_of<DeviceUnavailableError>([&] { linalg::solve(eye(2, 2, Dtype::Float32), to_device(ones({2}), dev)); });
  EXPECT_NE(msg.find("linalg.solve: runs on the CPU only (LAPACK), but B is on wgpu"), std::string::npos) << msg;
}
