#pragma once
// float32 LSTM layers on the CPU through oneDNN's RNN primitives (src/backend/cpu/rnn_onednn.cpp):
// the CPU backend's lstm_layer entries, and the switch that lets them take a layer or decline it
// (the module then runs the input projection and the fused loop recurrence). Builds without
// oneDNN keep these functions: the entries decline.
#include <string>

#include "backend/backend.h"

namespace st::backend::onednn {

// The RNN backend switch: "auto" (oneDNN for float32 on the CPU when built, else the loop),
// "loop" or "onednn" (an error when it is not built). It starts from the environment
// variable SPIRALTORCH_RNN_BACKEND and can be changed at run time (tests compare both).
std::string rnn_backend();
void set_rnn_backend(const std::string& name);
// Whether a float32 CPU LSTM layer should go to oneDNN now.
bool use_onednn_rnn();

// Backend::lstm_layer and lstm_layer_backward of the CPU backend (their contracts are in
// backend.h): float32 operands while use_onednn_rnn(); the backward takes every call whose
// training forward was taken. oneDNN failures other than a missing implementation become
// SpiralError naming the shapes.
bool lstm_layer(const Tensor& x, const Tensor& w_ih, const Tensor& w_hh, const Tensor& b_ih, const Tensor& b_hh,
                const Tensor& h0, const Tensor& c0, Backend::LstmOutputs& out, Tensor* workspace);
bool lstm_layer_backward(const Backend::LstmOutputs& g, const Backend::LstmOutputs& out, const Tensor& workspace,
                         const Tensor& x, const Tensor& w_ih, const Tensor& w_hh, const Tensor& b_ih,
                         const Tensor& b_hh, const Tensor& h0, const Tensor& c0, Backend::LstmGrads& grads);

}  // namespace st::backend::onednn
