// The original spiraltorch's 2-D Tensor helpers (the seed's API): rows/cols, scale, add_scaled_,
// add_row_inplace, squared_l2_norm, row_softmax(backend=), scaled_dot_attention, cat_rows,
// project_to_poincare, to_dlpack and from_dlpack, each a thin composition of native ops with the
// original's argument checks. Where the original computed something geometrically wrong
// (project_to_poincare squashed into the unit ball for every curvature), the correct map is used.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cmath>

#include "op_bind.h"
#include "spiraltorch/geometry/poincare.h"
#include "spiraltorch/wgpu.h"

namespace stpy {

namespace {

void require_2d(const Tensor& t, const char* op) {
  if (t.dim() != 2) {
    throw st::ShapeError(std::string(op) + ": expected a 2-D (rows, cols) tensor, got shape " +
                         st::shape_str(t.shape()));
  }
}

double finite(double v, const char* op, const char* what) {
  if (!std::isfinite(v))
    throw st::ValueError(std::string(op) + ": " + what + " must be finite, got " + std::to_string(v));
  return v;
}

// The original's backend labels: None/auto take the tensor's device, cpu/cuda/wgpu must name it, mps
// names a device this build does not have.
void check_backend(const std::optional<std::string>& backend, const Tensor& t, const char* op) {
  if (!backend || *backend == "auto") return;
  const std::string& b = *backend;
  if (b != "cpu" && b != "cuda" && b != "wgpu" && b != "mps") {
    throw st::ValueError(std::string(op) + ": unknown backend '" + b + "'; expected one of auto, cpu, cuda, wgpu, mps");
  }
  if (b == "mps")
    throw st::DeviceUnavailableError(std::string(op) + ": backend 'mps' is not built into this SpiralTorch");
  if (b == "wgpu" && !st::wgpu::is_available()) {
    throw st::DeviceUnavailableError(std::string(op) +
                                     ": backend 'wgpu' is not available: " + st::wgpu::unavailable_reason());
  }
  if (t.device().str().rfind(b, 0) != 0) {
    throw st::ValueError(std::string(op) + ": backend '" + b + "' asked for a tensor on " + t.device().str() +
                         "; move it first");
  }
}

}  // namespace

void bind_tensor_seed(nb::module_& m, nb::class_<Tensor>& cls) {
  cls.def_prop_ro("rows", [](const Tensor& t) {
    require_2d(t, "Tensor.rows");
    return t.shape()[0];
  }, "Number of rows of a 2-D tensor.");
  cls.def_prop_ro("cols", [](const Tensor& t) {
    require_2d(t, "Tensor.cols");
    return t.shape()[1];
  }, "Number of columns of a 2-D tensor.");
  cls.def("scale", [](const Tensor& t, double value) {
    return st::mul(t, finite(value, "Tensor.scale", "the factor"));
  }, nb::arg("value"), "Returns ``value * self`` (a new tensor); ``value`` must be finite.");
  cls.def("add_scaled_",
          [](nb::handle self, const Tensor& other, double scale) -> nb::object {
    Tensor& t = nb::cast<Tensor&>(self);
    const double s = finite(scale, "Tensor.add_scaled_", "scale");
    if (other.shape() != t.shape()) {
      throw st::ShapeError("Tensor.add_scaled_: shapes " + st::shape_str(t.shape()) + " and " +
                           st::shape_str(other.shape()) + " differ");
    }
    st::add_(t, other, s);
    return nb::borrow(self);
  }, nb::arg("other"), nb::arg("scale"), nb::sig("def add_scaled_(self, other: Tensor, scale: float) -> Tensor"),
          "In place ``self += scale * other`` (same shape required); returns self.");
  cls.def("add_row_inplace",
          [](nb::handle self, nb::handle bias) -> nb::object {
    Tensor& t = nb::cast<Tensor&>(self);
    require_2d(t, "Tensor.add_row_inplace");
    const Tensor row = nb::isinstance<Tensor>(bias) ? nb::cast<Tensor>(bias) : tensor_from_data(bias, t.dtype());
    if (row.numel() != t.shape()[1]) {
      throw st::ShapeError("Tensor.add_row_inplace: bias has " + std::to_string(row.numel()) +
                           " values but the tensor has " + std::to_string(t.shape()[1]) + " columns");
    }
    st::add_(t, st::to_device(st::reshape(row, {1, -1}), t.device()));
    return nb::borrow(self);
  }, nb::arg("bias"), nb::sig("def add_row_inplace(self, bias: Tensor | collections.abc.Sequence[float]) -> Tensor"),
          "In place: adds ``bias`` (``cols`` values: a list or a tensor) to every row; returns self.");
  cls.def("squared_l2_norm", [](const Tensor& t) {
    const Tensor d = st::cast(t.detach(), st::Dtype::Float64);
    return st::sum(st::mul(d, d)).item();
  }, "Sum of squares of every element, as a Python float.");
  cls.def("row_softmax",
          [](const Tensor& t, std::optional<std::string> backend) {
    require_2d(t, "Tensor.row_softmax");
    check_backend(backend, t, "Tensor.row_softmax");
    return st::softmax(t, -1);
  }, nb::kw_only(), nb::arg("backend").none() = nb::none(),
          "Softmax of every row of a 2-D tensor (max-shifted, rows sum to 1), on the tensor's device. ``backend`` "
          "(auto/cpu/cuda/wgpu) only checks where the tensor lives.");
  cls.def(
      "scaled_dot_attention",
      [](const Tensor& q, const Tensor& keys, const Tensor& values, int64_t contexts, int64_t sequence, double scale,
         std::optional<Tensor> z_bias, std::optional<Tensor> attn_bias, std::optional<std::string> backend) {
    const char* op = "Tensor.scaled_dot_attention";
    check_backend(backend, q, op);
    const double s = finite(scale, op, "scale");
    if (contexts < 0 || sequence < 0) {
      throw st::ShapeError(std::string(op) + ": contexts and sequence must be non-negative, got " +
                           std::to_string(contexts) + ", " + std::to_string(sequence));
    }
    for (const auto& [name, t] :
         {std::pair<const char*, const Tensor*>{"queries", &q}, {"keys", &keys}, {"values", &values}}) {
      require_2d(*t, op);
      if (t->shape()[0] != contexts * sequence) {
        throw st::ShapeError(std::string(op) + ": " + name + " have " + std::to_string(t->shape()[0]) +
                             " rows, expected contexts * sequence = " + std::to_string(contexts * sequence));
      }
    }
    if (keys.shape()[1] != q.shape()[1]) {
      throw st::ShapeError(std::string(op) + ": queries have " + std::to_string(q.shape()[1]) + " columns but keys " +
                           std::to_string(keys.shape()[1]));
    }
    const int64_t d = q.shape()[1], dv = values.shape()[1];
    const Tensor qq = st::reshape(q, {contexts, sequence, d}), kk = st::reshape(keys, {contexts, sequence, d});
    const Tensor vv = st::reshape(values, {contexts, sequence, dv});
    Tensor logits = st::mul(st::matmul(qq, st::transpose(kk, 1, 2)), s);
    if (z_bias) {
      if (z_bias->shape() != st::Shape{contexts, sequence}) {
        throw st::ShapeError(std::string(op) + ": z_bias must be " + st::shape_str({contexts, sequence}) + ", got " +
                             st::shape_str(z_bias->shape()));
      }
      logits = st::add(logits, st::reshape(*z_bias, {contexts, 1, sequence}));
    }
    if (attn_bias) {
      if (attn_bias->shape() != st::Shape{contexts * sequence, sequence}) {
        throw st::ShapeError(std::string(op) + ": attn_bias must be " + st::shape_str({contexts * sequence, sequence}) +
                             ", got " + st::shape_str(attn_bias->shape()));
      }
      logits = st::add(logits, st::reshape(*attn_bias, {contexts, sequence, sequence}));
    }
    return st::reshape(st::matmul(st::softmax(logits, -1), vv), {contexts * sequence, dv});
  },
      nb::arg("keys"), nb::arg("values"), nb::kw_only(), nb::arg("contexts"), nb::arg("sequence"), nb::arg("scale"),
      nb::arg("z_bias").none() = nb::none(), nb::arg("attn_bias").none() = nb::none(),
      nb::arg("backend").none() = nb::none(),
      "Attention of the original's flat layout: queries (self), keys and values are ``(contexts * sequence, "
      "head_dim)``. Per context c and query i, ``logit_ij = scale * <q_i, k_j> + z_bias[c, j] + attn_bias[c * "
      "sequence + i, j]``, softmax over j, ``out_i = sum_j w_ij v_j``. Returns ``(contexts * sequence, head_dim)``.");
  cls.def_static("cat_rows", [](const std::vector<Tensor>& tensors) {
    if (tensors.empty()) throw st::ValueError("Tensor.cat_rows: needs at least one tensor");
    for (const Tensor& t : tensors) {
      require_2d(t, "Tensor.cat_rows");
      if (t.shape()[1] != tensors[0].shape()[1]) {
        throw st::ShapeError("Tensor.cat_rows: column counts differ (" + std::to_string(tensors[0].shape()[1]) +
                             " and " + std::to_string(t.shape()[1]) + ")");
      }
    }
    return st::cat(tensors, 0);
  }, nb::arg("tensors"), "Stacks 2-D tensors with equal column counts vertically (``cat`` along rows).");
  cls.def("project_to_poincare",
          [](const Tensor& t, double curvature) {
    const double c = finite(curvature, "Tensor.project_to_poincare", "curvature");
    if (c >= 0) {
      throw st::ValueError("Tensor.project_to_poincare: curvature must be negative, got " + std::to_string(c));
    }
    return st::geometry::expmap0(t, c);
  }, nb::arg("curvature") = -1.0,
          "Maps every row into the Poincare ball of curvature ``curvature`` (< 0) with the exponential map at the "
          "origin, ``tanh(sqrt|c| |x|) x / (sqrt|c| |x|)``; zero rows stay zero. (The original divided by sqrt|c| and "
          "always landed in the unit ball; this is the exact map into the ball of radius 1/sqrt|c|, equal to it at "
          "c = -1.)");
  cls.def("to_dlpack", [](nb::handle self) {
    return self.attr("__dlpack__")();
  }, nb::sig("def to_dlpack(self) -> typing.Any"), "A DLPack capsule sharing this tensor's memory (``__dlpack__()``).");
  nb::handle mod = m;  // the module outlives its classes
  cls.def_static("from_dlpack", [mod](nb::handle obj) { return nb::cast<Tensor>(mod.attr("from_dlpack")(obj)); },
                 nb::arg("ext_tensor"), nb::sig("def from_dlpack(ext_tensor: typing.Any) -> Tensor"),
                 "``spiraltorch.from_dlpack`` as a static method (the seed's ``Tensor.from_dlpack``): wraps a "
                 "DLPack-capable array without copying.");
}

}  // namespace stpy
