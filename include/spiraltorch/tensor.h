#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "spiraltorch/device.h"
#include "spiraltorch/dtype.h"
#include "spiraltorch/error.h"
#include "spiraltorch/scalar.h"
#include "spiraltorch/storage.h"

namespace st {

using Shape = std::vector<int64_t>;
class Tensor;
struct Node;
struct TensorImpl;

// Autograd state; allocated only for tensors that take part in a graph.
struct GradHooks;  // autograd.h

struct AutogradMeta {
  bool requires_grad = false;
  bool retains_grad = false;
  std::shared_ptr<TensorImpl> grad;
  std::shared_ptr<Node> grad_fn;
  // Which output of grad_fn this tensor is (a node may have several: svd's U, S and Vh); its
  // gradient goes into that output's slot.
  uint32_t output_nr = 0;
  // The tensor this one is a view of, when that tensor is part of a graph; in-place
  // writes through such a view are refused because they would bypass the graph.
  std::shared_ptr<TensorImpl> view_base;
  // A leaf's gradient hooks (register_hook); a non-leaf keeps its own on its grad_fn.
  std::shared_ptr<GradHooks> grad_hooks;
};

struct TensorImpl {
  std::shared_ptr<Storage> storage;
  int64_t offset = 0;  // in elements
  Shape shape;
  Shape strides;  // in elements
  Dtype dtype = Dtype::Float32;
  std::unique_ptr<AutogradMeta> autograd;
  // < 0 for a manifold parameter: its rows are points of the Poincare ball of this
  // curvature (the Riemannian optimizers read it); 0 for an ordinary tensor.
  double manifold_curvature = 0.0;
  // A number from an operator's scalar argument (x * 0.1) held as a 0-dim tensor: like PyTorch's
  // wrapped numbers it never promotes a tensor of its category, 0-dim tensors included.
  bool wrapped_number = false;
};

// The most dimensions a tensor may have (PyTorch's limit for many paths); deeper shapes
// would overflow fixed-size index arrays in NumPy and recursion in printing.
inline constexpr int64_t kMaxDims = 64;

Shape contiguous_strides(const Shape& shape);
int64_t shape_numel(const Shape& shape);
// The one place shapes are validated: at most kMaxDims dims, none negative, and the
// element count (and, when itemsize > 0, the byte size) fits in int64. Returns the
// element count; throws ShapeError naming `op` otherwise. Every tensor is built through
// Tensor::empty or Tensor::from_storage, which both call it.
int64_t checked_numel(const Shape& shape, size_t itemsize, const char* op);
std::string shape_str(const Shape& shape);  // "(2, 3)"

// A handle to a strided N-d array; copies of a Tensor share the same data and
// autograd state, like a PyTorch tensor.
class Tensor {
 public:
  Tensor() = default;
  explicit Tensor(std::shared_ptr<TensorImpl> impl) : impl_(std::move(impl)) {}

  // A new contiguous tensor with uninitialised data.
  static Tensor empty(const Shape& shape, Dtype dtype = Dtype::Float32, Device device = {});
  // A tensor that aliases `storage` with the given geometry.
  static Tensor from_storage(std::shared_ptr<Storage> storage, const Shape& shape, const Shape& strides, int64_t offset,
                             Dtype dtype);
  // Copies values from a flat vector.
  template <typename T>
  static Tensor from_vector(const std::vector<T>& values, const Shape& shape);

  bool defined() const { return impl_ != nullptr; }
  const Shape& shape() const { return impl_->shape; }
  const Shape& strides() const { return impl_->strides; }
  int64_t dim() const { return static_cast<int64_t>(impl_->shape.size()); }
  int64_t size(int64_t d) const;
  int64_t numel() const { return shape_numel(impl_->shape); }
  Dtype dtype() const { return impl_->dtype; }
  Device device() const { return impl_->storage->device(); }
  int64_t offset() const { return impl_->offset; }
  size_t itemsize() const { return dtype_size(impl_->dtype); }
  bool is_contiguous() const;
  void* raw_data() const {
    return static_cast<char*>(impl_->storage->data()) + impl_->offset * static_cast<int64_t>(itemsize());
  }
  template <typename T>
  T* data() const {
    return static_cast<T*>(raw_data());
  }
  const std::shared_ptr<Storage>& storage() const { return impl_->storage; }
  TensorImpl* impl() const { return impl_.get(); }
  const std::shared_ptr<TensorImpl>& impl_ptr() const { return impl_; }
  bool same(const Tensor& other) const { return impl_ == other.impl_; }
  uint64_t version() const { return impl_->storage->version(); }

  // --- autograd ---
  bool requires_grad() const { return impl_->autograd && impl_->autograd->requires_grad; }
  Tensor& set_requires_grad(bool flag);
  Tensor grad() const;
  void set_grad(const Tensor& g);
  std::shared_ptr<Node> grad_fn() const { return impl_->autograd ? impl_->autograd->grad_fn : nullptr; }
  bool is_leaf() const { return !grad_fn(); }
  // Which output of grad_fn() this tensor is (0 for a leaf).
  uint32_t output_nr() const { return impl_->autograd ? impl_->autograd->output_nr : 0; }
  // The Poincare-ball curvature of a manifold parameter, 0 for an ordinary tensor.
  double manifold_curvature() const { return impl_->manifold_curvature; }
  // Tags (c < 0) or untags (c = 0) this tensor object as a point set of the ball.
  void set_manifold_curvature(double curvature);
  void retain_grad();
  bool retains_grad() const { return impl_->autograd && impl_->autograd->retains_grad; }
  // Reverse-mode differentiation from this tensor (a scalar unless `gradient` is given).
  void backward(const Tensor& gradient = {}, bool retain_graph = false, bool create_graph = false) const;
  // Same data, no history.
  Tensor detach() const;
  AutogradMeta& autograd_meta();

  // --- conversions (see ops.h for the full op set) ---
  Tensor contiguous() const;
  Tensor clone() const;
  Tensor to(Dtype dtype) const;
  double item() const;  // a one-element tensor's value
  template <typename T>
  std::vector<T> to_vector() const;  // values in logical (row-major) order

 private:
  std::shared_ptr<TensorImpl> impl_;
};

}  // namespace st
