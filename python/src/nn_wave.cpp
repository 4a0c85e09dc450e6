// spiraltorch._core.nn: the attentionless sequence layers — WaveRnn, WaveGate,
// ZSpaceMixer, FeatureReorder2d.
#include <nanobind/stl/pair.h>
#include <nanobind/stl/shared_ptr.h>

#include <cstdio>

#include "nn_bind.h"
#include "spiraltorch/nn/feature_reorder.h"
#include "spiraltorch/zspace/wave_gate.h"
#include "spiraltorch/zspace/wave_rnn.h"
#include "spiraltorch/zspace/zspace_mixer.h"

namespace stpy {

namespace {

std::string fmt_double(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

}  // namespace

void bind_nn_wave(nb::module_& nn) {
  namespace snn = st::nn;
  using snn::Module;

  auto rnn_forward = [](snn::WaveRnn& self, const Tensor& input, std::optional<Tensor> lengths,
                        std::optional<Tensor> h0) {
    auto [out, hn] = self.forward_full(input, lengths, h0);
    return std::make_pair(out, hn);
  };
  nb::class_<snn::WaveRnn, Module>(
      nn, "WaveRnn",
      "Attentionless recurrent layer: a causal convolution over the last `kernel_size` inputs gives the gate "
      "pre-activations of a GRU-style gated recurrence, and each hidden state is mapped into the Poincare ball "
      "(exp_0, `curvature`).\n\nInput (batch, seq, input_size). forward(input, lengths=None, h0=None) returns "
      "(output (batch, seq, hidden) in the ball, h_n (batch, hidden)); with `lengths` (int64, one per right-padded "
      "row) outputs past a row's length are zero and h_n is its state after the last valid step.")
      .def(nb::init<int64_t, int64_t, int64_t, double, std::string>(), nb::arg("input_size"), nb::arg("hidden_size"),
           nb::arg("kernel_size") = 3, nb::arg("curvature") = -1.0, nb::arg("name") = "",
           "input_size -> hidden_size with a causal window of kernel_size steps; curvature (negative) of the "
           "Poincare ball the states are mapped into.")
      .def("forward", rnn_forward, nb::arg("input"), nb::arg("lengths").none() = nb::none(),
           nb::arg("h0").none() = nb::none(),
           "(output (batch, seq, hidden_size), h_n (batch, hidden_size)) for input (batch, seq, input_size); "
           "lengths (int64, one per row) marks right padding; h0 (batch, hidden_size) or None (zeros).")
      .def("__call__", rnn_forward, nb::arg("input"), nb::arg("lengths").none() = nb::none(),
           nb::arg("h0").none() = nb::none(), "forward(input, lengths, h0).")
      .def_prop_ro("input_size", &snn::WaveRnn::input_size, "The size of each input step.")
      .def_prop_ro("hidden_size", &snn::WaveRnn::hidden_size, "The size of the hidden state.")
      .def_prop_ro("kernel_size", &snn::WaveRnn::kernel_size, "The causal convolution window (steps).")
      .def_prop_ro("curvature", &snn::WaveRnn::curvature, "The (negative) curvature of the Poincare ball.")
      .def("extra_repr", [](const snn::WaveRnn& m) {
    return std::to_string(m.input_size()) + ", " + std::to_string(m.hidden_size()) +
           ", kernel_size=" + std::to_string(m.kernel_size()) + ", curvature=" + fmt_double(m.curvature());
  }, "The constructor arguments as repr() shows them.");

  nb::class_<snn::WaveGate, Module>(
      nn, "WaveGate",
      "Highway gate per position, mapped into the Poincare ball: g = sigmoid(x W_g^T + b_g), "
      "v = tanh(x W_v^T + b_v), y = exp_0(g * v + (1 - g) * x). Works on any (..., features) input.")
      .def(nb::init<int64_t, double, std::string>(), nb::arg("features"), nb::arg("curvature") = -1.0,
           nb::arg("name") = "",
           "Gate and value projections features -> features (Linear-style init); curvature (negative) of the ball.")
      .def("gate", &snn::WaveGate::gate, nb::arg("input"), "The gate g = sigmoid(x W_g^T + b_g) for an input.")
      .def_prop_ro("features", &snn::WaveGate::features, "The size of the last dim, in and out.")
      .def_prop_ro("curvature", &snn::WaveGate::curvature, "The (negative) curvature of the Poincare ball.")
      .def("extra_repr", [](const snn::WaveGate& m) {
    return "features=" + std::to_string(m.features()) + ", curvature=" + fmt_double(m.curvature());
  }, "The constructor arguments as repr() shows them.");

  nb::class_<snn::ZSpaceMixer, Module>(
      nn, "ZSpaceMixer",
      "Causal depthwise mixing along time: y[b, t, f] = sum_k weight[f, K-1-k] * x[b, t-k, f]. Input (batch, seq, "
      "features), or (batch, features) for one step (y = x * weight[:, K-1]). Initialised to the identity.")
      .def(nb::init<int64_t, int64_t, std::string>(), nb::arg("features"), nb::arg("kernel_size") = 4,
           nb::arg("name") = "",
           "A (features, kernel_size) depthwise causal kernel, initialised to the identity (1 at the current step).")
      .def_prop_ro("features", &snn::ZSpaceMixer::features, "The size of the last dim, in and out.")
      .def_prop_ro("kernel_size", &snn::ZSpaceMixer::kernel_size,
                   "The number of past steps mixed (including the current one).")
      .def_prop_ro("weight", [](snn::ZSpaceMixer& m) { return *m.find_parameter("weight"); },
                   "The (features, kernel_size) mixing weights.")
      .def("extra_repr", [](const snn::ZSpaceMixer& m) {
    return "features=" + std::to_string(m.features()) + ", kernel_size=" + std::to_string(m.kernel_size());
  }, "The constructor arguments as repr() shows them.");

  nb::class_<snn::FeatureReorder2d, Module>(
      nn, "FeatureReorder2d",
      "Moves image features between channel-last (NHWC) and the canonical channel-first (NCHW) layout. Input "
      "(batch, C*H*W) (output flattened too) or 4-d; layout 'NCHW' is the identity; direction 'to_canonical' "
      "('to') or 'from_canonical' ('from').")
      .def(nb::init<int64_t, int64_t, int64_t, std::string, std::string, std::string>(), nb::arg("channels"),
           nb::arg("height"), nb::arg("width"), nb::arg("layout") = "NCHW", nb::arg("direction") = "to_canonical",
           nb::arg("name") = "",
           "An image of channels x height x width; layout 'NCHW' (identity) or 'NHWC'; direction 'to_canonical' "
           "('to') or 'from_canonical' ('from'). ValueError for other strings.")
      .def_prop_ro("shape",
                   [](const snn::FeatureReorder2d& m) {
    return nb::typed<nb::tuple, int64_t, int64_t, int64_t>(nb::make_tuple(m.channels(), m.height(), m.width()));
  }, "(channels, height, width).")
      .def_prop_ro("layout", &snn::FeatureReorder2d::layout, "'NCHW' or 'NHWC'.")
      .def_prop_ro("direction", &snn::FeatureReorder2d::direction, "'to_canonical' or 'from_canonical'.")
      .def("extra_repr", [](const snn::FeatureReorder2d& m) {
    return std::to_string(m.channels()) + ", " + std::to_string(m.height()) + ", " + std::to_string(m.width()) +
           ", layout='" + m.layout() + "', direction='" + m.direction() + "'";
  }, "The constructor arguments as repr() shows them.");
}

}  // namespace stpy
