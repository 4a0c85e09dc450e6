#pragma once
// float32 LSTM layers on the CPU through oneDNN's RNN primitives (src/backend/cpu/rnn_onednn.cpp),
// and the switch that picks them or the fused loop recurrence of src/nn/rnn.cpp. Builds
// without oneDNN keep these functions: the compute ones return nullopt and the module
// takes the loop path.
#include <optional>
#include <string>

#include "spiraltorch/tensor.h"

namespace st::backend::onednn {

// The RNN backend switch: "auto" (oneDNN for float32 on the CPU when built, else the loop),
// "loop" or "onednn" (an error when it is not built). It starts from the environment
// variable SPIRALTORCH_RNN_BACKEND and can be changed at run time (tests compare both).
std::string rnn_backend();
void set_rnn_backend(const std::string& name);
// Whether a float32 CPU LSTM layer should go to oneDNN now.
bool use_onednn_rnn();

// One unidirectional single-layer LSTM, time-major, PyTorch's weight layout.
struct LstmDims {
  int64_t T, B, I, H;
  bool bias;
};

// The three results of one layer: output (T, B, H) = all h_t, h_n = h_T and c_n = c_T, each (B, H)
// and contiguous. In lstm_backward the same struct carries their gradients.
struct LstmOutputs {
  Tensor output, h_n, c_n;
};

// Inputs are contiguous float32 CPU tensors: x (T, B, I), w_ih (4H, I), w_hh (4H, H),
// bias (4H) = b_ih + b_hh (undefined when !d.bias), h0 / c0 (B, H). With `workspace` non-null
// the forward runs in training mode and stores there what lstm_backward needs. nullopt when
// oneDNN has no implementation (the caller uses the loop); oneDNN failures become SpiralError
// naming `op` and the shapes.
std::optional<LstmOutputs> lstm_forward(const Tensor& x, const Tensor& w_ih, const Tensor& w_hh, const Tensor& bias,
                                        const Tensor& h0, const Tensor& c0, const LstmDims& d, Tensor* workspace,
                                        const char* op);

struct LstmGrads {
  Tensor dx, dw_ih, dw_hh, db, dh0, dc0;  // db: the gradient of both b_ih and b_hh
};
// Gradients of lstm_forward (training mode) given the gradients `g` of its outputs `out` (all
// three defined and contiguous; zeros for an output that received none).
std::optional<LstmGrads> lstm_backward(const LstmOutputs& g, const LstmOutputs& out, const Tensor& workspace,
                                       const Tensor& x, const Tensor& w_ih, const Tensor& w_hh, const Tensor& bias,
                                       const Tensor& h0, const Tensor& c0, const LstmDims& d, const char* op);

}  // namespace st::backend::onednn
