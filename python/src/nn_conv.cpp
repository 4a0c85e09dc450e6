// Convolution and pooling: functional forms (st.nn.conv2d, st.nn.max_pool2d, ...) and
// the Conv1d / Conv2d / MaxPool2d / AvgPool2d / AdaptiveAvgPool2d modules.
#include <nanobind/stl/pair.h>
#include <nanobind/stl/shared_ptr.h>

#include "nn_bind.h"
#include "spiraltorch/nn/conv.h"

namespace stpy {

using st::nn::Pair;

namespace {

// What the spatial arguments accept, for the stubs (the bindings convert and check them).
using Int2Arg = nb::typed<nb::handle, std::variant<int64_t, std::tuple<int64_t, int64_t>>>;
using Int1Arg = nb::typed<nb::handle, std::variant<int64_t, std::tuple<int64_t>>>;
using Pad2Arg = nb::typed<nb::handle, std::variant<int64_t, std::tuple<int64_t, int64_t>, std::string>>;
using Pad1Arg = nb::typed<nb::handle, std::variant<int64_t, std::tuple<int64_t>, std::string>>;
using AdaptiveSize2Arg =
    nb::typed<nb::handle, std::variant<int64_t, std::tuple<std::optional<int64_t>, std::optional<int64_t>>>>;
using Pair2 = nb::typed<nb::tuple, int64_t, int64_t>;
using One1 = nb::typed<nb::tuple, int64_t>;
using Padding2 = nb::typed<nb::object, std::variant<std::tuple<int64_t, int64_t>, std::string>>;
using Padding1 = nb::typed<nb::object, std::variant<std::tuple<int64_t>, std::string>>;

// An int or a sequence of `n` ints (n = 1 or 2); a 1-d value is returned as (1, v) for
// 2-d-backed ops when `n` is 1.
Pair to_pair(nb::handle h, const char* op, const char* arg) {
  if (nb::isinstance<nb::int_>(h) && !nb::isinstance<nb::bool_>(h)) {
    const int64_t v = nb::cast<int64_t>(h);
    return {v, v};
  }
  if (nb::isinstance<nb::sequence>(h) && !nb::isinstance<nb::str>(h)) {
    nb::sequence seq = nb::borrow<nb::sequence>(h);
    const size_t n = nb::len(seq);
    if (n == 1) {
      const int64_t v = nb::cast<int64_t>(seq[0]);
      return {v, v};
    }
    if (n == 2) return {nb::cast<int64_t>(seq[0]), nb::cast<int64_t>(seq[1])};
  }
  throw st::ValueError(std::string(op) + ": " + arg + " must be an int or a tuple of 2 ints, got " +
                       nb::cast<std::string>(nb::repr(h)));
}

int64_t to_int1(nb::handle h, const char* op, const char* arg) {
  if (nb::isinstance<nb::int_>(h) && !nb::isinstance<nb::bool_>(h)) return nb::cast<int64_t>(h);
  if (nb::isinstance<nb::sequence>(h) && !nb::isinstance<nb::str>(h) && nb::len(h) == 1) {
    return nb::cast<int64_t>(nb::borrow<nb::sequence>(h)[0]);
  }
  throw st::ValueError(std::string(op) + ": " + arg + " must be an int or a tuple of 1 int, got " +
                       nb::cast<std::string>(nb::repr(h)));
}

std::optional<Pair> opt_pair(nb::handle h, const char* op, const char* arg) {
  if (h.is_none()) return std::nullopt;
  // PyTorch treats an empty stride list like None.
  if (nb::isinstance<nb::sequence>(h) && !nb::isinstance<nb::str>(h) && nb::len(h) == 0) return std::nullopt;
  return to_pair(h, op, arg);
}

Tensor opt_tensor(const std::optional<Tensor>& t) { return t ? *t : Tensor(); }

Pair2 pair_tuple(Pair p) { return Pair2(nb::make_tuple(p[0], p[1])); }

std::string pair_repr(Pair p) { return "(" + std::to_string(p[0]) + ", " + std::to_string(p[1]) + ")"; }

void check_padding_mode(const std::string& mode, const char* op) {
  if (mode != "zeros") {
    throw st::ValueError(std::string(op) + ": only padding_mode='zeros' is supported, got '" + mode + "'");
  }
}

template <typename M>
std::optional<Tensor> bias_of(M& m) {
  Tensor b = m.bias();
  return b.defined() ? std::optional<Tensor>(b) : std::nullopt;
}

}  // namespace

void bind_nn_conv(nb::module_& nn) {
  using namespace st::nn;

  // ---- functional ----
  nn.def("conv2d",
         [](const Tensor& x, const Tensor& w, std::optional<Tensor> b, Int2Arg stride, Pad2Arg padding,
            Int2Arg dilation, int64_t groups) {
    const Pair s = to_pair(stride, "conv2d", "stride"), d = to_pair(dilation, "conv2d", "dilation");
    if (nb::isinstance<nb::str>(padding)) {
      return conv2d(x, w, opt_tensor(b), s, nb::cast<std::string>(padding), d, groups);
    }
    return conv2d(x, w, opt_tensor(b), s, to_pair(padding, "conv2d", "padding"), d, groups);
  },
         nb::arg("input"), nb::arg("weight"), nb::arg("bias") = nb::none(), nb::arg("stride") = 1,
         nb::arg("padding") = 0, nb::arg("dilation") = 1, nb::arg("groups") = 1,
         "2-d convolution over (N, C, H, W) or (C, H, W) input; weight (out, C/groups, kh, kw). padding: int, "
         "tuple, 'same' or 'valid'.");

  nn.def("conv1d",
         [](const Tensor& x, const Tensor& w, std::optional<Tensor> b, Int1Arg stride, Pad1Arg padding,
            Int1Arg dilation, int64_t groups) {
    const int64_t s = to_int1(stride, "conv1d", "stride"), d = to_int1(dilation, "conv1d", "dilation");
    if (nb::isinstance<nb::str>(padding)) {
      return conv1d(x, w, opt_tensor(b), s, nb::cast<std::string>(padding), d, groups);
    }
    return conv1d(x, w, opt_tensor(b), s, to_int1(padding, "conv1d", "padding"), d, groups);
  },
         nb::arg("input"), nb::arg("weight"), nb::arg("bias") = nb::none(), nb::arg("stride") = 1,
         nb::arg("padding") = 0, nb::arg("dilation") = 1, nb::arg("groups") = 1,
         "1-d convolution over (N, C, L) or (C, L) input; weight (out, C/groups, k).");

  nn.def("conv_transpose2d",
         [](const Tensor& x, const Tensor& w, std::optional<Tensor> b, Int2Arg stride, Int2Arg padding,
            Int2Arg output_padding, int64_t groups, Int2Arg dilation) {
    const char* op = "conv_transpose2d";
    return conv_transpose2d(x, w, opt_tensor(b), to_pair(stride, op, "stride"), to_pair(padding, op, "padding"),
                            to_pair(output_padding, op, "output_padding"), groups, to_pair(dilation, op, "dilation"));
  },
         nb::arg("input"), nb::arg("weight"), nb::arg("bias") = nb::none(), nb::arg("stride") = 1,
         nb::arg("padding") = 0, nb::arg("output_padding") = 0, nb::arg("groups") = 1, nb::arg("dilation") = 1,
         "2-d transposed convolution over (N, C_in, H, W) or (C_in, H, W) input; weight (C_in, C_out/groups, kh, kw). "
         "Returns (N, C_out, (H-1)*stride - 2*padding + dilation*(kh-1) + output_padding + 1, ...).");

  nn.def("conv_transpose1d",
         [](const Tensor& x, const Tensor& w, std::optional<Tensor> b, Int1Arg stride, Int1Arg padding,
            Int1Arg output_padding, int64_t groups, Int1Arg dilation) {
    const char* op = "conv_transpose1d";
    return conv_transpose1d(x, w, opt_tensor(b), to_int1(stride, op, "stride"), to_int1(padding, op, "padding"),
                            to_int1(output_padding, op, "output_padding"), groups, to_int1(dilation, op, "dilation"));
  },
         nb::arg("input"), nb::arg("weight"), nb::arg("bias") = nb::none(), nb::arg("stride") = 1,
         nb::arg("padding") = 0, nb::arg("output_padding") = 0, nb::arg("groups") = 1, nb::arg("dilation") = 1,
         "1-d transposed convolution over (N, C_in, L) or (C_in, L) input; weight (C_in, C_out/groups, k).");

  nn.def("max_pool2d",
         [](const Tensor& x, Int2Arg kernel, Int2Arg stride, Int2Arg padding, Int2Arg dilation, bool ceil_mode,
            bool return_indices) -> TensorOrPair {
    auto [out, idx] = max_pool2d_with_indices(
        x, to_pair(kernel, "max_pool2d", "kernel_size"), opt_pair(stride, "max_pool2d", "stride"),
        to_pair(padding, "max_pool2d", "padding"), to_pair(dilation, "max_pool2d", "dilation"), ceil_mode);
    if (return_indices) return TensorOrPair(nb::make_tuple(out, idx));
    return TensorOrPair(nb::cast(out));
  },
         nb::arg("input"), nb::arg("kernel_size"), nb::arg("stride") = nb::none(), nb::arg("padding") = 0,
         nb::arg("dilation") = 1, nb::arg("ceil_mode") = false, nb::arg("return_indices") = false,
         "2-d max pooling; stride defaults to kernel_size. return_indices=True also returns the int64 argmax "
         "positions in each flattened input plane.");

  nn.def("avg_pool2d",
         [](const Tensor& x, Int2Arg kernel, Int2Arg stride, Int2Arg padding, bool ceil_mode, bool count_include_pad,
            std::optional<int64_t> divisor_override) {
    if (divisor_override && *divisor_override <= 0) {
      throw st::ValueError("avg_pool2d: divisor_override must be positive, got " + std::to_string(*divisor_override));
    }
    return avg_pool2d(x, to_pair(kernel, "avg_pool2d", "kernel_size"), opt_pair(stride, "avg_pool2d", "stride"),
                      to_pair(padding, "avg_pool2d", "padding"), ceil_mode, count_include_pad,
                      divisor_override.value_or(0));
  },
         nb::arg("input"), nb::arg("kernel_size"), nb::arg("stride") = nb::none(), nb::arg("padding") = 0,
         nb::arg("ceil_mode") = false, nb::arg("count_include_pad") = true, nb::arg("divisor_override") = nb::none(),
         "2-d average pooling with PyTorch's divisor rules.");

  auto adaptive_size = [](const Tensor& x, nb::handle size) -> Pair {
    // None entries keep the input size, like PyTorch.
    if (nb::isinstance<nb::sequence>(size) && !nb::isinstance<nb::str>(size) && nb::len(size) == 2) {
      nb::sequence s = nb::borrow<nb::sequence>(size);
      Pair p{};
      for (int d = 0; d < 2; ++d) {
        if (s[d].is_none()) {
          if (x.dim() < 2) throw st::ShapeError("adaptive_avg_pool2d: input needs at least 2 dims");
          p[d] = x.shape()[x.dim() - 2 + d];
        } else {
          p[d] = nb::cast<int64_t>(s[d]);
        }
      }
      return p;
    }
    return to_pair(size, "adaptive_avg_pool2d", "output_size");
  };
  nn.def("adaptive_avg_pool2d", [adaptive_size](const Tensor& x, AdaptiveSize2Arg output_size) {
    return adaptive_avg_pool2d(x, adaptive_size(x, output_size));
  }, nb::arg("input"), nb::arg("output_size"), "Average pooling to a fixed output size (H_out, W_out).");

  // ---- modules ----
  nb::class_<Conv2d, Module>(nn, "Conv2d",
                             "2-d convolution layer; weight (out_channels, in_channels/groups, kh, kw), bias "
                             "(out_channels,), Kaiming-uniform initialised like PyTorch.")
      .def("__init__",
           [](Conv2d* self, int64_t in, int64_t out, Int2Arg kernel, Int2Arg stride, Pad2Arg padding, Int2Arg dilation,
              int64_t groups, bool bias, const std::string& padding_mode, std::optional<DtypeArg> dtype,
              std::string name) {
    check_padding_mode(padding_mode, "Conv2d");
    const Pair k = to_pair(kernel, "Conv2d", "kernel_size"), s = to_pair(stride, "Conv2d", "stride"),
               d = to_pair(dilation, "Conv2d", "dilation");
    if (nb::isinstance<nb::str>(padding)) {
      new (self) Conv2d(in, out, k, s, nb::cast<std::string>(padding), d, groups, bias, std::move(name));
    } else {
      new (self) Conv2d(in, out, k, s, to_pair(padding, "Conv2d", "padding"), d, groups, bias, std::move(name));
    }
    if (dtype && !dtype->is_none()) self->to(to_dtype(*dtype));
  },
           nb::arg("in_channels"), nb::arg("out_channels"), nb::arg("kernel_size"), nb::arg("stride") = 1,
           nb::arg("padding") = 0, nb::arg("dilation") = 1, nb::arg("groups") = 1, nb::arg("bias") = true,
           nb::arg("padding_mode") = "zeros", nb::arg("dtype").none() = nb::none(), nb::arg("name") = "",
           "Input (N, in_channels, H, W) or unbatched -> (N, out_channels, H_out, W_out). kernel_size, stride, "
           "dilation: an int or (h, w); padding: an int, (h, w), 'same' or 'valid'; in/out_channels must be divisible "
           "by groups. Only padding_mode='zeros' (else ValueError); dtype= converts the parameters. e.g. nn.Conv2d(3, "
           "8, 3, padding=1)")
      .def_prop_ro("weight", &Conv2d::weight, "The (out_channels, in_channels/groups, kh, kw) weight parameter.")
      .def_prop_ro("bias", [](Conv2d& m) { return bias_of(m); },
                   "The (out_channels,) bias parameter, or None (bias=False).")
      .def_prop_ro("in_channels", &Conv2d::in_channels, "The expected size of the input's channel dim.")
      .def_prop_ro("out_channels", &Conv2d::out_channels, "The number of output channels.")
      .def_prop_ro("kernel_size", [](const Conv2d& m) { return pair_tuple(m.kernel_size()); }, "(kh, kw).")
      .def_prop_ro("stride", [](const Conv2d& m) { return pair_tuple(m.stride()); }, "(sh, sw).")
      .def_prop_ro("padding",
                   [](const Conv2d& m) -> Padding2 {
    if (!m.padding_mode().empty()) return nb::str(m.padding_mode().c_str());
    return pair_tuple(m.padding());
  }, "(ph, pw), or the string 'same'/'valid' it was given.")
      .def_prop_ro("dilation", [](const Conv2d& m) { return pair_tuple(m.dilation()); }, "(dh, dw).")
      .def_prop_ro("groups", &Conv2d::groups,
                   "The number of channel groups (in and out channels split into groups convolved separately).")
      .def("__repr__", [](Conv2d& m) {
    std::string r = "Conv2d(" + std::to_string(m.in_channels()) + ", " + std::to_string(m.out_channels()) +
                    ", kernel_size=" + pair_repr(m.kernel_size()) + ", stride=" + pair_repr(m.stride());
    if (!m.padding_mode().empty())
      r += ", padding='" + m.padding_mode() + "'";
    else if (m.padding() != Pair{0, 0})
      r += ", padding=" + pair_repr(m.padding());
    if (m.dilation() != Pair{1, 1}) r += ", dilation=" + pair_repr(m.dilation());
    if (m.groups() != 1) r += ", groups=" + std::to_string(m.groups());
    if (!m.bias().defined()) r += ", bias=False";
    return r + ")";
  });

  nb::class_<Conv1d, Module>(nn, "Conv1d",
                             "1-d convolution layer; weight (out_channels, in_channels/groups, k), bias "
                             "(out_channels,), Kaiming-uniform initialised like PyTorch.")
      .def("__init__",
           [](Conv1d* self, int64_t in, int64_t out, Int1Arg kernel, Int1Arg stride, Pad1Arg padding, Int1Arg dilation,
              int64_t groups, bool bias, const std::string& padding_mode, std::optional<DtypeArg> dtype,
              std::string name) {
    check_padding_mode(padding_mode, "Conv1d");
    const int64_t k = to_int1(kernel, "Conv1d", "kernel_size"), s = to_int1(stride, "Conv1d", "stride"),
                  d = to_int1(dilation, "Conv1d", "dilation");
    if (nb::isinstance<nb::str>(padding)) {
      new (self) Conv1d(in, out, k, s, nb::cast<std::string>(padding), d, groups, bias, std::move(name));
    } else {
      new (self) Conv1d(in, out, k, s, to_int1(padding, "Conv1d", "padding"), d, groups, bias, std::move(name));
    }
    if (dtype && !dtype->is_none()) self->to(to_dtype(*dtype));
  },
           nb::arg("in_channels"), nb::arg("out_channels"), nb::arg("kernel_size"), nb::arg("stride") = 1,
           nb::arg("padding") = 0, nb::arg("dilation") = 1, nb::arg("groups") = 1, nb::arg("bias") = true,
           nb::arg("padding_mode") = "zeros", nb::arg("dtype").none() = nb::none(), nb::arg("name") = "",
           "Input (N, in_channels, L) or (in_channels, L) -> (N, out_channels, L_out). kernel_size, stride, dilation: "
           "an int or (k,); padding: an int, (p,), 'same' or 'valid'; in/out_channels must be divisible by groups. "
           "Only padding_mode='zeros' (else ValueError); dtype= converts the parameters.")
      .def_prop_ro("weight", &Conv1d::weight, "The (out_channels, in_channels/groups, k) weight parameter.")
      .def_prop_ro("bias", [](Conv1d& m) { return bias_of(m); },
                   "The (out_channels,) bias parameter, or None (bias=False).")
      .def_prop_ro("in_channels", &Conv1d::in_channels, "The expected size of the input's channel dim.")
      .def_prop_ro("out_channels", &Conv1d::out_channels, "The number of output channels.")
      .def_prop_ro("kernel_size", [](const Conv1d& m) { return One1(nb::make_tuple(m.kernel_size())); }, "(k,).")
      .def_prop_ro("stride", [](const Conv1d& m) { return One1(nb::make_tuple(m.stride())); }, "(s,).")
      .def_prop_ro("padding",
                   [](const Conv1d& m) -> Padding1 {
    if (!m.padding_mode().empty()) return nb::str(m.padding_mode().c_str());
    return nb::make_tuple(m.padding());
  }, "(p,), or the string 'same'/'valid' it was given.")
      .def_prop_ro("dilation", [](const Conv1d& m) { return One1(nb::make_tuple(m.dilation())); }, "(d,).")
      .def_prop_ro("groups", &Conv1d::groups,
                   "The number of channel groups (in and out channels split into groups convolved separately).")
      .def("__repr__", [](Conv1d& m) {
    std::string r = "Conv1d(" + std::to_string(m.in_channels()) + ", " + std::to_string(m.out_channels()) +
                    ", kernel_size=(" + std::to_string(m.kernel_size()) + ",), stride=(" + std::to_string(m.stride()) +
                    ",)";
    if (!m.padding_mode().empty())
      r += ", padding='" + m.padding_mode() + "'";
    else if (m.padding() != 0)
      r += ", padding=(" + std::to_string(m.padding()) + ",)";
    if (m.dilation() != 1) r += ", dilation=(" + std::to_string(m.dilation()) + ",)";
    if (m.groups() != 1) r += ", groups=" + std::to_string(m.groups());
    if (!m.bias().defined()) r += ", bias=False";
    return r + ")";
  });

  nb::class_<MaxPool2d, Module>(nn, "MaxPool2d", "2-d max pooling; stride defaults to kernel_size.")
      .def("__init__",
           [](MaxPool2d* self, Int2Arg kernel, Int2Arg stride, Int2Arg padding, Int2Arg dilation, bool ceil_mode,
              std::string name) {
    new (self) MaxPool2d(to_pair(kernel, "MaxPool2d", "kernel_size"), opt_pair(stride, "MaxPool2d", "stride"),
                         to_pair(padding, "MaxPool2d", "padding"), to_pair(dilation, "MaxPool2d", "dilation"),
                         ceil_mode, std::move(name));
  },
           nb::arg("kernel_size"), nb::arg("stride") = nb::none(), nb::arg("padding") = 0, nb::arg("dilation") = 1,
           nb::arg("ceil_mode") = false, nb::arg("name") = "",
           "Max over kernel_size windows of (N, C, H, W) or (C, H, W) inputs; stride defaults to kernel_size; padding "
           "(at most half the kernel) pads with -inf; ceil_mode rounds the output size up.")
      .def_prop_ro("kernel_size", [](const MaxPool2d& m) { return pair_tuple(m.kernel_size()); }, "(kh, kw).")
      .def_prop_ro("stride", [](const MaxPool2d& m) { return pair_tuple(m.stride()); }, "(sh, sw).")
      .def_prop_ro("padding", [](const MaxPool2d& m) { return pair_tuple(m.padding()); }, "(ph, pw).")
      .def_prop_ro("dilation", [](const MaxPool2d& m) { return pair_tuple(m.dilation()); }, "(dh, dw).")
      .def_prop_ro("ceil_mode", &MaxPool2d::ceil_mode,
                   "Whether the output size is rounded up (a last partial window is kept).")
      .def("__repr__", [](const MaxPool2d& m) {
    return "MaxPool2d(kernel_size=" + pair_repr(m.kernel_size()) + ", stride=" + pair_repr(m.stride()) +
           ", padding=" + pair_repr(m.padding()) + ", dilation=" + pair_repr(m.dilation()) +
           ", ceil_mode=" + (m.ceil_mode() ? "True" : "False") + ")";
  });

  nb::class_<AvgPool2d, Module>(nn, "AvgPool2d", "2-d average pooling; stride defaults to kernel_size.")
      .def("__init__",
           [](AvgPool2d* self, Int2Arg kernel, Int2Arg stride, Int2Arg padding, bool ceil_mode, bool count_include_pad,
              std::optional<int64_t> divisor_override, std::string name) {
    if (divisor_override && *divisor_override <= 0) {
      throw st::ValueError("AvgPool2d: divisor_override must be positive, got " + std::to_string(*divisor_override));
    }
    new (self) AvgPool2d(to_pair(kernel, "AvgPool2d", "kernel_size"), opt_pair(stride, "AvgPool2d", "stride"),
                         to_pair(padding, "AvgPool2d", "padding"), ceil_mode, count_include_pad,
                         divisor_override.value_or(0), std::move(name));
  },
           nb::arg("kernel_size"), nb::arg("stride") = nb::none(), nb::arg("padding") = 0, nb::arg("ceil_mode") = false,
           nb::arg("count_include_pad") = true, nb::arg("divisor_override") = nb::none(), nb::arg("name") = "",
           "Mean over kernel_size windows of (N, C, H, W) or (C, H, W) inputs; stride defaults to kernel_size; "
           "count_include_pad counts zero padding in the divisor; divisor_override (positive) replaces the divisor.")
      .def_prop_ro("kernel_size", [](const AvgPool2d& m) { return pair_tuple(m.kernel_size()); }, "(kh, kw).")
      .def_prop_ro("stride", [](const AvgPool2d& m) { return pair_tuple(m.stride()); }, "(sh, sw).")
      .def_prop_ro("padding", [](const AvgPool2d& m) { return pair_tuple(m.padding()); }, "(ph, pw).")
      .def_prop_ro("ceil_mode", &AvgPool2d::ceil_mode,
                   "Whether the output size is rounded up (a last partial window is kept).")
      .def_prop_ro("count_include_pad", &AvgPool2d::count_include_pad, "Whether zero padding counts in the divisor.")
      .def("__repr__", [](const AvgPool2d& m) {
    return "AvgPool2d(kernel_size=" + pair_repr(m.kernel_size()) + ", stride=" + pair_repr(m.stride()) +
           ", padding=" + pair_repr(m.padding()) + ")";
  });

  nb::class_<AdaptiveAvgPool2d, Module>(nn, "AdaptiveAvgPool2d", "Average pooling to a fixed output size.")
      .def("__init__",
           [](AdaptiveAvgPool2d* self, Int2Arg output_size, std::string name) {
    new (self) AdaptiveAvgPool2d(to_pair(output_size, "AdaptiveAvgPool2d", "output_size"), std::move(name));
  }, nb::arg("output_size"), nb::arg("name") = "",
           "Average pooling of (N, C, H, W) or (C, H, W) inputs to output_size (an int or (H_out, W_out)), with "
           "PyTorch's window bounds floor(i*H/H_out)..ceil((i+1)*H/H_out).")
      .def_prop_ro("output_size", [](const AdaptiveAvgPool2d& m) { return pair_tuple(m.output_size()); },
                   "(H_out, W_out).")
      .def("__repr__", [](const AdaptiveAvgPool2d& m) {
    return "AdaptiveAvgPool2d(output_size=" + pair_repr(m.output_size()) + ")";
  });
}

}  // namespace stpy
