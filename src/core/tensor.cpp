#include "spiraltorch/tensor.h"

#include <cmath>
#include <sstream>

#include "spiraltorch/autograd.h"
#include "spiraltorch/ops.h"

namespace st {

Shape contiguous_strides(const Shape& shape) {
  Shape strides(shape.size());
  int64_t s = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    strides[i] = s;
    s *= shape[i] > 0 ? shape[i] : 1;
  }
  return strides;
}

int64_t checked_numel(const Shape& shape, size_t itemsize, const char* op) {
  if (static_cast<int64_t>(shape.size()) > kMaxDims) {
    throw ShapeError(std::string(op) + ": " + std::to_string(shape.size()) + " dimensions exceed the maximum of " +
                     std::to_string(kMaxDims));
  }
  // The product of the non-zero dims must fit too: strides are built from it, even when a
  // zero dim makes the tensor empty.
  int64_t n = 1;
  bool empty = false;
  for (const int64_t d : shape) {
    if (d < 0)
      throw ShapeError(std::string(op) + ": negative dimension " + std::to_string(d) + " in shape " + shape_str(shape));
    if (d == 0) {
      empty = true;
    } else if (__builtin_mul_overflow(n, d, &n)) {
      throw ShapeError(std::string(op) + ": shape " + shape_str(shape) + " has more elements than fit in int64");
    }
  }
  if (empty) return 0;
  int64_t bytes = 0;
  if (itemsize > 0 && __builtin_mul_overflow(n, static_cast<int64_t>(itemsize), &bytes)) {
    throw ShapeError(std::string(op) + ": shape " + shape_str(shape) + " of " + std::to_string(n) + " elements times " +
                     std::to_string(itemsize) + " bytes exceeds the addressable size");
  }
  return n;
}

int64_t shape_numel(const Shape& shape) {
  int64_t n = 1;
  for (const int64_t d : shape) n *= d;
  return n;
}

std::string shape_str(const Shape& shape) {
  std::ostringstream os;
  os << '(';
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) os << ", ";
    os << shape[i];
  }
  if (shape.size() == 1) os << ',';
  os << ')';
  return os.str();
}

Tensor Tensor::empty(const Shape& shape, Dtype dtype, Device device) {
  const int64_t n = checked_numel(shape, dtype_size(dtype), "empty");
  auto impl = std::make_shared<TensorImpl>();
  impl->storage = Storage::allocate(static_cast<size_t>(n) * dtype_size(dtype), device);
  impl->shape = shape;
  impl->strides = contiguous_strides(shape);
  impl->dtype = dtype;
  return Tensor(std::move(impl));
}

Tensor Tensor::from_storage(std::shared_ptr<Storage> storage, const Shape& shape, const Shape& strides, int64_t offset,
                            Dtype dtype) {
  // Views may repeat elements (expand), so only the element count is bounded here, not bytes.
  checked_numel(shape, 0, "view");
  if (strides.size() != shape.size()) {
    throw ShapeError("view: " + std::to_string(strides.size()) + " strides for shape " + shape_str(shape));
  }
  auto impl = std::make_shared<TensorImpl>();
  impl->storage = std::move(storage);
  impl->shape = shape;
  impl->strides = strides;
  impl->offset = offset;
  impl->dtype = dtype;
  return Tensor(std::move(impl));
}

template <typename T>
Tensor Tensor::from_vector(const std::vector<T>& values, const Shape& shape) {
  if (static_cast<int64_t>(values.size()) != shape_numel(shape)) {
    throw ShapeError("from_vector: " + std::to_string(values.size()) + " values cannot fill shape " + shape_str(shape) +
                     " of " + std::to_string(shape_numel(shape)) + " elements");
  }
  Tensor t = empty(shape, dtype_of<T>::value);
  std::copy(values.begin(), values.end(), t.data<T>());
  return t;
}

int64_t Tensor::size(int64_t d) const { return impl_->shape[wrap_existing_dim(d, dim(), "size")]; }

bool Tensor::is_contiguous() const {
  int64_t expected = 1;
  for (size_t i = impl_->shape.size(); i-- > 0;) {
    if (impl_->shape[i] == 1) continue;
    if (impl_->strides[i] != expected) return false;
    expected *= impl_->shape[i];
  }
  return true;
}

AutogradMeta& Tensor::autograd_meta() {
  if (!impl_->autograd) impl_->autograd = std::make_unique<AutogradMeta>();
  return *impl_->autograd;
}

Tensor& Tensor::set_requires_grad(bool flag) {
  if (flag && !is_floating(dtype())) {
    throw DtypeError(std::string("requires_grad: only floating-point tensors can require gradients, got ") +
                     dtype_name(dtype()));
  }
  if (!flag && !is_leaf()) {
    throw SpiralError("requires_grad: cannot turn off requires_grad on a non-leaf tensor; use detach()");
  }
  autograd_meta().requires_grad = flag;
  return *this;
}

Tensor Tensor::grad() const {
  if (!impl_->autograd || !impl_->autograd->grad) return {};
  return Tensor(impl_->autograd->grad);
}

void Tensor::set_grad(const Tensor& g) {
  if (g.defined() && !is_floating(g.dtype())) {
    // Optimizers and accumulation assume floating gradients, as PyTorch does.
    throw DtypeError(std::string("grad: assigned gradient has dtype ") + dtype_name(g.dtype()) +
                     "; gradients must be floating-point");
  }
  if (g.defined() && g.shape() != shape()) {
    throw ShapeError("grad: assigned gradient of shape " + shape_str(g.shape()) + " to a tensor of shape " +
                     shape_str(shape()));
  }
  autograd_meta().grad = g.defined() ? g.impl_ptr() : nullptr;
}

void Tensor::retain_grad() {
  if (!requires_grad()) throw SpiralError("retain_grad: tensor does not require grad");
  if (!is_leaf()) {
    autograd_meta().retains_grad = true;
    grad_fn()->retain(output_nr(), impl_);
  }
}

void Tensor::backward(const Tensor& gradient, bool retain_graph, bool create_graph) const {
  run_backward({*this}, {gradient}, retain_graph, create_graph);
}

void Tensor::set_manifold_curvature(double curvature) {
  if (!(curvature <= 0.0) || !std::isfinite(curvature)) {
    throw ValueError("set_manifold_curvature: curvature must be negative (a Poincare ball) or 0, got " +
                     std::to_string(curvature));
  }
  impl_->manifold_curvature = curvature;
}

Tensor Tensor::detach() const {
  return from_storage(impl_->storage, impl_->shape, impl_->strides, impl_->offset, impl_->dtype);
}

Tensor Tensor::contiguous() const { return is_contiguous() ? *this : clone(); }

Tensor Tensor::to(Dtype d) const { return d == dtype() ? *this : cast(*this, d); }

double Tensor::item() const {
  if (numel() != 1) {
    throw ValueError("item: only one-element tensors can be converted to a number, got shape " + shape_str(shape()));
  }
  if (device().type != DeviceType::CPU) return to_device(detach(), Device()).item();
  return ST_DISPATCH_ALL(dtype(), [&] { return to_double(*data<scalar_t>()); });
}

template <typename T>
std::vector<T> Tensor::to_vector() const {
  // To the host in the stored dtype, converted there: fewer bytes over the bus, and devices
  // without T (float64 on wgpu) can still be read.
  Tensor c = detach();
  if (c.device().type != DeviceType::CPU) c = to_device(c.contiguous(), Device());
  c = c.to(dtype_of<T>::value).contiguous();
  const T* p = c.data<T>();
  return std::vector<T>(p, p + c.numel());
}

#define ST_INSTANTIATE(T)                                                      \
  template Tensor Tensor::from_vector<T>(const std::vector<T>&, const Shape&); \
  template std::vector<T> Tensor::to_vector<T>() const;
ST_INSTANTIATE(float)
ST_INSTANTIATE(double)
ST_INSTANTIATE(int64_t)
ST_INSTANTIATE(int32_t)
ST_INSTANTIATE(uint8_t)
ST_INSTANTIATE(bool)
#undef ST_INSTANTIATE

}  // namespace st
