#pragma once
// The functional API. Every op checks its arguments, dispatches to the tensor's
// backend and records an autograd node when an input requires a gradient.
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "spiraltorch/generator.h"
#include "spiraltorch/tensor.h"

namespace st {

using Dims = std::vector<int64_t>;

// ---- creation ----
Tensor zeros(const Shape& shape, Dtype dtype = Dtype::Float32, Device device = {});
Tensor ones(const Shape& shape, Dtype dtype = Dtype::Float32, Device device = {});
Tensor full(const Shape& shape, Scalar value, std::optional<Dtype> dtype = {}, Device device = {});
Tensor scalar_tensor(Scalar value, Dtype dtype, Device device = {});
// A copy of x on `device` (x itself when it is already there); differentiable: the
// gradient is moved back. Copies between devices go through the backend copy entry.
Tensor to_device(const Tensor& x, Device device);
// Built on the host and copied when `device` is not the CPU (a handful of values).
Tensor arange(double start, double end, double step = 1.0, std::optional<Dtype> dtype = {}, Device device = {});
Tensor linspace(double start, double end, int64_t steps, Dtype dtype = Dtype::Float32);
Tensor eye(int64_t n, std::optional<int64_t> m = {}, Dtype dtype = Dtype::Float32);
Tensor zeros_like(const Tensor& t, std::optional<Dtype> dtype = {});
Tensor ones_like(const Tensor& t, std::optional<Dtype> dtype = {});
Tensor full_like(const Tensor& t, Scalar value, std::optional<Dtype> dtype = {});
// Random tensors from `gen`, or the global Philox generator when it is null.
Tensor rand(const Shape& shape, Dtype dtype = Dtype::Float32, Generator* gen = nullptr);
Tensor randn(const Shape& shape, Dtype dtype = Dtype::Float32, Generator* gen = nullptr);
Tensor randint(int64_t low, int64_t high, const Shape& shape, Dtype dtype = Dtype::Int64, Generator* gen = nullptr);
Tensor normal(double mean, double std, const Shape& shape, Dtype dtype = Dtype::Float32, Generator* gen = nullptr);
Tensor uniform(double low, double high, const Shape& shape, Dtype dtype = Dtype::Float32, Generator* gen = nullptr);
// Same, from an explicit seed without touching the global generator.
Tensor rand_seeded(const Shape& shape, uint64_t seed, Dtype dtype = Dtype::Float32);

// ---- elementwise binary (NumPy broadcasting, type promotion) ----
Tensor add(const Tensor& a, const Tensor& b, Scalar alpha = 1.0);
Tensor sub(const Tensor& a, const Tensor& b, Scalar alpha = 1.0);
Tensor mul(const Tensor& a, const Tensor& b);
Tensor div(const Tensor& a, const Tensor& b);
Tensor floor_divide(const Tensor& a, const Tensor& b);
Tensor remainder(const Tensor& a, const Tensor& b);
Tensor pow(const Tensor& a, const Tensor& b);
Tensor minimum(const Tensor& a, const Tensor& b);
Tensor maximum(const Tensor& a, const Tensor& b);
Tensor atan2(const Tensor& a, const Tensor& b);
Tensor eq(const Tensor& a, const Tensor& b);
Tensor ne(const Tensor& a, const Tensor& b);
Tensor lt(const Tensor& a, const Tensor& b);
Tensor le(const Tensor& a, const Tensor& b);
Tensor gt(const Tensor& a, const Tensor& b);
Tensor ge(const Tensor& a, const Tensor& b);
Tensor logical_and(const Tensor& a, const Tensor& b);
Tensor logical_or(const Tensor& a, const Tensor& b);
Tensor logical_xor(const Tensor& a, const Tensor& b);
// Tensor-scalar forms: the scalar adopts the tensor's dtype unless it changes category.
Tensor add(const Tensor& a, Scalar b);
Tensor sub(const Tensor& a, Scalar b);
Tensor rsub(const Tensor& a, Scalar b);  // b - a
Tensor mul(const Tensor& a, Scalar b);
Tensor div(const Tensor& a, Scalar b);
Tensor rdiv(const Tensor& a, Scalar b);  // b / a
Tensor pow(const Tensor& a, Scalar exponent);
Tensor rpow(const Tensor& a, Scalar base);  // base ** a
// Wraps a scalar as a 0-d tensor with the dtype it takes next to `like`.
Tensor wrap_scalar(Scalar s, const Tensor& like);

// ---- elementwise unary ----
Tensor neg(const Tensor& x);
Tensor abs(const Tensor& x);
Tensor sign(const Tensor& x);
Tensor exp(const Tensor& x);
Tensor log(const Tensor& x);
Tensor log1p(const Tensor& x);
Tensor expm1(const Tensor& x);
Tensor sqrt(const Tensor& x);
Tensor rsqrt(const Tensor& x);
Tensor square(const Tensor& x);
Tensor reciprocal(const Tensor& x);
Tensor sin(const Tensor& x);
Tensor cos(const Tensor& x);
Tensor tan(const Tensor& x);
Tensor tanh(const Tensor& x);
Tensor atanh(const Tensor& x);
Tensor sigmoid(const Tensor& x);
Tensor erf(const Tensor& x);
// log |Gamma(x)| and its derivative digamma (psi), PyTorch's values at the poles (lgamma +inf,
// digamma -inf at 0 and NaN at the negative integers); integer inputs give float32.
Tensor lgamma(const Tensor& x);
Tensor digamma(const Tensor& x);
Tensor relu(const Tensor& x);
Tensor gelu(const Tensor& x, bool tanh_approximation = false);
Tensor silu(const Tensor& x);
Tensor softplus(const Tensor& x, double beta = 1.0, double threshold = 20.0);
Tensor leaky_relu(const Tensor& x, double negative_slope = 0.01);
Tensor elu(const Tensor& x, double alpha = 1.0);
Tensor floor(const Tensor& x);
Tensor ceil(const Tensor& x);
Tensor round(const Tensor& x);
Tensor trunc(const Tensor& x);
Tensor logical_not(const Tensor& x);
Tensor isnan(const Tensor& x);
Tensor isinf(const Tensor& x);
Tensor isfinite(const Tensor& x);
Tensor clamp(const Tensor& x, std::optional<Scalar> min, std::optional<Scalar> max);
Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b);
Tensor masked_fill(const Tensor& x, const Tensor& mask, Scalar value);
Tensor cast(const Tensor& x, Dtype dtype);

// ---- reductions (empty dims = all dims) ----
Tensor sum(const Tensor& x, const Dims& dims = {}, bool keepdim = false, std::optional<Dtype> dtype = {});
Tensor mean(const Tensor& x, const Dims& dims = {}, bool keepdim = false);
Tensor var(const Tensor& x, const Dims& dims = {}, double correction = 1.0, bool keepdim = false);
Tensor std(const Tensor& x, const Dims& dims = {}, double correction = 1.0, bool keepdim = false);
Tensor prod(const Tensor& x, const Dims& dims = {}, bool keepdim = false);
Tensor amax(const Tensor& x, const Dims& dims = {}, bool keepdim = false);
Tensor amin(const Tensor& x, const Dims& dims = {}, bool keepdim = false);
// Values and int64 indices along one dim.
std::pair<Tensor, Tensor> max(const Tensor& x, int64_t dim, bool keepdim = false);
std::pair<Tensor, Tensor> min(const Tensor& x, int64_t dim, bool keepdim = false);
Tensor max(const Tensor& x);
Tensor min(const Tensor& x);
Tensor argmax(const Tensor& x, std::optional<int64_t> dim = {}, bool keepdim = false);
Tensor argmin(const Tensor& x, std::optional<int64_t> dim = {}, bool keepdim = false);
Tensor logsumexp(const Tensor& x, const Dims& dims, bool keepdim = false);
// p-norm; p = INFINITY gives max |x|.
Tensor norm(const Tensor& x, double p = 2.0, const Dims& dims = {}, bool keepdim = false);
// Whether every / any element is nonzero, over `dims` (all of them when empty); a bool tensor.
Tensor all(const Tensor& x, const Dims& dims = {}, bool keepdim = false);
Tensor any(const Tensor& x, const Dims& dims = {}, bool keepdim = false);

// ---- linear algebra and normalisers ----
Tensor matmul(const Tensor& a, const Tensor& b);
Tensor bmm(const Tensor& a, const Tensor& b);
Tensor softmax(const Tensor& x, int64_t dim = -1);
Tensor log_softmax(const Tensor& x, int64_t dim = -1);

// ---- activations composed from the ops above (src/ops/activations.cpp) ----
// Each has PyTorch's forward and gradient, including at the kinks (hardtanh passes no gradient at
// min_val/max_val), and runs on every device through the ops it is built from.
// Floating inputs only (DtypeError otherwise).
Tensor selu(const Tensor& x);                      // scale * elu(x, alpha) with PyTorch's constants
Tensor celu(const Tensor& x, double alpha = 1.0);  // max(0, x) + min(0, alpha * expm1(x / alpha))
Tensor mish(const Tensor& x);                      // x * tanh(softplus(x))
Tensor hardswish(const Tensor& x);                 // x * hardtanh(x + 3, 0, 6) / 6
Tensor hardsigmoid(const Tensor& x);               // clamp(x + 3, 0, 6) / 6
Tensor hardtanh(const Tensor& x, double min_val = -1.0, double max_val = 1.0);
Tensor relu6(const Tensor& x);       // hardtanh(x, 0, 6)
Tensor logsigmoid(const Tensor& x);  // log(sigmoid(x)) = -softplus(-x)
Tensor softsign(const Tensor& x);    // x / (1 + |x|)
Tensor tanhshrink(const Tensor& x);  // x - tanh(x)
// x where x > threshold, else value (NaN stays NaN, as in PyTorch).
Tensor threshold(const Tensor& x, double threshold, double value);
// max(0, x) + weight * min(0, x); weight has 1 element or one per channel (dim 1 of x).
Tensor prelu(const Tensor& x, const Tensor& weight);
// a * sigmoid(b) where a, b are the halves of x along dim (its size must be even).
Tensor glu(const Tensor& x, int64_t dim = -1);
Tensor softmin(const Tensor& x, int64_t dim = -1);  // softmax(-x, dim)

// ---- views (share storage) ----
Tensor reshape(const Tensor& x, const Shape& shape);  // a view when strides allow, else a copy
Tensor view(const Tensor& x, const Shape& shape);     // always a view, or ShapeError
Tensor transpose(const Tensor& x, int64_t d0, int64_t d1);
Tensor permute(const Tensor& x, const Dims& order);
Tensor t(const Tensor& x);  // reverses all dims (the `.T` of NumPy)
Tensor slice(const Tensor& x, int64_t dim, int64_t start, int64_t end, int64_t step = 1);
Tensor select(const Tensor& x, int64_t dim, int64_t index);
Tensor narrow(const Tensor& x, int64_t dim, int64_t start, int64_t length);
Tensor expand(const Tensor& x, const Shape& shape);
Tensor squeeze(const Tensor& x, std::optional<int64_t> dim = {});
Tensor unsqueeze(const Tensor& x, int64_t dim);
Tensor flatten(const Tensor& x, int64_t start_dim = 0, int64_t end_dim = -1);
Tensor broadcast_to(const Tensor& x, const Shape& shape);
Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op);

// ---- joining, splitting, indexing ----
Tensor cat(const std::vector<Tensor>& xs, int64_t dim = 0);
Tensor stack(const std::vector<Tensor>& xs, int64_t dim = 0);
std::vector<Tensor> split(const Tensor& x, int64_t split_size, int64_t dim = 0);
std::vector<Tensor> split(const Tensor& x, const std::vector<int64_t>& sizes, int64_t dim = 0);
std::vector<Tensor> chunk(const Tensor& x, int64_t chunks, int64_t dim = 0);
Tensor gather(const Tensor& x, int64_t dim, const Tensor& index);
Tensor scatter_add(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src);
Tensor index_select(const Tensor& x, int64_t dim, const Tensor& index);
Tensor masked_select(const Tensor& x, const Tensor& mask);
// Values and int64 indices of the k largest (or smallest) entries along `dim`.
std::pair<Tensor, Tensor> topk(const Tensor& x, int64_t k, int64_t dim = -1, bool largest = true, bool sorted = true);
std::pair<Tensor, Tensor> sort(const Tensor& x, int64_t dim = -1, bool descending = false);
Tensor argsort(const Tensor& x, int64_t dim = -1, bool descending = false);
// ---- scans along one dim (src/ops/scan.cpp); floating results are differentiable ----
// Running sums; integers and bool accumulate in int64.
Tensor cumsum(const Tensor& x, int64_t dim);
// Running products, integers and bool in int64 unless `dtype` (applied first) says otherwise; the
// gradient is exact where x has zeros.
Tensor cumprod(const Tensor& x, int64_t dim, std::optional<Dtype> dtype = {});
// log(cumsum(exp(x))) computed stably (integers give float32).
Tensor logcumsumexp(const Tensor& x, int64_t dim);
// Running maxima / minima and the int64 index each came from: a later equal value takes over, and so
// does every NaN (torch.cummax); the gradient goes to the chosen elements.
std::pair<Tensor, Tensor> cummax(const Tensor& x, int64_t dim);
std::pair<Tensor, Tensor> cummin(const Tensor& x, int64_t dim);
// The n-th forward difference x[i+1] - x[i] along dim (xor for bool), after joining prepend and
// append (each may be undefined) to x.
Tensor diff(const Tensor& x, int64_t n = 1, int64_t dim = -1, const Tensor& prepend = {}, const Tensor& append = {});
// ---- products (src/ops/products.cpp), as torch's ----
Tensor outer(const Tensor& a, const Tensor& b);  // a[i] * b[j] of two 1-D tensors
Tensor kron(const Tensor& a, const Tensor& b);   // the Kronecker product
Tensor trace(const Tensor& x);                   // the sum of a 2-D tensor's main diagonal
// The 3-vector cross product along dim (shapes broadcast; no dim: the first dim of size 3).
Tensor cross(const Tensor& a, const Tensor& b, std::optional<int64_t> dim = {});
// Sums of products of a and b over a's last `dims` dims and b's first `dims` (torch.tensordot),
// or over the pairs (dims_a[i], dims_b[i]); a permute/reshape/matmul composite.
Tensor tensordot(const Tensor& a, const Tensor& b, int64_t dims = 2);
Tensor tensordot(const Tensor& a, const Tensor& b, const Dims& dims_a, const Dims& dims_b);
// Pairwise p-norm distances (src/ops/distance.cpp) between the rows of x1 (..., P, M) and x2 (..., R, M): (..., P, R),
// from the differences (not the |a|^2 + |b|^2 - 2ab shortcut); p = INFINITY is the max norm, p = 0
// counts the differing coordinates.
Tensor cdist(const Tensor& x1, const Tensor& x2, double p = 2.0);
// Coordinate grids (src/ops/grids.cpp) of 0-D or 1-D tensors: expanded views, `indexing` "ij" (matrix) or "xy"
// (Cartesian: the first two swapped), as torch.meshgrid.
std::vector<Tensor> meshgrid(const std::vector<Tensor>& tensors, const std::string& indexing = "ij");
// ---- reordering (src/ops/reorder.cpp): copies, differentiable ----
// x reversed along each of `dims` (no dims: a copy).
Tensor flip(const Tensor& x, const Dims& dims);
// x shifted cyclically by shifts[i] along dims[i]; with no dims, the flattened x by shifts[0].
Tensor roll(const Tensor& x, const Dims& shifts, const Dims& dims = {});
// ---- weighted sums (src/ops/blend.cpp), as their torch namesakes ----
Tensor lerp(const Tensor& start, const Tensor& end, const Tensor& weight);  // start + weight * (end - start)
Tensor lerp(const Tensor& start, const Tensor& end, Scalar weight);
Tensor addcmul(const Tensor& x, const Tensor& tensor1, const Tensor& tensor2, Scalar value = 1.0);
Tensor addcdiv(const Tensor& x, const Tensor& tensor1, const Tensor& tensor2, Scalar value = 1.0);
// beta * x + alpha * (mat1 @ mat2) for 2-D mat1, mat2 (x broadcast); beta = 0 ignores x, NaN included.
Tensor addmm(const Tensor& x, const Tensor& mat1, const Tensor& mat2, Scalar beta = 1.0, Scalar alpha = 1.0);
// The same for 3-D batches: beta * x + alpha * bmm(batch1, batch2).
Tensor baddbmm(const Tensor& x, const Tensor& batch1, const Tensor& batch2, Scalar beta = 1.0, Scalar alpha = 1.0);
// ---- elementwise functions composed from the ops above (src/ops/numeric.cpp), as torch's ----
// |a - b| <= atol + rtol |b| or a == b (and both NaN with equal_nan); bool.
Tensor isclose(const Tensor& a, const Tensor& b, double rtol = 1e-05, double atol = 1e-08, bool equal_nan = false);
// NaN -> nan, +inf -> posinf, -inf -> neginf (the dtype's finite extremes by default); integers are copied.
Tensor nan_to_num(const Tensor& x, double nan = 0.0, std::optional<double> posinf = {},
                  std::optional<double> neginf = {});
Tensor heaviside(const Tensor& x, const Tensor& values);        // 0 below 0, 1 above, values at 0
Tensor hypot(const Tensor& a, const Tensor& b);                 // sqrt(a^2 + b^2) without overflow
Tensor fmod(const Tensor& a, const Tensor& b);                  // the C remainder: the dividend's sign
Tensor frac(const Tensor& x);                                   // x - trunc(x)
Tensor xlogy(const Tensor& x, const Tensor& y);                 // x log y, 0 where x == 0
Tensor logit(const Tensor& x, std::optional<double> eps = {});  // log(p / (1 - p)), p clamped to [eps, 1 - eps]
Tensor sinc(const Tensor& x);                                   // sin(pi x) / (pi x), 1 at 0
// A view with the dims at `source` moved to `destination` (the others keep their order).
Tensor movedim(const Tensor& x, const Dims& source, const Dims& destination);
// dim `dim` expanded into `sizes` (one may be -1).
Tensor unflatten(const Tensor& x, int64_t dim, const Shape& sizes);
// The slices along dim (views without that dim).
std::vector<Tensor> unbind(const Tensor& x, int64_t dim = 0);
// `sections` nearly equal views along dim (the first size % sections one longer), or views split at
// `indices` (clamped to the size).
std::vector<Tensor> tensor_split(const Tensor& x, int64_t sections, int64_t dim = 0);
std::vector<Tensor> tensor_split(const Tensor& x, const std::vector<int64_t>& indices, int64_t dim = 0);
// x rotated by 90 degrees k times in the plane of dims (from the first towards the second); a copy.
Tensor rot90(const Tensor& x, int64_t k = 1, const Dims& dims = {0, 1});
// Values of x at `indices` (int64/int32) along dim, the other dims broadcast; with no dim, of the
// flattened x.
Tensor take_along_dim(const Tensor& x, const Tensor& indices, std::optional<int64_t> dim = {});
// ---- sampling (src/ops/sampling.cpp) ----
// One Poisson count per rate (floating, finite, in [0, 1e6]; the rates' dtype), drawn from `gen`
// (the global generator when null) on the rates' device; not differentiable.
Tensor poisson(const Tensor& rates, Generator* gen = nullptr);
// 1 with probability probs[i], else 0, in the probabilities' dtype (floating, each in [0, 1]); the
// uniforms come from the backend's random entry on probs' device. Not differentiable.
Tensor bernoulli(const Tensor& probs, Generator* gen = nullptr);
// The same with one probability p for every element of x (x's shape, device and dtype).
Tensor bernoulli(const Tensor& x, double p, Generator* gen = nullptr);
// num_samples int64 category indices per row of the 1-D or 2-D non-negative weights: with
// replacement by searching uniforms in each row's cumulative distribution, without by the Gumbel
// top-k trick (the law of drawing one at a time without replacement), as torch.multinomial.
Tensor multinomial(const Tensor& probs, int64_t num_samples, bool replacement = false, Generator* gen = nullptr);
// A uniformly random permutation of 0 .. n-1: the argsort of n uniforms drawn on `device`.
Tensor randperm(int64_t n, Dtype dtype = Dtype::Int64, Device device = {}, Generator* gen = nullptr);
// ---- sorted search (src/ops/search.cpp; kernel Backend::searchsorted, a comparison count elsewhere) ----
// For each value, the index at which it would be inserted into the sorted last dim of
// `sorted_sequence` (the first such place, or after equal entries with `right`); NaN goes last. A
// 1-D sequence serves every value, else the leading dims of both agree. `sorter` (int64, the
// sequence's shape) gives the sorted order of an unsorted sequence. int64 (int32 with out_int32).
Tensor searchsorted(const Tensor& sorted_sequence, const Tensor& values, bool right = false, bool out_int32 = false,
                    const Tensor& sorter = {});
// One scalar value: a 0-d result.
Tensor searchsorted(const Tensor& sorted_sequence, Scalar value, bool right = false, bool out_int32 = false,
                    const Tensor& sorter = {});
// The bucket of each value given sorted 1-D boundaries: i with boundaries[i-1] < x <= boundaries[i]
// (boundaries[i-1] <= x < boundaries[i] with `right`), as torch.bucketize.
Tensor bucketize(const Tensor& values, const Tensor& boundaries, bool right = false, bool out_int32 = false);
Tensor one_hot(const Tensor& index, int64_t num_classes = -1);
Tensor tril(const Tensor& x, int64_t diagonal = 0);
Tensor triu(const Tensor& x, int64_t diagonal = 0);
// Einstein summation ("ij,jk->ik", "bij,bjk->bik", "ii->i", "...ij,...jk"), lowered to
// sum/permute/reshape/matmul, so it has gradients on every device.
Tensor einsum(const std::string& equation, const std::vector<Tensor>& operands);

// ---- in place (bump the version counter; refused on leaves that require grad) ----
Tensor& add_(Tensor& x, const Tensor& other, Scalar alpha = 1.0);
Tensor& sub_(Tensor& x, const Tensor& other, Scalar alpha = 1.0);
Tensor& mul_(Tensor& x, const Tensor& other);
Tensor& div_(Tensor& x, const Tensor& other);
Tensor& add_(Tensor& x, Scalar other);
Tensor& mul_(Tensor& x, Scalar other);
Tensor& zero_(Tensor& x);
Tensor& fill_(Tensor& x, Scalar value);
Tensor& copy_(Tensor& x, const Tensor& src);
Tensor& clamp_(Tensor& x, std::optional<Scalar> min, std::optional<Scalar> max);
Tensor& masked_fill_(Tensor& x, const Tensor& mask, Scalar value);
// Fills with random values in place (used by initialisers); never recorded.
// x = f(x) written into x's memory under autograd's in-place rules: f runs on a private copy
// when x is part of a graph (what f's backward saves is not overwritten) and x then carries f's
// history; a leaf that requires grad is refused (op names the caller). Returns x.
Tensor& apply_inplace_(Tensor& x, const std::function<Tensor(const Tensor&)>& f, const char* op);
Tensor& uniform_(Tensor& x, double low, double high);
Tensor& normal_(Tensor& x, double mean, double std);

// ---- comparisons of whole tensors ----
bool allclose(const Tensor& a, const Tensor& b, double rtol = 1e-5, double atol = 1e-8);

// ---- operators ----
inline Tensor operator+(const Tensor& a, const Tensor& b) { return add(a, b); }
inline Tensor operator-(const Tensor& a, const Tensor& b) { return sub(a, b); }
inline Tensor operator*(const Tensor& a, const Tensor& b) { return mul(a, b); }
inline Tensor operator/(const Tensor& a, const Tensor& b) { return div(a, b); }
inline Tensor operator+(const Tensor& a, Scalar b) { return add(a, b); }
inline Tensor operator-(const Tensor& a, Scalar b) { return sub(a, b); }
inline Tensor operator*(const Tensor& a, Scalar b) { return mul(a, b); }
inline Tensor operator/(const Tensor& a, Scalar b) { return div(a, b); }
inline Tensor operator*(Scalar a, const Tensor& b) { return mul(b, a); }
inline Tensor operator+(Scalar a, const Tensor& b) { return add(b, a); }
inline Tensor operator-(Scalar a, const Tensor& b) { return rsub(b, a); }
inline Tensor operator-(const Tensor& a) { return neg(a); }

// Normalises a possibly negative dim against `ndim`, naming `op` in errors.
int64_t wrap_dim(int64_t dim, int64_t ndim, const char* op);
// As wrap_dim, for ops that index an existing dimension (size, stride, slice, narrow, select): a
// 0-dim tensor has none, so every dim is refused there (wrap_dim lets 0 and -1 through for reductions).
int64_t wrap_existing_dim(int64_t dim, int64_t ndim, const char* op);

}  // namespace st
