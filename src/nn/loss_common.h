#pragma once
// Argument checks and the reduction shared by the loss files (loss_regression.cpp,
// loss_classification.cpp, loss_metric.cpp); not part of the public API.
#include <sstream>
#include <string>

#include "ops/common.h"
#include "spiraltorch/nn/loss.h"

namespace st::nn::loss_detail {

inline Tensor reduce(const Tensor& l, Reduction r) {
  switch (r) {
    case Reduction::Mean:
      return mean(l);
    case Reduction::Sum:
      return sum(l);
    case Reduction::None:
      break;
  }
  return l;
}

inline std::string num(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

inline void check_defined(const Tensor& t, const char* op, const char* what) {
  if (!t.defined()) throw ValueError(std::string(op) + ": " + what + " is undefined");
}

inline void check_floating(const Tensor& t, const char* op, const char* what) {
  check_defined(t, op, what);
  if (!is_floating(t.dtype())) {
    throw DtypeError(std::string(op) + ": " + what + " must be a floating tensor, got " + dtype_name(t.dtype()));
  }
}

// Same shape and device (ShapeError naming both shapes otherwise).
inline void check_same_shape(const Tensor& a, const Tensor& b, const char* op, const char* an = "input",
                             const char* bn = "target") {
  if (a.shape() != b.shape()) {
    throw ShapeError(std::string(op) + ": " + an + " shape " + shape_str(a.shape()) + " and " + bn + " shape " +
                     shape_str(b.shape()) + " differ");
  }
  detail::check_same_device(a, b, op);
}

// Broadcastable operands (ShapeError naming `op` otherwise); returns the result shape.
inline Shape check_broadcast(const Tensor& a, const Tensor& b, const char* op) {
  detail::check_same_device(a, b, op);
  return broadcast_shapes(a.shape(), b.shape(), op);
}

// A label tensor in the input's floating dtype (integer and bool labels are common).
inline Tensor as_float(const Tensor& y, const Tensor& like) { return is_floating(y.dtype()) ? y : y.to(like.dtype()); }

// Weight that broadcasts against `shape` without enlarging it.
inline void check_weight(const Tensor& w, const Shape& shape, const Tensor& input, const char* op) {
  detail::check_same_device(input, w, op);
  if (broadcast_shapes(w.shape(), shape, op) != shape) {
    throw ShapeError(std::string(op) + ": weight of shape " + shape_str(w.shape()) +
                     " does not broadcast to the input shape " + shape_str(shape));
  }
}

inline Tensor zeros_of(const Tensor& like) { return zeros_like(like); }

// The argument checks of every per-element loss. `aux` (pos_weight) is optional.
inline void check_pointwise(const char* op, const Tensor& pred, const Tensor& target, const Tensor& aux = Tensor()) {
  check_floating(pred, op, "prediction");
  check_defined(target, op, "target");
  check_same_shape(pred, target, op, "prediction", "target");
  if (aux.defined()) {
    detail::check_same_device(pred, aux, op);
    broadcast_shapes(pred.shape(), aux.shape(), op);
    if (aux.dim() > pred.dim()) {
      throw ShapeError(std::string(op) + ": weight of shape " + shape_str(aux.shape()) +
                       " has more dims than the input of shape " + shape_str(pred.shape()));
    }
  }
}

}  // namespace st::nn::loss_detail
