// spiraltorch._core.nn: 1-d pools and adaptive max pooling, pixel (un)shuffle, channel and
// alpha dropout, the single-step recurrent cells (RNNCell, LSTMCell, GRUCell), plus Bilinear
// and embedding_bag — PyTorch layers composed from native ops.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>

#include "nn_bind.h"
#include "spiraltorch/nn/bilinear.h"
#include "spiraltorch/nn/channel_dropout.h"
#include "spiraltorch/nn/embedding_bag.h"
#include "spiraltorch/nn/pixel_shuffle.h"
#include "spiraltorch/nn/pooling_extra.h"
#include "spiraltorch/nn/rnn_cell.h"

namespace stpy {

using st::nn::Pair;

namespace {

bool is_int(nb::handle h) { return nb::isinstance<nb::int_>(h) && !nb::isinstance<nb::bool_>(h); }

std::string repr_of(nb::handle h) { return nb::cast<std::string>(nb::repr(h)); }

// An int or a 1-tuple of an int (torch's _single).
int64_t int1(nb::handle h, const char* op, const char* arg) {
  if (is_int(h)) return nb::cast<int64_t>(h);
  if (nb::isinstance<nb::sequence>(h) && !nb::isinstance<nb::str>(h) && nb::len(h) == 1 &&
      is_int(nb::borrow<nb::sequence>(h)[0])) {
    return nb::cast<int64_t>(nb::borrow<nb::sequence>(h)[0]);
  }
  throw st::ValueError(std::string(op) + ": " + arg + " must be an int or a tuple of 1 int, got " + repr_of(h));
}

std::optional<int64_t> opt_int1(nb::handle h, const char* op, const char* arg) {
  if (h.is_none()) return std::nullopt;
  if (nb::isinstance<nb::sequence>(h) && !nb::isinstance<nb::str>(h) && nb::len(h) == 0) return std::nullopt;
  return int1(h, op, arg);
}

// An adaptive output size: an int, or a pair whose None entries keep the input size.
Pair adaptive_pair(nb::handle h, const Tensor* x, const char* op) {
  if (is_int(h)) return {nb::cast<int64_t>(h), nb::cast<int64_t>(h)};
  if (nb::isinstance<nb::sequence>(h) && !nb::isinstance<nb::str>(h) && nb::len(h) == 2) {
    nb::sequence s = nb::borrow<nb::sequence>(h);
    Pair p{};
    for (int d = 0; d < 2; ++d) {
      if (s[d].is_none()) {
        if (x == nullptr) throw st::ValueError(std::string(op) + ": None in output_size needs an input");
        if (x->dim() < 2) throw st::ShapeError(std::string(op) + ": input needs at least 2 dims");
        p[d] = x->shape()[x->dim() - 2 + d];
      } else if (is_int(s[d])) {
        p[d] = nb::cast<int64_t>(s[d]);
      } else {
        break;
      }
      if (d == 1) return p;
    }
  }
  throw st::ValueError(std::string(op) + ": output_size must be an int or a tuple of 2 ints (or None), got " +
                       repr_of(h));
}

std::string b2s(bool b) { return b ? "True" : "False"; }

std::string fmt_p(double p) {
  std::string s = std::to_string(p);
  s.erase(s.find_last_not_of('0') + 1);
  if (!s.empty() && s.back() == '.') s += '0';
  return s;
}

// What the 1-d pools' arguments accept, for the stubs (the bindings convert and check them).
using Int1Arg = nb::typed<nb::handle, std::variant<int64_t, std::tuple<int64_t>>>;
using AdaptiveSize2Arg =
    nb::typed<nb::handle, std::variant<int64_t, std::tuple<std::optional<int64_t>, std::optional<int64_t>>>>;
using InplaceOrName = nb::typed<nb::handle, std::variant<bool, std::string>>;
using One1 = nb::typed<nb::tuple, int64_t>;
using LstmCellState = std::optional<nb::typed<nb::handle, std::tuple<Tensor, Tensor>>>;

std::optional<Tensor> opt_param(const Tensor& t) { return t.defined() ? std::optional<Tensor>(t) : std::nullopt; }

}  // namespace

void bind_nn_pool_shuffle_dropout_cells(nb::module_& nn) {
  using namespace st::nn;

  // ---- embedding bags ----
  nn.def("embedding_bag",
         [](const Tensor& input, const Tensor& weight, std::optional<Tensor> offsets, std::optional<double> max_norm,
            double norm_type, bool scale_grad_by_freq, const std::string& mode, bool sparse,
            std::optional<Tensor> per_sample_weights, bool include_last_offset, std::optional<int64_t> padding_idx) {
    if (max_norm) throw st::ValueError("embedding_bag: max_norm is not supported (renormalise the weight instead)");
    if (scale_grad_by_freq) throw st::ValueError("embedding_bag: scale_grad_by_freq is not supported");
    if (sparse) throw st::ValueError("embedding_bag: sparse gradients are not supported (the gradient is dense)");
    return embedding_bag(weight, input, offsets ? *offsets : Tensor(), mode,
                         per_sample_weights ? *per_sample_weights : Tensor(), include_last_offset, padding_idx);
  },
         nb::arg("input"), nb::arg("weight"), nb::arg("offsets") = nb::none(), nb::arg("max_norm") = nb::none(),
         nb::arg("norm_type") = 2.0, nb::arg("scale_grad_by_freq") = false, nb::arg("mode") = "mean",
         nb::arg("sparse") = false, nb::arg("per_sample_weights") = nb::none(), nb::arg("include_last_offset") = false,
         nb::arg("padding_idx") = nb::none(),
         "Sums, means or maxima of bags of rows of weight: input 2-D (bags, length), or 1-D with offsets where each "
         "bag starts. Returns (bags, embedding_dim); empty bags give zeros, padding_idx entries are left out.");

  // ---- pools ----
  nn.def("max_pool1d",
         [](const Tensor& x, Int1Arg kernel, Int1Arg stride, Int1Arg padding, Int1Arg dilation, bool ceil_mode,
            bool return_indices) -> TensorOrPair {
    auto [out, idx] = max_pool1d_with_indices(
        x, int1(kernel, "max_pool1d", "kernel_size"), opt_int1(stride, "max_pool1d", "stride"),
        int1(padding, "max_pool1d", "padding"), int1(dilation, "max_pool1d", "dilation"), ceil_mode);
    if (return_indices) return TensorOrPair(nb::make_tuple(out, idx));
    return TensorOrPair(nb::cast(out));
  },
         nb::arg("input"), nb::arg("kernel_size"), nb::arg("stride") = nb::none(), nb::arg("padding") = 0,
         nb::arg("dilation") = 1, nb::arg("ceil_mode") = false, nb::arg("return_indices") = false,
         "1-d max pooling over (N, C, L) or (C, L); stride defaults to kernel_size. return_indices=True also "
         "returns the int64 argmax positions along L.");

  nn.def("avg_pool1d",
         [](const Tensor& x, Int1Arg kernel, Int1Arg stride, Int1Arg padding, bool ceil_mode, bool count_include_pad) {
    return avg_pool1d(x, int1(kernel, "avg_pool1d", "kernel_size"), opt_int1(stride, "avg_pool1d", "stride"),
                      int1(padding, "avg_pool1d", "padding"), ceil_mode, count_include_pad);
  }, nb::arg("input"), nb::arg("kernel_size"), nb::arg("stride") = nb::none(), nb::arg("padding") = 0,
         nb::arg("ceil_mode") = false, nb::arg("count_include_pad") = true,
         "1-d average pooling over (N, C, L) or (C, L) with PyTorch's divisor rules.");

  nn.def("adaptive_avg_pool1d", [](const Tensor& x, Int1Arg output_size) {
    return adaptive_avg_pool1d(x, int1(output_size, "adaptive_avg_pool1d", "output_size"));
  }, nb::arg("input"), nb::arg("output_size"), "Average pooling of (N, C, L) or (C, L) to length output_size.");

  nn.def("adaptive_max_pool2d",
         [](const Tensor& x, AdaptiveSize2Arg output_size, bool return_indices) -> TensorOrPair {
    auto [out, idx] = adaptive_max_pool2d_with_indices(x, adaptive_pair(output_size, &x, "adaptive_max_pool2d"));
    if (return_indices) return TensorOrPair(nb::make_tuple(out, idx));
    return TensorOrPair(nb::cast(out));
  }, nb::arg("input"), nb::arg("output_size"), nb::arg("return_indices") = false,
         "Max pooling of (N, C, H, W) or (C, H, W) to a fixed (H_out, W_out) over PyTorch's adaptive windows; "
         "return_indices=True also returns int64 argmax positions in each flattened input plane.");

  nb::class_<MaxPool1d, Module>(nn, "MaxPool1d", "1-d max pooling; stride defaults to kernel_size.")
      .def("__init__",
           [](MaxPool1d* self, Int1Arg kernel, Int1Arg stride, Int1Arg padding, Int1Arg dilation, bool ceil_mode,
              std::string name) {
    new (self) MaxPool1d(int1(kernel, "MaxPool1d", "kernel_size"), opt_int1(stride, "MaxPool1d", "stride"),
                         int1(padding, "MaxPool1d", "padding"), int1(dilation, "MaxPool1d", "dilation"), ceil_mode,
                         std::move(name));
  },
           nb::arg("kernel_size"), nb::arg("stride") = nb::none(), nb::arg("padding") = 0, nb::arg("dilation") = 1,
           nb::arg("ceil_mode") = false, nb::arg("name") = "",
           "Max over kernel_size windows along L of (N, C, L) or (C, L); stride defaults to kernel_size; padding (at "
           "most half the kernel, else ValueError) pads with -inf; ceil_mode rounds the output length up.")
      .def_prop_ro("kernel_size", &MaxPool1d::kernel_size, "The window length.")
      .def_prop_ro("stride", &MaxPool1d::stride, "The step between windows.")
      .def_prop_ro("padding", &MaxPool1d::padding, "The implicit -inf padding on each side.")
      .def_prop_ro("dilation", &MaxPool1d::dilation, "The spacing between window elements.")
      .def_prop_ro("ceil_mode", &MaxPool1d::ceil_mode,
                   "Whether the output length is rounded up (a last partial window is kept).")
      .def("__repr__", [](const MaxPool1d& m) {
    return "MaxPool1d(kernel_size=" + std::to_string(m.kernel_size()) + ", stride=" + std::to_string(m.stride()) +
           ", padding=" + std::to_string(m.padding()) + ", dilation=" + std::to_string(m.dilation()) +
           ", ceil_mode=" + b2s(m.ceil_mode()) + ")";
  });

  nb::class_<AvgPool1d, Module>(nn, "AvgPool1d", "1-d average pooling; stride defaults to kernel_size.")
      .def("__init__",
           [](AvgPool1d* self, Int1Arg kernel, Int1Arg stride, Int1Arg padding, bool ceil_mode, bool count_include_pad,
              std::string name) {
    new (self) AvgPool1d(int1(kernel, "AvgPool1d", "kernel_size"), opt_int1(stride, "AvgPool1d", "stride"),
                         int1(padding, "AvgPool1d", "padding"), ceil_mode, count_include_pad, std::move(name));
  },
           nb::arg("kernel_size"), nb::arg("stride") = nb::none(), nb::arg("padding") = 0, nb::arg("ceil_mode") = false,
           nb::arg("count_include_pad") = true, nb::arg("name") = "",
           "Mean over kernel_size windows along L of (N, C, L) or (C, L); stride defaults to kernel_size; padding at "
           "most half the kernel; count_include_pad counts zero padding in the divisor.")
      .def_prop_ro("kernel_size", [](const AvgPool1d& m) { return One1(nb::make_tuple(m.kernel_size())); }, "(k,).")
      .def_prop_ro("stride", [](const AvgPool1d& m) { return One1(nb::make_tuple(m.stride())); }, "(s,).")
      .def_prop_ro("padding", [](const AvgPool1d& m) { return One1(nb::make_tuple(m.padding())); }, "(p,).")
      .def_prop_ro("ceil_mode", &AvgPool1d::ceil_mode,
                   "Whether the output length is rounded up (a last partial window is kept).")
      .def_prop_ro("count_include_pad", &AvgPool1d::count_include_pad, "Whether zero padding counts in the divisor.")
      .def("__repr__", [](const AvgPool1d& m) {
    return "AvgPool1d(kernel_size=(" + std::to_string(m.kernel_size()) + ",), stride=(" + std::to_string(m.stride()) +
           ",), padding=(" + std::to_string(m.padding()) + ",))";
  });

  nb::class_<AdaptiveAvgPool1d, Module>(nn, "AdaptiveAvgPool1d", "Average pooling to a fixed output length.")
      .def("__init__",
           [](AdaptiveAvgPool1d* self, Int1Arg output_size, std::string name) {
    new (self) AdaptiveAvgPool1d(int1(output_size, "AdaptiveAvgPool1d", "output_size"), std::move(name));
  }, nb::arg("output_size"), nb::arg("name") = "",
           "Average pooling of (N, C, L) or (C, L) to length output_size over PyTorch's adaptive windows.")
      .def_prop_ro("output_size", &AdaptiveAvgPool1d::output_size, "The output length.")
      .def("__repr__", [](const AdaptiveAvgPool1d& m) {
    return "AdaptiveAvgPool1d(output_size=" + std::to_string(m.output_size()) + ")";
  });

  nb::class_<AdaptiveMaxPool2d, Module>(nn, "AdaptiveMaxPool2d", "Max pooling to a fixed output size (H_out, W_out).")
      .def("__init__",
           [](AdaptiveMaxPool2d* self, AdaptiveSize2Arg output_size, std::string name) {
    new (self) AdaptiveMaxPool2d(adaptive_pair(output_size, nullptr, "AdaptiveMaxPool2d"), std::move(name));
  }, nb::arg("output_size"), nb::arg("name") = "",
           "Max pooling of (N, C, H, W) or (C, H, W) to output_size (an int or (H_out, W_out)) over PyTorch's "
           "adaptive windows.")
      .def_prop_ro("output_size",
                   [](const AdaptiveMaxPool2d& m) {
    const Pair s = m.output_size();
    return nb::typed<nb::tuple, int64_t, int64_t>(nb::make_tuple(s[0], s[1]));
  }, "(H_out, W_out).")
      .def("__repr__", [](const AdaptiveMaxPool2d& m) {
    return "AdaptiveMaxPool2d(output_size=(" + std::to_string(m.output_size()[0]) + ", " +
           std::to_string(m.output_size()[1]) + "))";
  });

  // ---- pixel shuffle ----
  nn.def("pixel_shuffle", &pixel_shuffle, nb::arg("input"), nb::arg("upscale_factor"),
         "Rearranges (*, C*r^2, H, W) into (*, C, H*r, W*r) with r = upscale_factor.");
  nn.def("pixel_unshuffle", &pixel_unshuffle, nb::arg("input"), nb::arg("downscale_factor"),
         "Rearranges (*, C, H*r, W*r) into (*, C*r^2, H, W) with r = downscale_factor (inverse of pixel_shuffle).");
  nb::class_<PixelShuffle, Module>(nn, "PixelShuffle", "(*, C*r^2, H, W) -> (*, C, H*r, W*r).")
      .def(nb::init<int64_t, std::string>(), nb::arg("upscale_factor"), nb::arg("name") = "",
           "(*, C*r^2, H, W) -> (*, C, H*r, W*r) with r = upscale_factor (positive).")
      .def_prop_ro("upscale_factor", &PixelShuffle::upscale_factor, "The factor r.")
      .def("__repr__", [](const PixelShuffle& m) {
    return "PixelShuffle(upscale_factor=" + std::to_string(m.upscale_factor()) + ")";
  });
  nb::class_<PixelUnshuffle, Module>(nn, "PixelUnshuffle", "(*, C, H*r, W*r) -> (*, C*r^2, H, W).")
      .def(nb::init<int64_t, std::string>(), nb::arg("downscale_factor"), nb::arg("name") = "",
           "(*, C, H*r, W*r) -> (*, C*r^2, H, W) with r = downscale_factor (positive).")
      .def_prop_ro("downscale_factor", &PixelUnshuffle::downscale_factor, "The factor r.")
      .def("__repr__", [](const PixelUnshuffle& m) {
    return "PixelUnshuffle(downscale_factor=" + std::to_string(m.downscale_factor()) + ")";
  });

  // ---- channel dropout ----
  nn.def("dropout1d", [](const Tensor& x, double p, bool training) { return dropout1d(x, p, training); },
         nb::arg("input"), nb::arg("p") = 0.5, nb::arg("training") = true,
         "Zeroes whole channels of (N, C, L) or (C, L) with probability p, scaling the rest by 1/(1-p), when "
         "training; the identity otherwise.");
  nn.def("dropout2d", [](const Tensor& x, double p, bool training) { return dropout2d(x, p, training); },
         nb::arg("input"), nb::arg("p") = 0.5, nb::arg("training") = true,
         "Zeroes whole channels of (N, C, H, W) or (C, H, W) with probability p, scaling the rest by 1/(1-p), "
         "when training; the identity otherwise.");
  nb::class_<Dropout1d, Module>(nn, "Dropout1d", "Channel-wise dropout of (N, C, L) input in training mode.")
      .def("__init__",
           [](Dropout1d* self, double p, InplaceOrName inplace_arg, std::string name, std::optional<uint64_t> seed) {
    const bool inplace = inplace_or_name(inplace_arg, name);
    new (self) Dropout1d(p, std::move(name), seed);
    self->set_inplace(inplace);
  }, nb::arg("p") = 0.5, nb::arg("inplace").none() = false, nb::arg("name") = "", nb::kw_only(),
           nb::arg("seed") = nb::none(),
           "inplace=True writes the result into the input (in training); seed= gives the layer its own Philox stream "
           "(reproducible masks).")
      .def_prop_ro("p", &Dropout1d::p, "The probability of zeroing, in [0, 1].")
      .def_prop_ro("inplace", &Dropout1d::inplace, "Whether the result is written into the input (in training).")
      .def("__repr__", [](const Dropout1d& m) {
    return "Dropout1d(p=" + fmt_p(m.p()) + (m.inplace() ? ", inplace=True" : "") + ")";
  });
  nb::class_<Dropout2d, Module>(nn, "Dropout2d", "Channel-wise dropout of (N, C, H, W) input in training mode.")
      .def("__init__",
           [](Dropout2d* self, double p, InplaceOrName inplace_arg, std::string name, std::optional<uint64_t> seed) {
    const bool inplace = inplace_or_name(inplace_arg, name);
    new (self) Dropout2d(p, std::move(name), seed);
    self->set_inplace(inplace);
  }, nb::arg("p") = 0.5, nb::arg("inplace").none() = false, nb::arg("name") = "", nb::kw_only(),
           nb::arg("seed") = nb::none(),
           "inplace=True writes the result into the input (in training); seed= gives the layer its own Philox stream "
           "(reproducible masks).")
      .def_prop_ro("p", &Dropout2d::p, "The probability of zeroing, in [0, 1].")
      .def_prop_ro("inplace", &Dropout2d::inplace, "Whether the result is written into the input (in training).")
      .def("__repr__", [](const Dropout2d& m) {
    return "Dropout2d(p=" + fmt_p(m.p()) + (m.inplace() ? ", inplace=True" : "") + ")";
  });

  nn.def("alpha_dropout",
         [](const Tensor& x, double p, bool training, bool inplace) {
    if (inplace) throw st::ValueError("alpha_dropout: inplace=True is not supported");
    return alpha_dropout(x, p, training);
  }, nb::arg("input"), nb::arg("p") = 0.5, nb::arg("training") = false, nb::arg("inplace") = false,
         "Alpha dropout for SELU networks (keeps zero mean and unit variance); the identity unless training.");
  nn.def("feature_alpha_dropout",
         [](const Tensor& x, double p, bool training, bool inplace) {
    if (inplace) throw st::ValueError("feature_alpha_dropout: inplace=True is not supported");
    return feature_alpha_dropout(x, p, training);
  }, nb::arg("input"), nb::arg("p") = 0.5, nb::arg("training") = false, nb::arg("inplace") = false,
         "Alpha dropout of whole channels of (N, C, *) input; the identity unless training.");
  nb::class_<AlphaDropout, Module>(nn, "AlphaDropout",
                                   "Alpha dropout (SELU networks): zero mean and unit variance kept; the identity "
                                   "in eval mode.")
      .def("__init__",
           [](AlphaDropout* self, double p, bool inplace, std::string name, std::optional<uint64_t> seed) {
    if (inplace) throw st::ValueError("AlphaDropout: inplace=True is not supported");
    new (self) AlphaDropout(p, std::move(name), seed);
  }, nb::arg("p") = 0.5, nb::arg("inplace") = false, nb::arg("name") = "", nb::kw_only(), nb::arg("seed") = nb::none(),
           "p in [0, 1]; inplace=True raises ValueError (not supported); seed= gives the layer its own Philox stream.")
      .def_prop_ro("p", &AlphaDropout::p, "The probability of zeroing, in [0, 1].")
      .def("__repr__", [](const AlphaDropout& m) { return m.type_name() + "(p=" + fmt_p(m.p()) + ")"; });
  nb::class_<FeatureAlphaDropout, AlphaDropout>(nn, "FeatureAlphaDropout",
                                                "Alpha dropout of whole channels of (N, C, *) input (SELU networks).")
      .def("__init__",
           [](FeatureAlphaDropout* self, double p, bool inplace, std::string name, std::optional<uint64_t> seed) {
    if (inplace) throw st::ValueError("FeatureAlphaDropout: inplace=True is not supported");
    new (self) FeatureAlphaDropout(p, std::move(name), seed);
  }, nb::arg("p") = 0.5, nb::arg("inplace") = false, nb::arg("name") = "", nb::kw_only(), nb::arg("seed") = nb::none(),
           "p in [0, 1]; inplace=True raises ValueError (not supported); seed= gives the layer its own Philox stream.");

  // ---- bilinear ----
  nn.def("bilinear",
         [](const Tensor& a, const Tensor& b, const Tensor& w, std::optional<Tensor> bias) {
    return bilinear(a, b, w, bias ? *bias : Tensor());
  }, nb::arg("input1"), nb::arg("input2"), nb::arg("weight"), nb::arg("bias") = nb::none(),
         "y[..., o] = sum_ij input1[..., i] weight[o, i, j] input2[..., j] + bias[o].");
  auto bilinear_fwd = [](Bilinear& m, const Tensor& a, const Tensor& b) { return m.forward2(a, b); };
  nb::class_<Bilinear, Module>(nn, "Bilinear",
                               "Bilinear layer: weight (out_features, in1_features, in2_features), bias "
                               "(out_features,), U(-1/sqrt(in1_features), 1/sqrt(in1_features)) like PyTorch.")
      .def(nb::init<int64_t, int64_t, int64_t, bool, std::string>(), nb::arg("in1_features"), nb::arg("in2_features"),
           nb::arg("out_features"), nb::arg("bias") = true, nb::arg("name") = "",
           "y = x1^T A x2 + b: weight (out_features, in1_features, in2_features) and bias (out_features,) from "
           "U(-1/sqrt(in1_features), 1/sqrt(in1_features)).")
      .def("forward", bilinear_fwd, nb::arg("input1"), nb::arg("input2"),
           "y[..., o] = sum_ij input1[..., i] weight[o, i, j] input2[..., j] + bias[o]; input1 (..., in1_features), "
           "input2 (..., in2_features) with the same leading dims.")
      .def("__call__", bilinear_fwd, nb::arg("input1"), nb::arg("input2"), "forward(input1, input2).")
      .def_prop_ro("weight", &Bilinear::weight, "The (out_features, in1_features, in2_features) weight.")
      .def_prop_ro("bias", [](Bilinear& m) { return opt_param(m.bias()); }, "The (out_features,) bias, or None.")
      .def_prop_ro("in1_features", &Bilinear::in1_features, "The size of input1's last dim.")
      .def_prop_ro("in2_features", &Bilinear::in2_features, "The size of input2's last dim.")
      .def_prop_ro("out_features", &Bilinear::out_features, "The size of the output's last dim.")
      .def("__repr__", [](Bilinear& m) {
    return "Bilinear(in1_features=" + std::to_string(m.in1_features()) +
           ", in2_features=" + std::to_string(m.in2_features()) + ", out_features=" + std::to_string(m.out_features()) +
           ", bias=" + b2s(m.bias().defined()) + ")";
  });

  // ---- recurrent cells ----
  nb::class_<RNNCellBase, Module>(nn, "RNNCellBase", "Shared base of RNNCell, LSTMCell and GRUCell.")
      .def_prop_ro("input_size", &RNNCellBase::input_size, "The size of the input's last dim.")
      .def_prop_ro("hidden_size", &RNNCellBase::hidden_size, "The size of the hidden state.")
      .def_prop_ro("bias", &RNNCellBase::has_bias, "Whether the cell has bias_ih and bias_hh.")
      .def_prop_ro("weight_ih", &RNNCellBase::weight_ih,
                   "The (gates * hidden_size, input_size) input weight (gates: 1 RNN, 4 LSTM, 3 GRU).")
      .def_prop_ro("weight_hh", &RNNCellBase::weight_hh, "The (gates * hidden_size, hidden_size) hidden weight.")
      .def_prop_ro("bias_ih", [](RNNCellBase& m) { return opt_param(m.bias_ih()); },
                   "The (gates * hidden_size,) input bias, or None.")
      .def_prop_ro("bias_hh", [](RNNCellBase& m) { return opt_param(m.bias_hh()); },
                   "The (gates * hidden_size,) hidden bias, or None.");

  auto rnn_fwd = [](RNNCell& m, const Tensor& x, std::optional<Tensor> hx) { return m.forward_full(x, hx); };
  nb::class_<RNNCell, RNNCellBase>(nn, "RNNCell",
                                   "Elman cell h' = act(x W_ih^T + b_ih + h W_hh^T + b_hh), act tanh or relu. "
                                   "forward(input, hx=None) returns h'.")
      .def(nb::init<int64_t, int64_t, bool, std::string, std::string>(), nb::arg("input_size"), nb::arg("hidden_size"),
           nb::arg("bias") = true, nb::arg("nonlinearity") = "tanh", nb::arg("name") = "",
           "nonlinearity 'tanh' or 'relu'; weights U(-1/sqrt(hidden_size), 1/sqrt(hidden_size)).")
      .def_prop_ro("nonlinearity", &RNNCell::nonlinearity, "'tanh' or 'relu'.")
      .def("forward", rnn_fwd, nb::arg("input"), nb::arg("hx").none() = nb::none(),
           "One step: input (batch, input_size) or (input_size,), hx (batch, hidden_size) or None (zeros); returns h' "
           "shaped like hx.")
      .def("__call__", rnn_fwd, nb::arg("input"), nb::arg("hx").none() = nb::none(), "forward(input, hx).")
      .def("__repr__", [](const RNNCell& m) {
    return "RNNCell(" + std::to_string(m.input_size()) + ", " + std::to_string(m.hidden_size()) +
           (m.has_bias() ? "" : ", bias=False") + (m.nonlinearity() == "tanh" ? "" : ", nonlinearity='relu'") + ")";
  });

  auto lstm_fwd = [](LSTMCell& m, const Tensor& x, LstmCellState hx_arg) {
    const nb::handle hx = hx_arg ? nb::handle(*hx_arg) : nb::none();
    std::optional<Tensor> h, c;
    if (!hx.is_none()) {
      if (!nb::isinstance<nb::sequence>(hx) || nb::isinstance<Tensor>(hx) || nb::len(hx) != 2) {
        throw st::ValueError("LSTMCell: hx must be a tuple (h_0, c_0) or None, got " + repr_of(hx));
      }
      nb::sequence s = nb::borrow<nb::sequence>(hx);
      h = nb::cast<Tensor>(s[0]);
      c = nb::cast<Tensor>(s[1]);
    }
    auto [h1, c1] = m.forward_full(x, h, c);
    return std::make_pair(h1, c1);
  };
  nb::class_<LSTMCell, RNNCellBase>(nn, "LSTMCell",
                                    "LSTM cell, gate order (i, f, g, o) like PyTorch. forward(input, hx=None) with "
                                    "hx = (h_0, c_0) returns (h_1, c_1).")
      .def(nb::init<int64_t, int64_t, bool, std::string>(), nb::arg("input_size"), nb::arg("hidden_size"),
           nb::arg("bias") = true, nb::arg("name") = "",
           "Weights U(-1/sqrt(hidden_size), 1/sqrt(hidden_size)) like PyTorch.")
      .def("forward", lstm_fwd, nb::arg("input"), nb::arg("hx").none() = nb::none(),
           "One step: input (batch, input_size) or (input_size,), hx = (h_0, c_0) each (batch, hidden_size), or None "
           "(zeros); returns (h_1, c_1).")
      .def("__call__", lstm_fwd, nb::arg("input"), nb::arg("hx").none() = nb::none(), "forward(input, hx).")
      .def("__repr__", [](const LSTMCell& m) {
    return "LSTMCell(" + std::to_string(m.input_size()) + ", " + std::to_string(m.hidden_size()) +
           (m.has_bias() ? "" : ", bias=False") + ")";
  });

  auto gru_fwd = [](GRUCell& m, const Tensor& x, std::optional<Tensor> hx) { return m.forward_full(x, hx); };
  nb::class_<GRUCell, RNNCellBase>(nn, "GRUCell",
                                   "GRU cell, gate order (r, z, n) like PyTorch. forward(input, hx=None) returns h'.")
      .def(nb::init<int64_t, int64_t, bool, std::string>(), nb::arg("input_size"), nb::arg("hidden_size"),
           nb::arg("bias") = true, nb::arg("name") = "",
           "Weights U(-1/sqrt(hidden_size), 1/sqrt(hidden_size)) like PyTorch.")
      .def("forward", gru_fwd, nb::arg("input"), nb::arg("hx").none() = nb::none(),
           "One step: input (batch, input_size) or (input_size,), hx (batch, hidden_size) or None (zeros); returns h'.")
      .def("__call__", gru_fwd, nb::arg("input"), nb::arg("hx").none() = nb::none(), "forward(input, hx).")
      .def("__repr__", [](const GRUCell& m) {
    return "GRUCell(" + std::to_string(m.input_size()) + ", " + std::to_string(m.hidden_size()) +
           (m.has_bias() ? "" : ", bias=False") + ")";
  });
}

}  // namespace stpy
