// Tests for the joining, splitting and indexing ops (src/ops/indexing.cpp).
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "spiraltorch/autograd.h"
#include "spiraltorch/ops.h"

using namespace st;

namespace {

Tensor F(const std::vector<float>& v, const Shape& s) { return Tensor::from_vector<float>(v, s); }
Tensor D(const std::vector<double>& v, const Shape& s) { return Tensor::from_vector<double>(v, s); }
Tensor L(const std::vector<int64_t>& v, const Shape& s) { return Tensor::from_vector<int64_t>(v, s); }
std::vector<float> fv(const Tensor& t) { return t.to_vector<float>(); }
std::vector<int64_t> lv(const Tensor& t) { return t.to_vector<int64_t>(); }

// A float64 leaf with values 0.1 * (i + 1) * (-1)^i, distinct and away from ties.
Tensor leaf(const Shape& shape) {
  const int64_t n = shape_numel(shape);
  std::vector<double> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = 0.1 * static_cast<double>(i + 1) * (i % 2 ? -1.0 : 1.0) + 0.013 * i * i;
  Tensor t = D(v, shape);
  t.set_requires_grad(true);
  return t;
}

// Checks d/dx sum(f(x) * w) against central differences, for every input.
void grad_check(const std::vector<Tensor>& inputs, const std::function<Tensor(const std::vector<Tensor>&)>& f,
                double tol = 1e-6) {
  for (const Tensor& x : inputs) Tensor(x).set_grad(Tensor());  // start from no accumulated gradient
  Tensor out = f(inputs);
  const int64_t m = out.numel();
  std::vector<double> wv(m);
  for (int64_t i = 0; i < m; ++i) wv[i] = 0.5 + 0.25 * static_cast<double>((i * 7) % 5);
  const Tensor w = D(wv, out.shape());
  Tensor loss = sum(mul(out, w));
  loss.backward();
  const double eps = 1e-6;
  for (size_t a = 0; a < inputs.size(); ++a) {
    const Tensor& x = inputs[a];
    ASSERT_TRUE(x.is_contiguous());
    const Tensor g = x.grad();
    ASSERT_TRUE(g.defined()) << "no gradient for input " << a;
    ASSERT_EQ(g.shape(), x.shape());
    const std::vector<double> gv = g.to_vector<double>();
    double* p = x.data<double>();
    for (int64_t i = 0; i < x.numel(); ++i) {
      NoGradGuard ng;
      const double orig = p[i];
      p[i] = orig + eps;
      const double up = sum(mul(f(inputs), w)).item();
      p[i] = orig - eps;
      const double down = sum(mul(f(inputs), w)).item();
      p[i] = orig;
      const double numeric = (up - down) / (2 * eps);
      EXPECT_NEAR(gv[i], numeric, tol) << "input " << a << " element " << i;
    }
  }
}

template <typename E, typename Fn>
std::string error_of(Fn&& fn) {
  try {
    fn();
  } catch (const E& e) {
    return e.what();
  } catch (const std::exception& e) {
    return std::string("wrong exception type: ") + e.what();
  }
  return "no exception";
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

}  // namespace

// ---------------------------------------------------------------- cat / stack

TEST(IndexingCat, ValuesAlongDims) {
  const Tensor a = F({1, 2, 3, 4, 5, 6}, {2, 3});
  const Tensor b = F({7, 8, 9}, {1, 3});
  const Tensor c0 = cat({a, b}, 0);
  EXPECT_EQ(c0.shape(), (Shape{3, 3}));
  EXPECT_EQ(fv(c0), (std::vector<float>{1, 2, 3, 4, 5, 6, 7, 8, 9}));
  const Tensor e = F({10, 20}, {2, 1});
  const Tensor c1 = cat({a, e}, -1);
  EXPECT_EQ(c1.shape(), (Shape{2, 4}));
  EXPECT_EQ(fv(c1), (std::vector<float>{1, 2, 3, 10, 4, 5, 6, 20}));
}

TEST(IndexingCat, PromotesDtypesAndSkipsLegacyEmpty) {
  const Tensor a = Tensor::from_vector<int32_t>({1, 2}, {2});
  const Tensor b = F({0.5f}, {1});
  const Tensor c = cat({a, b});
  EXPECT_EQ(c.dtype(), Dtype::Float32);
  EXPECT_EQ(fv(c), (std::vector<float>{1, 2, 0.5f}));
  const Tensor i64 = cat({a, L({7}, {1})});
  EXPECT_EQ(i64.dtype(), Dtype::Int64);
  EXPECT_EQ(lv(i64), (std::vector<int64_t>{1, 2, 7}));
  // A (0,) tensor is skipped even next to 2-D tensors.
  const Tensor m = F({1, 2, 3, 4}, {2, 2});
  const Tensor r = cat({m, Tensor::empty({0}), m}, 1);
  EXPECT_EQ(r.shape(), (Shape{2, 4}));
  EXPECT_EQ(fv(r), (std::vector<float>{1, 2, 1, 2, 3, 4, 3, 4}));
  // Empty along the cat dim, and empty in another dim.
  EXPECT_EQ(cat({Tensor::empty({0, 3}), F({1, 2, 3}, {1, 3})}).shape(), (Shape{1, 3}));
  EXPECT_EQ(cat({Tensor::empty({2, 0}), Tensor::empty({3, 0})}).shape(), (Shape{5, 0}));
}

TEST(IndexingCat, NonContiguousInputs) {
  const Tensor a = F({1, 2, 3, 4, 5, 6}, {2, 3});
  const Tensor at = transpose(a, 0, 1);  // (3, 2): [[1,4],[2,5],[3,6]]
  const Tensor c = cat({at, at}, 1);
  EXPECT_EQ(c.shape(), (Shape{3, 4}));
  EXPECT_EQ(fv(c), (std::vector<float>{1, 4, 1, 4, 2, 5, 2, 5, 3, 6, 3, 6}));
}

TEST(IndexingCat, Errors) {
  const Tensor a = F({1, 2, 3, 4, 5, 6}, {2, 3});
  const Tensor b = F({1, 2, 3, 4, 5, 6, 7, 8}, {2, 4});
  EXPECT_EQ(error_of<ShapeError>([&] { cat({a, b}, 0); }),
            "cat: tensors must have the same shape except in dim 0, got (2, 3) and (2, 4)");
  EXPECT_TRUE(contains(error_of<ShapeError>([&] { cat({a, F({1}, {})}); }), "zero-dimensional"));
  EXPECT_TRUE(contains(error_of<ShapeError>([&] { cat({a, F({1, 2, 3}, {3})}); }), "same number of dimensions"));
  EXPECT_TRUE(contains(error_of<IndexError>([&] { cat({a, a}, 2); }), "cat: dimension 2"));
  EXPECT_TRUE(contains(error_of<ValueError>([&] { cat({}); }), "non-empty"));
}

TEST(IndexingCat, GradCheck) {
  const Tensor a = leaf({2, 3}), b = leaf({2, 2});
  grad_check({a, b}, [](const std::vector<Tensor>& x) { return cat({x[0], x[1]}, 1); });
  const Tensor c = leaf({1, 3}), d = leaf({2, 3});
  grad_check({c, d}, [](const std::vector<Tensor>& x) { return cat({x[0], mul(x[1], x[1]), x[0]}, 0); });
}

TEST(IndexingCat, GradCastsBackToInputDtype) {
  Tensor a = F({1, 2}, {2});
  a.set_requires_grad(true);
  const Tensor b = D({3}, {1});
  Tensor c = cat({a, b});
  EXPECT_EQ(c.dtype(), Dtype::Float64);
  sum(c).backward();
  EXPECT_EQ(a.grad().dtype(), Dtype::Float32);
  EXPECT_EQ(fv(a.grad()), (std::vector<float>{1, 1}));
}

TEST(IndexingStack, ValuesAndErrors) {
  const Tensor a = F({1, 2, 3}, {3}), b = F({4, 5, 6}, {3});
  const Tensor s0 = stack({a, b});
  EXPECT_EQ(s0.shape(), (Shape{2, 3}));
  EXPECT_EQ(fv(s0), (std::vector<float>{1, 2, 3, 4, 5, 6}));
  const Tensor s1 = stack({a, b}, -1);
  EXPECT_EQ(s1.shape(), (Shape{3, 2}));
  EXPECT_EQ(fv(s1), (std::vector<float>{1, 4, 2, 5, 3, 6}));
  const Tensor sc = stack({F({1}, {}), F({2}, {})});
  EXPECT_EQ(sc.shape(), (Shape{2}));
  EXPECT_EQ(error_of<ShapeError>([&] { stack({a, F({1, 2}, {2})}); }),
            "stack: expects each tensor to be equal size, but got (3,) at entry 0 and (2,) at entry 1");
  const Tensor x = leaf({2}), y = leaf({2});
  grad_check({x, y}, [](const std::vector<Tensor>& v) { return stack({v[0], v[1]}, 1); });
}

// ---------------------------------------------------------------- split / chunk

TEST(IndexingSplit, SizesAndViews) {
  const Tensor x = F({0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, {5, 2});
  auto parts = split(x, 2);
  ASSERT_EQ(parts.size(), 3u);
  EXPECT_EQ(parts[0].shape(), (Shape{2, 2}));
  EXPECT_EQ(parts[2].shape(), (Shape{1, 2}));
  EXPECT_EQ(fv(parts[2]), (std::vector<float>{8, 9}));
  EXPECT_TRUE(parts[1].storage() == x.storage());  // views
  auto cols = split(x, std::vector<int64_t>{1, 1}, -1);
  ASSERT_EQ(cols.size(), 2u);
  EXPECT_EQ(fv(cols[1]), (std::vector<float>{1, 3, 5, 7, 9}));
  EXPECT_EQ(split(x, 10).size(), 1u);
  auto uneven = split(x, std::vector<int64_t>{0, 3, 2});
  EXPECT_EQ(uneven[0].shape(), (Shape{0, 2}));
  EXPECT_EQ(fv(uneven[2]), (std::vector<float>{6, 7, 8, 9}));
  EXPECT_TRUE(contains(error_of<ShapeError>([&] { split(x, std::vector<int64_t>{2, 2}); }), "sum exactly to 5"));
  EXPECT_TRUE(contains(error_of<ValueError>([&] { split(x, -1); }), "non-negative"));
  EXPECT_TRUE(contains(error_of<ValueError>([&] { split(x, 0); }), "split_size can only be 0"));
  EXPECT_EQ(split(Tensor::empty({0, 2}), 0).size(), 1u);
}

TEST(IndexingChunk, Sizes) {
  const Tensor x = F({0, 1, 2, 3, 4}, {5});
  auto c = chunk(x, 3);
  ASSERT_EQ(c.size(), 3u);
  EXPECT_EQ(fv(c[0]), (std::vector<float>{0, 1}));
  EXPECT_EQ(fv(c[2]), (std::vector<float>{4}));
  EXPECT_EQ(chunk(F({0, 1, 2, 3, 4, 5}, {6}), 4).size(), 3u);  // PyTorch: sizes 2, 2, 2
  EXPECT_EQ(chunk(Tensor::empty({0}), 3).size(), 3u);
  EXPECT_TRUE(contains(error_of<ValueError>([&] { chunk(x, 0); }), "positive"));
  // Gradients flow through the views.
  Tensor y = leaf({4});
  auto parts = chunk(y, 2);
  sum(mul(parts[1], 3.0)).backward();
  EXPECT_EQ(y.grad().to_vector<double>(), (std::vector<double>{0, 0, 3, 3}));
}

// ---------------------------------------------------------------- gather / scatter_add

TEST(IndexingGather, Values) {
  const Tensor x = F({1, 2, 3, 4, 5, 6}, {2, 3});
  const Tensor g1 = gather(x, 1, L({2, 0, 1, 1}, {2, 2}));
  EXPECT_EQ(g1.shape(), (Shape{2, 2}));
  EXPECT_EQ(fv(g1), (std::vector<float>{3, 1, 5, 5}));
  const Tensor g0 = gather(x, 0, L({1, 0, 1}, {1, 3}));
  EXPECT_EQ(fv(g0), (std::vector<float>{4, 2, 6}));
  // int32 indices, negative dim, index smaller than the input in another dim.
  const Tensor g2 = gather(x, -1, Tensor::from_vector<int32_t>({1}, {1, 1}));
  EXPECT_EQ(fv(g2), (std::vector<float>{2}));
  // Non-contiguous input.
  const Tensor xt = transpose(x, 0, 1);  // [[1,4],[2,5],[3,6]]
  EXPECT_EQ(fv(gather(xt, 1, L({1, 0, 1}, {3, 1}))), (std::vector<float>{4, 2, 6}));
  EXPECT_EQ(gather(x, 1, Tensor::empty({2, 0}, Dtype::Int64)).shape(), (Shape{2, 0}));
}

TEST(IndexingGather, Errors) {
  const Tensor x = F({1, 2, 3, 4, 5, 6}, {2, 3});
  EXPECT_EQ(error_of<IndexError>([&] { gather(x, 1, L({0, 3}, {2, 1})); }),
            "gather: index 3 is out of bounds for dimension 1 with size 3");
  EXPECT_TRUE(contains(error_of<IndexError>([&] { gather(x, 1, L({-1, 0}, {2, 1})); }), "index -1"));
  EXPECT_TRUE(contains(error_of<DtypeError>([&] { gather(x, 1, F({0, 1}, {2, 1})); }), "float32"));
  EXPECT_TRUE(contains(error_of<ShapeError>([&] { gather(x, 1, L({0, 1}, {2})); }), "same number of dimensions"));
  EXPECT_TRUE(contains(error_of<ShapeError>([&] { gather(x, 1, L({0, 0, 0}, {3, 1})); }), "exceeds"));
}

TEST(IndexingGather, GradCheck) {
  const Tensor x = leaf({3, 4});
  const Tensor idx = L({0, 3, 3, 1, 2, 2, 0, 0}, {2, 4});
  const Tensor idx0 = L({0, 2, 2, 1, 1, 1, 0, 0}, {4, 2});  // longer than x along the gather dim
  grad_check({x}, [&](const std::vector<Tensor>& v) { return gather(v[0], 0, idx0); });
  grad_check({x}, [&](const std::vector<Tensor>& v) { return gather(v[0], 1, idx); });
}

TEST(IndexingScatterAdd, ValuesWithDuplicates) {
  const Tensor x = zeros({2, 3});
  const Tensor src = F({1, 2, 3, 4, 5, 6}, {2, 3});
  const Tensor out = scatter_add(x, 1, L({0, 0, 2, 1, 1, 1}, {2, 3}), src);
  EXPECT_EQ(fv(out), (std::vector<float>{3, 0, 3, 0, 15, 0}));
  EXPECT_EQ(fv(x), (std::vector<float>{0, 0, 0, 0, 0, 0}));  // out of place
  // Index smaller than self and src.
  const Tensor o2 = scatter_add(ones({3, 3}), 0, L({2, 0}, {1, 2}), src);
  EXPECT_EQ(fv(o2), (std::vector<float>{1, 3, 1, 1, 1, 1, 2, 1, 1}));
  const Tensor oi = scatter_add(zeros({4}, Dtype::Int64), 0, L({3, 3, 0}, {3}), L({1, 2, 5}, {3}));
  EXPECT_EQ(lv(oi), (std::vector<int64_t>{5, 0, 0, 3}));
  EXPECT_TRUE(contains(error_of<DtypeError>([&] { scatter_add(x, 1, L({0}, {1, 1}), D({1}, {1, 1})); }), "same dtype"));
  EXPECT_EQ(error_of<IndexError>([&] { scatter_add(x, 0, L({2}, {1, 1}), src); }),
            "scatter_add: index 2 is out of bounds for dimension 0 with size 2");
}

TEST(IndexingScatterAdd, GradCheck) {
  const Tensor x = leaf({3, 2}), src = leaf({2, 3});
  const Tensor idx = L({0, 2, 2, 2}, {2, 2});  // smaller than src in dim 1
  grad_check({x, src}, [&](const std::vector<Tensor>& v) { return scatter_add(v[0], 0, idx, v[1]); });
}

// ---------------------------------------------------------------- index_select / masked_select

TEST(IndexingIndexSelect, Values) {
  const Tensor x = F({1, 2, 3, 4, 5, 6}, {2, 3});
  EXPECT_EQ(fv(index_select(x, 1, L({2, 0, 2}, {3}))), (std::vector<float>{3, 1, 3, 6, 4, 6}));
  EXPECT_EQ(fv(index_select(x, -2, Tensor::from_vector<int32_t>({1}, {1}))), (std::vector<float>{4, 5, 6}));
  EXPECT_EQ(index_select(x, 0, Tensor::empty({0}, Dtype::Int64)).shape(), (Shape{0, 3}));
  EXPECT_EQ(fv(index_select(transpose(x, 0, 1), 0, L({2}, {1}))), (std::vector<float>{3, 6}));
  EXPECT_EQ(error_of<IndexError>([&] { index_select(x, 0, L({0, 2}, {2})); }),
            "index_select: index 2 is out of bounds for dimension 0 with size 2");
  EXPECT_TRUE(contains(error_of<ShapeError>([&] { index_select(x, 0, L({0, 1}, {1, 2})); }), "1-D"));
}

TEST(IndexingIndexSelect, GradCheck) {
  const Tensor x = leaf({3, 2, 2});
  grad_check({x}, [](const std::vector<Tensor>& v) { return index_select(v[0], 0, L({2, 0, 2, 2}, {4})); });
  grad_check({x}, [](const std::vector<Tensor>& v) { return index_select(v[0], 2, L({1, 1}, {2})); });
}

TEST(IndexingMaskedSelect, ValuesBroadcastAndGrad) {
  const Tensor x = F({1, 2, 3, 4, 5, 6}, {2, 3});
  const Tensor m = Tensor::from_vector<bool>({true, false, true}, {3});
  EXPECT_EQ(fv(masked_select(x, m)), (std::vector<float>{1, 3, 4, 6}));
  EXPECT_EQ(masked_select(x, Tensor::from_vector<bool>({false, false, false}, {3})).shape(), (Shape{0}));
  EXPECT_TRUE(contains(error_of<DtypeError>([&] { masked_select(x, L({1, 0, 1}, {3})); }), "bool"));
  EXPECT_TRUE(contains(error_of<ShapeError>([&] { masked_select(x, Tensor::from_vector<bool>({true, false}, {2})); }),
                       "broadcast"));
  Tensor y = leaf({3});
  const Tensor m2 = Tensor::from_vector<bool>({true, false, true, false, false, true}, {2, 3});
  Tensor s = masked_select(y, m2);  // y broadcast to (2, 3): picks y0, y2, y2
  EXPECT_EQ(s.shape(), (Shape{3}));
  sum(mul(s, D({1, 2, 3}, {3}))).backward();
  EXPECT_EQ(y.grad().to_vector<double>(), (std::vector<double>{1, 0, 5}));
}

// ---------------------------------------------------------------- topk / sort / argsort

TEST(IndexingTopk, Values) {
  const Tensor x = F({1, 5, 3, 9, 2, 7, 4, 8}, {2, 4});
  auto [v, i] = topk(x, 2);
  EXPECT_EQ(fv(v), (std::vector<float>{9, 5, 8, 7}));
  EXPECT_EQ(lv(i), (std::vector<int64_t>{3, 1, 3, 1}));
  auto [vs, is] = topk(x, 1, 0, false);
  EXPECT_EQ(fv(vs), (std::vector<float>{1, 5, 3, 8}));
  EXPECT_EQ(lv(is), (std::vector<int64_t>{0, 0, 0, 1}));
  auto [v0, i0] = topk(x, 0);
  EXPECT_EQ(v0.shape(), (Shape{2, 0}));
  // NaN is the largest value.
  const float nan = std::numeric_limits<float>::quiet_NaN();
  auto [vn, in] = topk(F({1, nan, 3}, {3}), 2);
  EXPECT_TRUE(std::isnan(fv(vn)[0]));
  EXPECT_EQ(fv(vn)[1], 3.0f);
  EXPECT_EQ(lv(in), (std::vector<int64_t>{1, 2}));
  // Half inputs keep their dtype.
  auto [vh, ih] = topk(x.to(Dtype::Float16), 1);
  EXPECT_EQ(vh.dtype(), Dtype::Float16);
  EXPECT_EQ(fv(vh), (std::vector<float>{9, 8}));
  EXPECT_EQ(error_of<ValueError>([&] { topk(x, 5); }), "topk: k (5) is out of range for dimension 1 of size 4");
}

TEST(IndexingTopk, GradCheck) {
  const Tensor x = leaf({3, 4});
  grad_check({x}, [](const std::vector<Tensor>& v) { return topk(v[0], 2, 1).first; });
  grad_check({x}, [](const std::vector<Tensor>& v) { return topk(v[0], 2, 0, false).first; });
}

TEST(IndexingSort, StableWithTiesAndNaN) {
  const Tensor x = F({3, 1, 2, 1, 3, 0}, {6});
  auto [v, i] = sort(x);
  EXPECT_EQ(fv(v), (std::vector<float>{0, 1, 1, 2, 3, 3}));
  EXPECT_EQ(lv(i), (std::vector<int64_t>{5, 1, 3, 2, 0, 4}));
  auto [vd, id] = sort(x, 0, true);
  EXPECT_EQ(fv(vd), (std::vector<float>{3, 3, 2, 1, 1, 0}));
  EXPECT_EQ(lv(id), (std::vector<int64_t>{0, 4, 2, 1, 3, 5}));
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const Tensor xn = F({2, nan, -1, nan, 5}, {5});
  EXPECT_EQ(lv(argsort(xn)), (std::vector<int64_t>{2, 0, 4, 1, 3}));
  EXPECT_EQ(lv(argsort(xn, 0, true)), (std::vector<int64_t>{1, 3, 4, 0, 2}));
  // Along dim 0 of a non-contiguous 2-D input, and for integer dtypes.
  const Tensor m = transpose(F({3, 1, 2, 6, 5, 4}, {2, 3}), 0, 1);  // [[3,6],[1,5],[2,4]]
  auto [mv, mi] = sort(m, 0);
  EXPECT_EQ(fv(mv), (std::vector<float>{1, 4, 2, 5, 3, 6}));
  EXPECT_EQ(lv(mi), (std::vector<int64_t>{1, 2, 2, 1, 0, 0}));
  auto [iv, ii] = sort(L({5, -2, 7}, {3}), -1, true);
  EXPECT_EQ(iv.dtype(), Dtype::Int64);
  EXPECT_EQ(lv(iv), (std::vector<int64_t>{7, 5, -2}));
  EXPECT_EQ(sort(Tensor::empty({0})).first.shape(), (Shape{0}));
  auto [bv, bi] = sort(x.to(Dtype::BFloat16));
  EXPECT_EQ(bv.dtype(), Dtype::BFloat16);
  EXPECT_EQ(fv(bv), (std::vector<float>{0, 1, 1, 2, 3, 3}));
}

TEST(IndexingSort, GradCheck) {
  const Tensor x = leaf({2, 3, 2});
  grad_check({x}, [](const std::vector<Tensor>& v) { return sort(v[0], 1, true).first; });
}

TEST(IndexingSort, LargeParallelMatchesSerialOrder) {
  // Enough work to use several threads; every row must come out sorted.
  const Tensor x = rand_seeded({64, 2048}, 7);
  auto [v, i] = sort(x, 1);
  const std::vector<float> vals = fv(v), xs = fv(x);
  const std::vector<int64_t> idx = lv(i);
  for (int64_t r = 0; r < 64; ++r) {
    for (int64_t c = 0; c < 2048; ++c) {
      ASSERT_EQ(vals[r * 2048 + c], xs[r * 2048 + idx[r * 2048 + c]]);
      if (c) ASSERT_LE(vals[r * 2048 + c - 1], vals[r * 2048 + c]);
    }
  }
}

// ---------------------------------------------------------------- cumsum

TEST(IndexingCumsum, Values) {
  const Tensor x = F({1, 2, 3, 4, 5, 6}, {2, 3});
  EXPECT_EQ(fv(cumsum(x, 1)), (std::vector<float>{1, 3, 6, 4, 9, 15}));
  EXPECT_EQ(fv(cumsum(x, -2)), (std::vector<float>{1, 2, 3, 5, 7, 9}));
  const Tensor ci = cumsum(Tensor::from_vector<int32_t>({1, 2, 3}, {3}), 0);
  EXPECT_EQ(ci.dtype(), Dtype::Int64);
  EXPECT_EQ(lv(ci), (std::vector<int64_t>{1, 3, 6}));
  const Tensor cb = cumsum(Tensor::from_vector<bool>({true, false, true}, {3}), 0);
  EXPECT_EQ(lv(cb), (std::vector<int64_t>{1, 1, 2}));
  EXPECT_EQ(fv(cumsum(transpose(x, 0, 1), 1)), (std::vector<float>{1, 5, 2, 7, 3, 9}));
  const Tensor ch = cumsum(x.to(Dtype::Float16), 1);
  EXPECT_EQ(ch.dtype(), Dtype::Float16);
  EXPECT_EQ(fv(ch), (std::vector<float>{1, 3, 6, 4, 9, 15}));
  EXPECT_EQ(cumsum(Tensor::empty({0, 3}), 0).shape(), (Shape{0, 3}));
  EXPECT_TRUE(contains(error_of<IndexError>([&] { cumsum(x, 2); }), "cumsum"));
}

TEST(IndexingCumsum, GradCheck) {
  const Tensor x = leaf({3, 4});
  grad_check({x}, [](const std::vector<Tensor>& v) { return cumsum(v[0], 1); });
  grad_check({x}, [](const std::vector<Tensor>& v) { return cumsum(v[0], 0); });
}

// ---------------------------------------------------------------- one_hot

TEST(IndexingOneHot, Values) {
  const Tensor o = one_hot(L({0, 2, 1}, {3}));
  EXPECT_EQ(o.dtype(), Dtype::Int64);
  EXPECT_EQ(o.shape(), (Shape{3, 3}));
  EXPECT_EQ(lv(o), (std::vector<int64_t>{1, 0, 0, 0, 0, 1, 0, 1, 0}));
  const Tensor o4 = one_hot(Tensor::from_vector<int32_t>({1, 3}, {2, 1}), 4);
  EXPECT_EQ(o4.shape(), (Shape{2, 1, 4}));
  EXPECT_EQ(lv(o4), (std::vector<int64_t>{0, 1, 0, 0, 0, 0, 0, 1}));
  EXPECT_EQ(one_hot(Tensor::empty({0}, Dtype::Int64), 5).shape(), (Shape{0, 5}));
  EXPECT_TRUE(contains(error_of<IndexError>([&] { one_hot(L({0, 3}, {2}), 3); }), "class value 3"));
  EXPECT_TRUE(contains(error_of<IndexError>([&] { one_hot(L({-1}, {1})); }), "non-negative"));
  EXPECT_TRUE(contains(error_of<ValueError>([&] { one_hot(Tensor::empty({0}, Dtype::Int64)); }), "empty"));
  EXPECT_TRUE(contains(error_of<DtypeError>([&] { one_hot(F({1}, {1})); }), "float32"));
}

// ---------------------------------------------------------------- tril / triu

TEST(IndexingTriangle, Values) {
  const Tensor x = F({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, {3, 4});
  EXPECT_EQ(fv(tril(x)), (std::vector<float>{1, 0, 0, 0, 5, 6, 0, 0, 9, 10, 11, 0}));
  EXPECT_EQ(fv(triu(x)), (std::vector<float>{1, 2, 3, 4, 0, 6, 7, 8, 0, 0, 11, 12}));
  EXPECT_EQ(fv(tril(x, -1)), (std::vector<float>{0, 0, 0, 0, 5, 0, 0, 0, 9, 10, 0, 0}));
  EXPECT_EQ(fv(triu(x, 2)), (std::vector<float>{0, 0, 3, 4, 0, 0, 0, 8, 0, 0, 0, 0}));
  const Tensor b = tril(stack({x, x}), 0);
  EXPECT_EQ(b.shape(), (Shape{2, 3, 4}));
  EXPECT_EQ(fv(select(b, 0, 1)), fv(tril(x)));
  EXPECT_EQ(fv(triu(transpose(F({1, 2, 3, 4}, {2, 2}), 0, 1))), (std::vector<float>{1, 3, 0, 4}));
  EXPECT_TRUE(contains(error_of<ShapeError>([&] { tril(F({1, 2}, {2})); }), "at least 2 dimensions"));
  const Tensor y = leaf({3, 3});
  grad_check({y}, [](const std::vector<Tensor>& v) { return triu(v[0], 1); });
  grad_check({y}, [](const std::vector<Tensor>& v) { return tril(v[0]); });
}

// ---------------------------------------------------------------- threaded paths against plain loops

TEST(IndexingLarge, ThreadedKernelsMatchReference) {
  const int64_t R = 300, C = 257;
  const Tensor x = rand_seeded({R, C}, 11, Dtype::Float64);
  const std::vector<double> xs = x.to_vector<double>();
  // cat along dim 1 of x and itself.
  const std::vector<double> cv = cat({x, x}, 1).to_vector<double>();
  for (int64_t r = 0; r < R; ++r) {
    for (int64_t c = 0; c < C; ++c) {
      ASSERT_EQ(cv[r * 2 * C + c], xs[r * C + c]);
      ASSERT_EQ(cv[r * 2 * C + C + c], xs[r * C + c]);
    }
  }
  // cumsum along dim 0 (strided columns) and dim 1.
  const std::vector<double> c0 = cumsum(x, 0).to_vector<double>();
  const std::vector<double> c1 = cumsum(x, 1).to_vector<double>();
  for (int64_t c = 0; c < C; ++c) {
    double acc = 0;
    for (int64_t r = 0; r < R; ++r) {
      acc += xs[r * C + c];
      ASSERT_NEAR(c0[r * C + c], acc, 1e-9);
    }
  }
  for (int64_t r = 0; r < R; ++r) {
    double acc = 0;
    for (int64_t c = 0; c < C; ++c) {
      acc += xs[r * C + c];
      ASSERT_NEAR(c1[r * C + c], acc, 1e-9);
    }
  }
  // scatter_add of x into 7 rows along dim 0 with index r % 7, then gather back.
  std::vector<int64_t> iv(R * C);
  for (int64_t r = 0; r < R; ++r) {
    for (int64_t c = 0; c < C; ++c) iv[r * C + c] = (r + c) % 7;
  }
  const Tensor idx = L(iv, {R, C});
  const std::vector<double> sv = scatter_add(zeros({7, C}, Dtype::Float64), 0, idx, x).to_vector<double>();
  std::vector<double> ref(7 * C, 0.0);
  for (int64_t r = 0; r < R; ++r) {
    for (int64_t c = 0; c < C; ++c) ref[iv[r * C + c] * C + c] += xs[r * C + c];
  }
  for (int64_t i = 0; i < 7 * C; ++i) ASSERT_NEAR(sv[i], ref[i], 1e-9);
  const std::vector<double> gv = gather(x, 0, idx).to_vector<double>();
  for (int64_t i = 0; i < R * C; ++i) ASSERT_EQ(gv[i], xs[iv[i] * C + i % C]);
  // index_select of reversed rows.
  std::vector<int64_t> rev(R);
  for (int64_t r = 0; r < R; ++r) rev[r] = R - 1 - r;
  const std::vector<double> isv = index_select(x, 0, L(rev, {R})).to_vector<double>();
  for (int64_t r = 0; r < R; ++r) {
    for (int64_t c = 0; c < C; ++c) ASSERT_EQ(isv[r * C + c], xs[(R - 1 - r) * C + c]);
  }
}

TEST(IndexingAutograd, PartialIndexAndIntegerOutputs) {
  // scatter_add where the index covers only part of self and src.
  const Tensor x = leaf({3, 3}), src = leaf({2, 3});
  const Tensor idx = L({2, 0, 1, 1}, {2, 2});
  grad_check({x, src}, [&](const std::vector<Tensor>& v) { return scatter_add(v[0], 0, idx, v[1]); });
  // Index outputs never carry history.
  Tensor y = leaf({4});
  EXPECT_FALSE(sort(y).second.requires_grad());
  EXPECT_FALSE(argsort(y).requires_grad());
  EXPECT_TRUE(topk(y, 2).first.requires_grad());
  // Double backward through gather: d/dx of sum((dL/dx)^2) where L = sum(gather(x)^2).
  Tensor z = leaf({3});
  const Tensor gi = L({0, 0, 2}, {3});
  Tensor l = sum(square(gather(z, 0, gi)));
  auto g = grad({l}, {z}, {}, false, true);
  // dL/dz = [4 z0, 0, 2 z2]; second: d/dz sum(dL/dz) = [4, 0, 2]
  sum(g[0]).backward();
  EXPECT_EQ(z.grad().to_vector<double>(), (std::vector<double>{4, 0, 2}));
}
