// spiraltorch._core.nn: sequence layers — LSTM, GRU, MultiheadAttention,
// TransformerEncoderLayer, TransformerEncoder, TransformerDecoderLayer, TransformerDecoder,
// Transformer — and scaled_dot_product_attention.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/variant.h>
#include <nanobind/stl/vector.h>

#include <cstdio>
#include <functional>
#include <tuple>
#include <variant>

#include "nn_bind.h"
#include "spiraltorch/nn/activation.h"
#include "spiraltorch/nn/attention.h"
#include "spiraltorch/nn/rnn.h"
#include "spiraltorch/nn/transformer.h"

namespace stpy {

namespace {

using st::nn::Module;

std::optional<Tensor> opt(const Tensor& t) { return t.defined() ? std::optional<Tensor>(t) : std::nullopt; }

std::optional<Tensor> opt_tensor(nb::handle h, const char* what) {
  if (h.is_none()) return std::nullopt;
  if (!nb::isinstance<Tensor>(h)) {
    throw nb::type_error((std::string(what) + " must be a Tensor or None").c_str());
  }
  return nb::cast<Tensor>(h);
}

// A transformer layer's activation as its name: a string as it is; PyTorch's callable forms by what they
// compute: nn.ReLU() / F.relu -> 'relu', nn.GELU(approximate=a) / F.gelu / functools.partial(F.gelu,
// approximate=a) -> 'gelu' or 'gelu_tanh'. TypeError for any other callable (the layer runs its
// feed-forward block in C++, so an arbitrary Python function cannot stand in it).
using Activation = std::variant<std::string, nb::callable>;

std::string activation_name(const Activation& activation, const char* who) {
  if (const auto* name = std::get_if<std::string>(&activation)) return *name;
  const nb::handle a = std::get<nb::callable>(activation);
  const auto gelu_name = [](const std::string& approximate) {
    return approximate == "tanh" ? std::string("gelu_tanh") : std::string("gelu");
  };
  if (nb::isinstance<st::nn::ReLU>(a)) return "relu";
  if (nb::isinstance<st::nn::GELU>(a)) return gelu_name(nb::cast<st::nn::GELU&>(a).approximate());
  const nb::module_ nn = nb::module_::import_("spiraltorch._core.nn");
  if (a.is(nn.attr("relu"))) return "relu";
  if (a.is(nn.attr("gelu"))) return "gelu";
  if (nb::isinstance(a, nb::module_::import_("functools").attr("partial")) && a.attr("func").is(nn.attr("gelu")) &&
      nb::len(nb::object(a.attr("args"))) == 0) {
    const nb::dict kw = nb::cast<nb::dict>(a.attr("keywords"));
    if (kw.size() == 0) return "gelu";
    if (kw.size() == 1 && kw.contains("approximate")) return gelu_name(nb::cast<std::string>(kw["approximate"]));
  }
  throw nb::type_error((std::string(who) +
                        ": activation must be 'relu', 'gelu', 'gelu_tanh', nn.ReLU(), "
                        "nn.GELU(approximate=...), F.relu, F.gelu or functools.partial(F.gelu, approximate='tanh'), "
                        "got " +
                        nb::cast<std::string>(nb::repr(a)))
                           .c_str());
}

// A transformer layer's __init__ (PyTorch's arguments), its activation named by activation_name.
template <class Layer>
auto layer_init(const char* who) {
  return
      [who](Layer* self, int64_t d_model, int64_t nhead, int64_t dim_feedforward, double dropout,
            const Activation& activation, bool batch_first, bool norm_first, double layer_norm_eps, std::string name) {
    new (self) Layer(d_model, nhead, dim_feedforward, dropout, activation_name(activation, who), batch_first,
                     norm_first, layer_norm_eps, std::move(name));
  };
}

std::string fmt_double(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

std::string name_suffix(const Module& m) { return m.name().empty() ? "" : ", name='" + m.name() + "'"; }

std::string rnn_repr(const st::nn::RNNBase& m) {
  std::string s = m.type_name() + "(" + std::to_string(m.input_size()) + ", " + std::to_string(m.hidden_size());
  if (m.num_layers() != 1) s += ", num_layers=" + std::to_string(m.num_layers());
  if (const auto* rnn = dynamic_cast<const st::nn::RNN*>(&m); rnn && rnn->nonlinearity() != "tanh")
    s += ", nonlinearity='" + rnn->nonlinearity() + "'";
  if (!m.has_bias()) s += ", bias=False";
  if (!m.batch_first()) s += ", batch_first=False";
  if (m.dropout() != 0.0) s += ", dropout=" + fmt_double(m.dropout());
  if (m.bidirectional()) s += ", bidirectional=True";
  if (m.proj_size() > 0) s += ", proj_size=" + std::to_string(m.proj_size());
  return s + name_suffix(m) + ")";
}

// The child registered under `slot` (what `module.<slot> = ...` last assigned), or None.
nb::object registered_child(const Module& m, const std::string& slot) {
  for (const auto& [s, c] : m.children()) {
    if (s == slot) return nb::cast(c);
  }
  return nb::none();
}

// A PackedSequence (nn.utils.rnn) read and checked for an LSTM/GRU: data (sum of lengths, F), the
// batch sizes per time step (positive, non-increasing, adding up to data's rows), each step's first
// row, and the permutations between the caller's batch order and the sorted one.
struct Packed {
  Tensor data, batch_sizes;
  nb::object sorted, unsorted;
  std::vector<int64_t> sizes, offset;  // offset[t]: first row of step t; offset[T] = rows
  Packed(nb::handle packed, const st::nn::RNNBase& m)
      : data(nb::cast<Tensor>(packed.attr("data"))),
        batch_sizes(nb::cast<Tensor>(packed.attr("batch_sizes"))),
        sorted(packed.attr("sorted_indices")),
        unsorted(packed.attr("unsorted_indices")) {
    if (data.dim() != 2)
      throw st::ShapeError(m.type_name() + ": a PackedSequence's data must be (sum of lengths, features)");
    sizes = batch_sizes.to(Dtype::Int64).contiguous().to_vector<int64_t>();
    if (sizes.empty()) throw st::ValueError(m.type_name() + ": empty PackedSequence");
    offset.assign(sizes.size() + 1, 0);
    for (size_t t = 0; t < sizes.size(); ++t) {
      if (sizes[t] <= 0 || sizes[t] > sizes[t ? t - 1 : 0])
        throw st::ValueError(m.type_name() + ": batch_sizes must be positive and non-increasing");
      offset[t + 1] = offset[t] + sizes[t];
    }
    if (offset.back() != data.size(0))
      throw st::ShapeError(m.type_name() + ": batch_sizes do not add up to the data's length");
  }
  int64_t batch() const { return sizes[0]; }
  int64_t steps() const { return static_cast<int64_t>(sizes.size()); }
  // An initial state (states, B, H) in sorted order: the caller's, or zeros.
  Tensor initial(const std::optional<Tensor>& given, int64_t states, int64_t H) const {
    if (!given) return st::zeros({states, batch(), H}, data.dtype(), data.device());
    return sorted.is_none() ? *given : st::index_select(*given, 1, nb::cast<Tensor>(sorted));
  }
  // A final state back in the caller's batch order.
  Tensor unsort(const Tensor& state) const {
    return unsorted.is_none() || !state.defined() ? state : st::index_select(state, 1, nb::cast<Tensor>(unsorted));
  }
  // The output rows packed like the input (same batch sizes and permutations).
  nb::object repack(nb::handle packed, const Tensor& out_data) const {
    return packed.type()(out_data, batch_sizes, sorted, unsorted);
  }
};

// An LSTM/GRU over a PackedSequence: PyTorch's cuDNN packed layout, run as one native step per time
// index on the sequences still running (batch_sizes[t] of them, longest first), so every sequence
// stops at its own length: outputs at its valid steps and h_n (c_n) from its last one, exactly as a
// run on that sequence alone. h0 and h_n are in the caller's batch order. `step(x_t, h, c)` runs one
// step on (1, n, F) seq-first input (laid out for the module's batch_first) and returns
// (output (n, H), h, c); c is undefined for the GRU.
using PackedStep = std::function<std::tuple<Tensor, Tensor, Tensor>(const Tensor&, const Tensor&, const Tensor&)>;

std::tuple<nb::object, Tensor, Tensor> run_packed(nb::handle packed, const st::nn::RNNBase& m, std::optional<Tensor> h0,
                                                  std::optional<Tensor> c0, bool has_cell, const PackedStep& step) {
  const Packed p(packed, m);
  const int64_t B = p.batch();
  Tensor h = p.initial(h0, m.num_layers(), m.output_size());
  Tensor c = has_cell ? p.initial(c0, m.num_layers(), m.hidden_size()) : Tensor();
  std::vector<Tensor> outs;
  for (int64_t t = 0; t < p.steps(); ++t) {
    const int64_t n = p.sizes[t];
    const Tensor x = st::unsqueeze(st::narrow(p.data, 0, p.offset[t], n), m.batch_first() ? 1 : 0);
    auto [y, h_new, c_new] = step(x, st::narrow(h, 1, 0, n), has_cell ? st::narrow(c, 1, 0, n) : Tensor());
    outs.push_back(y);
    h = n < B ? st::cat({h_new, st::narrow(h, 1, n, B - n)}, 1) : h_new;
    if (has_cell) c = n < B ? st::cat({c_new, st::narrow(c, 1, n, B - n)}, 1) : c_new;
  }
  return {p.repack(packed, st::cat(outs, 0)), p.unsort(h), p.unsort(c)};
}

// A bidirectional LSTM/GRU over a PackedSequence: each layer's backward direction starts at each
// sequence's own last step, so the time-step loop above (all layers per step) cannot run it; here
// each sequence runs alone through the module (`run(x_b, h0_b, c0_b)` on an unbatched (len_b, F)
// sequence with (layers * 2, H) states, returning (output (len_b, D), h_n, c_n)), which is the
// packed semantics by definition, and the outputs are interleaved back into the packed layout.
using SequenceRun = std::function<std::tuple<Tensor, Tensor, Tensor>(const Tensor&, const Tensor&, const Tensor&)>;

std::tuple<nb::object, Tensor, Tensor> run_packed_per_sequence(nb::handle packed, const st::nn::RNNBase& m,
                                                               std::optional<Tensor> h0, std::optional<Tensor> c0,
                                                               bool has_cell, const SequenceRun& run) {
  const Packed p(packed, m);
  const int64_t B = p.batch(), T = p.steps();
  const int64_t states = m.num_layers() * m.num_directions();
  const Tensor h_init = p.initial(h0, states, m.output_size());
  const Tensor c_init = has_cell ? p.initial(c0, states, m.hidden_size()) : Tensor();
  auto index = [&](const std::vector<int64_t>& v) {
    return st::to_device(Tensor::from_vector(v, {static_cast<int64_t>(v.size())}), p.data.device());
  };
  std::vector<Tensor> outs, hs, cs;
  std::vector<int64_t> start(B + 1, 0);  // each sequence's first row in the concatenated outputs
  for (int64_t b = 0; b < B; ++b) {
    std::vector<int64_t> rows;
    for (int64_t t = 0; t < T && p.sizes[t] > b; ++t) rows.push_back(p.offset[t] + b);
    auto [y, h, c] = run(st::index_select(p.data, 0, index(rows)), st::select(h_init, 1, b),
                         has_cell ? st::select(c_init, 1, b) : Tensor());
    outs.push_back(y);
    hs.push_back(h);
    if (has_cell) cs.push_back(c);
    start[b + 1] = start[b] + static_cast<int64_t>(rows.size());
  }
  std::vector<int64_t> order;  // packed row (t, b) <- row start[b] + t of the concatenation
  for (int64_t t = 0; t < T; ++t) {
    for (int64_t b = 0; b < p.sizes[t]; ++b) order.push_back(start[b] + t);
  }
  const Tensor out_data = st::index_select(st::cat(outs, 0), 0, index(order));
  return {p.repack(packed, out_data), p.unsort(st::stack(hs, 1)), has_cell ? p.unsort(st::stack(cs, 1)) : Tensor()};
}

bool is_packed(nb::handle x) {
  return !nb::isinstance<Tensor>(x) && nb::hasattr(x, "batch_sizes") && nb::hasattr(x, "data");
}

// forward of the layers with one state (GRU, RNN): (output, h_n) for a tensor or a PackedSequence.
constexpr const char* kSingleStateForwardDoc =
    "Runs the sequence: input (seq, batch, input_size) (batch_first: (batch, seq, input_size)), unbatched "
    "(seq, input_size), or a PackedSequence. Returns (output, h_n): output (..., hidden_size) from the "
    "last layer at every step (2 * hidden_size with bidirectional), h_n (num_layers * num_directions, batch, "
    "hidden_size); h0 None means zeros.";
using SingleStateResult = nb::typed<nb::object, std::tuple<std::variant<Tensor, stub::PackedSequence>, Tensor>>;

template <typename Layer>
SingleStateResult single_state_forward(Layer& self, SeqInput input_obj, std::optional<Tensor> h0) {
  if (is_packed(input_obj) && self.bidirectional()) {
    auto [out, hn, unused] = run_packed_per_sequence(input_obj, self, h0, std::nullopt, false,
                                                     [&](const Tensor& x, const Tensor& hp, const Tensor&) {
      auto [y, state] = self.forward_full(x, hp);
      return std::make_tuple(y, state, Tensor());
    });
    return SingleStateResult(nb::make_tuple(out, hn));
  }
  if (is_packed(input_obj)) {
    const int64_t H = self.output_size();
    auto [out, hn, unused] =
        run_packed(input_obj, self, h0, std::nullopt, false, [&](const Tensor& x, const Tensor& hp, const Tensor&) {
      auto [y, state] = self.forward_full(x, hp);
      return std::make_tuple(st::reshape(y, {-1, H}), state, Tensor());
    });
    return SingleStateResult(nb::make_tuple(out, hn));
  }
  auto [out, hn] = self.forward_full(nb::cast<Tensor>(input_obj), h0);
  return SingleStateResult(nb::make_tuple(out, hn));
}

}  // namespace

void bind_nn_seq(nb::module_& nn) {
  namespace snn = st::nn;

  nb::class_<snn::RNNBase, Module>(nn, "RNNBase", "Shared base of RNN, LSTM and GRU.")
      .def_prop_ro("input_size", &snn::RNNBase::input_size, "The size of each input step's features.")
      .def_prop_ro("hidden_size", &snn::RNNBase::hidden_size, "The size of the hidden state.")
      .def_prop_ro("num_layers", &snn::RNNBase::num_layers, "The number of stacked layers.")
      .def_prop_ro("bias", &snn::RNNBase::has_bias, "Whether the layers have bias_ih/bias_hh parameters.")
      .def_prop_ro("batch_first", &snn::RNNBase::batch_first,
                   "True: input and output are (batch, seq, feature); False: (seq, batch, feature).")
      .def_prop_ro("dropout", &snn::RNNBase::dropout,
                   "The dropout probability on each layer's output except the last (in training).")
      .def_prop_ro("bidirectional", &snn::RNNBase::bidirectional,
                   "Whether each layer also runs over the reversed sequence (output features 2 * hidden_size, "
                   "states (num_layers * 2, batch, hidden_size)).")
      .def("__repr__", &rnn_repr);

  using LstmState = nb::typed<nb::handle, std::variant<Tensor, std::tuple<Tensor, Tensor>>>;
  using LstmResult =
      nb::typed<nb::object, std::tuple<std::variant<Tensor, stub::PackedSequence>, std::tuple<Tensor, Tensor>>>;
  auto lstm_forward = [](snn::LSTM& self, SeqInput input_obj, LstmState h0) -> LstmResult {
    std::optional<Tensor> h, c;
    if (!h0.is_none()) {
      if (nb::isinstance<Tensor>(h0)) {
        h = nb::cast<Tensor>(h0);
      } else {
        nb::sequence seq = nb::borrow<nb::sequence>(h0);
        if (nb::len(seq) != 2) throw nb::value_error("LSTM: h0 must be a tuple (h_0, c_0), a Tensor h_0, or None");
        h = opt_tensor(seq[0], "LSTM: h_0");
        c = opt_tensor(seq[1], "LSTM: c_0");
      }
    }
    if (is_packed(input_obj) && self.bidirectional()) {
      auto [out, hn, cn] = run_packed_per_sequence(input_obj, self, h, c, true,
                                                   [&](const Tensor& x, const Tensor& hp, const Tensor& cp) {
        auto [y, state] = self.forward_full(x, hp, cp);
        return std::make_tuple(y, state.first, state.second);
      });
      return LstmResult(nb::make_tuple(out, nb::make_tuple(hn, cn)));
    }
    if (is_packed(input_obj)) {
      const int64_t H = self.output_size();
      auto [out, hn, cn] =
          run_packed(input_obj, self, h, c, true, [&](const Tensor& x, const Tensor& hp, const Tensor& cp) {
        auto [y, state] = self.forward_full(x, hp, cp);
        return std::make_tuple(st::reshape(y, {-1, H}), state.first, state.second);
      });
      return LstmResult(nb::make_tuple(out, nb::make_tuple(hn, cn)));
    }
    auto [out, hc] = self.forward_full(nb::cast<Tensor>(input_obj), h, c);
    return LstmResult(nb::make_tuple(out, nb::make_tuple(hc.first, hc.second)));
  };
  nb::class_<snn::LSTM, snn::RNNBase>(
      nn, "LSTM",
      "Multi-layer LSTM with PyTorch's parameters (weight_ih_l{k}, weight_hh_l{k}, bias_ih_l{k}, bias_hh_l{k}; "
      "gate order i, f, g, o; bidirectional adds weight_ih_l{k}_reverse, ...).\n\nbatch_first defaults to False as in "
      "PyTorch (input (seq, batch, feature)); pass "
      "batch_first=True for (batch, seq, feature); input may also be a nn.utils.rnn.PackedSequence (output then "
      "packed too). forward(input, h0=None) returns "
      "(output, (h_n, c_n)); h0 is a tuple (h_0, c_0) of (num_layers * num_directions, batch, hidden) tensors, or "
      "just h_0, or None.")
      .def(nb::init<int64_t, int64_t, int64_t, bool, bool, double, bool, int64_t, std::string>(), nb::arg("input_size"),
           nb::arg("hidden_size"), nb::arg("num_layers") = 1, nb::arg("bias") = true, nb::arg("batch_first") = false,
           nb::arg("dropout") = 0.0, nb::arg("bidirectional") = false, nb::arg("proj_size") = 0, nb::arg("name") = "",
           "Weights U(-1/sqrt(hidden_size), 1/sqrt(hidden_size)) like PyTorch; dropout applies between layers "
           "in training; proj_size > 0 projects h to proj_size features (weight_hr_l{k}). e.g. out, (h, c) = "
           "nn.LSTM(8, 16, batch_first=True)(st.randn(2, 5, 8))")
      .def_prop_ro("proj_size", &snn::LSTM::proj_size, "Features of h with a projection (0: none, h has hidden_size).")
      .def("forward", lstm_forward, nb::arg("input"), nb::arg("h0").none() = nb::none(),
           "Runs the sequence: input (seq, batch, input_size) (batch_first: (batch, seq, input_size)), unbatched "
           "(seq, input_size), or a PackedSequence. Returns (output, (h_n, c_n)): output (..., hidden_size) from "
           "the last layer at every step (2 * hidden_size with bidirectional: forward, then backward), h_n and c_n "
           "(num_layers * num_directions, batch, hidden_size). h0: (h_0, c_0), h_0 alone or None (zeros).")
      .def("__call__", lstm_forward, nb::arg("input"), nb::arg("h0").none() = nb::none(), "forward(input, h0).");

  nb::class_<snn::GRU, snn::RNNBase>(
      nn, "GRU",
      "Multi-layer GRU with PyTorch's parameters (gate order r, z, n).\n\nbatch_first defaults to False as in "
      "PyTorch (input (seq, batch, feature)), or a nn.utils.rnn.PackedSequence. forward(input, h0=None) returns "
      "(output, h_n).")
      .def(nb::init<int64_t, int64_t, int64_t, bool, bool, double, bool, std::string>(), nb::arg("input_size"),
           nb::arg("hidden_size"), nb::arg("num_layers") = 1, nb::arg("bias") = true, nb::arg("batch_first") = false,
           nb::arg("dropout") = 0.0, nb::arg("bidirectional") = false, nb::arg("name") = "",
           "Weights U(-1/sqrt(hidden_size), 1/sqrt(hidden_size)) like PyTorch; dropout applies between layers "
           "in training.")
      .def("forward", &single_state_forward<snn::GRU>, nb::arg("input"), nb::arg("h0").none() = nb::none(),
           kSingleStateForwardDoc)
      .def("__call__", &single_state_forward<snn::GRU>, nb::arg("input"), nb::arg("h0").none() = nb::none(),
           "forward(input, h0).");

  nb::class_<snn::RNN, snn::RNNBase>(
      nn, "RNN",
      "Multi-layer Elman RNN with PyTorch's parameters: h' = tanh(W_ih x + b_ih + W_hh h + b_hh) (nonlinearity "
      "'relu' for ReLU).\n\nbatch_first defaults to False as in PyTorch (input (seq, batch, feature)), or a "
      "nn.utils.rnn.PackedSequence. forward(input, h0=None) returns (output, h_n).")
      .def(nb::init<int64_t, int64_t, int64_t, std::string, bool, bool, double, bool, std::string>(),
           nb::arg("input_size"), nb::arg("hidden_size"), nb::arg("num_layers") = 1, nb::arg("nonlinearity") = "tanh",
           nb::arg("bias") = true, nb::arg("batch_first") = false, nb::arg("dropout") = 0.0,
           nb::arg("bidirectional") = false, nb::arg("name") = "",
           "Weights U(-1/sqrt(hidden_size), 1/sqrt(hidden_size)) like PyTorch; dropout applies between layers "
           "in training. e.g. out, h = nn.RNN(8, 16, batch_first=True)(st.randn(2, 5, 8))")
      .def_prop_ro("nonlinearity", &snn::RNN::nonlinearity, "'tanh' or 'relu'.")
      .def("forward", &single_state_forward<snn::RNN>, nb::arg("input"), nb::arg("h0").none() = nb::none(),
           kSingleStateForwardDoc)
      .def("__call__", &single_state_forward<snn::RNN>, nb::arg("input"), nb::arg("h0").none() = nb::none(),
           "forward(input, h0).");

  auto mha_forward = [](snn::MultiheadAttention& self, const Tensor& query, std::optional<Tensor> key,
                        std::optional<Tensor> value, std::optional<Tensor> attn_mask,
                        std::optional<Tensor> key_padding_mask, bool need_weights, bool is_causal,
                        bool average_attn_weights) {
    const Tensor k = key ? *key : query;
    const Tensor v = value ? *value : k;
    auto [out, w] =
        self.forward_full(query, k, v, attn_mask, key_padding_mask, need_weights, is_causal, average_attn_weights);
    return std::make_pair(out, opt(w));
  };
  nb::class_<snn::MultiheadAttention, Module>(
      nn, "MultiheadAttention",
      "Multi-head attention with torch.nn.MultiheadAttention's parameters (in_proj_weight, in_proj_bias, "
      "out_proj.weight, out_proj.bias) and masks (bool True = blocked, or float added).\n\nbatch_first "
      "defaults to False as in PyTorch. forward(query, key, value, attn_mask=None, key_padding_mask=None, "
      "need_weights=True, "
      "is_causal=False, average_attn_weights=True) returns (output, weights or None); key/value default to query. "
      "is_causal without attn_mask applies the causal mask.")
      .def(nb::init<int64_t, int64_t, double, bool, bool, std::string>(), nb::arg("embed_dim"), nb::arg("num_heads"),
           nb::arg("dropout") = 0.0, nb::arg("bias") = true, nb::arg("batch_first") = false, nb::arg("name") = "",
           "embed_dim must be divisible by num_heads (else ValueError); dropout applies to the attention weights "
           "in training. e.g. out, w = nn.MultiheadAttention(16, 4, batch_first=True)(q, q, q)")
      .def("forward", mha_forward, nb::arg("query"), nb::arg("key").none() = nb::none(),
           nb::arg("value").none() = nb::none(), nb::arg("attn_mask").none() = nb::none(),
           nb::arg("key_padding_mask").none() = nb::none(), nb::arg("need_weights") = true,
           nb::arg("is_causal") = false, nb::arg("average_attn_weights") = true,
           "Attention of query (L, N, E) over key (S, N, E) and value (S, N, E) (batch_first: batch first; "
           "unbatched (L, E) too); key and value default to query. attn_mask (L, S) or (N*heads, L, S): bool "
           "True = blocked, or float added; key_padding_mask (N, S) blocks padded keys. Returns (output like "
           "query, weights (N, L, S) averaged over heads, or per head (N, heads, L, S) without "
           "average_attn_weights, or None without need_weights).")
      .def("__call__", mha_forward, nb::arg("query"), nb::arg("key").none() = nb::none(),
           nb::arg("value").none() = nb::none(), nb::arg("attn_mask").none() = nb::none(),
           nb::arg("key_padding_mask").none() = nb::none(), nb::arg("need_weights") = true,
           nb::arg("is_causal") = false, nb::arg("average_attn_weights") = true, "forward(query, key, value, ...).")
      .def_prop_ro("embed_dim", &snn::MultiheadAttention::embed_dim, "The model dim E of query and output.")
      .def_prop_ro("num_heads", &snn::MultiheadAttention::num_heads, "The number of attention heads.")
      .def_prop_ro("head_dim", &snn::MultiheadAttention::head_dim, "embed_dim // num_heads.")
      .def_prop_ro("dropout", &snn::MultiheadAttention::dropout, "The dropout probability on attention weights.")
      .def_prop_ro("batch_first", &snn::MultiheadAttention::batch_first, "Whether inputs are (batch, seq, embed).")
      .def_prop_ro("in_proj_weight", &snn::MultiheadAttention::in_proj_weight,
                   "The (3 * embed_dim, embed_dim) stacked query/key/value projection.")
      .def_prop_ro("in_proj_bias", [](snn::MultiheadAttention& m) { return opt(m.in_proj_bias()); },
                   "The (3 * embed_dim,) projection bias, or None (bias=False).")
      .def_prop_ro("out_proj", &snn::MultiheadAttention::out_proj, "The output projection (a Linear).")
      .def("__repr__", [](const snn::MultiheadAttention& m) {
    return "MultiheadAttention(" + std::to_string(m.embed_dim()) + ", " + std::to_string(m.num_heads()) +
           (m.dropout() != 0.0 ? ", dropout=" + fmt_double(m.dropout()) : std::string()) +
           (m.batch_first() ? std::string() : std::string(", batch_first=False")) + name_suffix(m) + ")";
  });

  auto tel_forward = [](snn::TransformerEncoderLayer& self, const Tensor& src, std::optional<Tensor> src_mask,
                        std::optional<Tensor> src_key_padding_mask,
                        bool is_causal) { return self.forward_full(src, src_mask, is_causal, src_key_padding_mask); };
  nb::class_<snn::TransformerEncoderLayer, Module>(
      nn, "TransformerEncoderLayer",
      "torch.nn.TransformerEncoderLayer with the same children (self_attn, linear1, dropout, linear2, norm1, norm2, "
      "dropout1, dropout2) and parameter names.\n\nbatch_first defaults to False as in PyTorch. forward(src, "
      "src_mask=None, src_key_padding_mask=None, is_causal=False) (PyTorch's argument order); is_causal without "
      "src_mask applies the causal mask.")
      .def(
          "__init__", layer_init<snn::TransformerEncoderLayer>("TransformerEncoderLayer"), nb::arg("d_model"),
          nb::arg("nhead"), nb::arg("dim_feedforward") = 2048, nb::arg("dropout") = 0.1, nb::arg("activation") = "relu",
          nb::arg("batch_first") = false, nb::arg("norm_first") = false, nb::arg("layer_norm_eps") = 1e-5,
          nb::arg("name") = "",
          "Self-attention (nhead heads over d_model) and a feed-forward block d_model -> dim_feedforward -> "
          "d_model, each with dropout, a residual and a LayerNorm (after, or before with norm_first); activation "
          "'relu', 'gelu' or 'gelu_tanh' (GELU's tanh approximation), or PyTorch's callable forms of these: nn.ReLU(), "
          "nn.GELU(approximate=...), F.relu, F.gelu, functools.partial(F.gelu, approximate='tanh').")
      .def("forward", tel_forward, nb::arg("src"), nb::arg("src_mask").none() = nb::none(),
           nb::arg("src_key_padding_mask").none() = nb::none(), nb::arg("is_causal") = false,
           "Encodes src (seq, batch, d_model) (batch_first: batch first; unbatched (seq, d_model) too); src_mask "
           "(seq, seq): bool True = blocked or float added; src_key_padding_mask (batch, seq) blocks padded "
           "positions. Returns a tensor shaped like src.")
      .def("__call__", tel_forward, nb::arg("src"), nb::arg("src_mask").none() = nb::none(),
           nb::arg("src_key_padding_mask").none() = nb::none(), nb::arg("is_causal") = false,
           "forward(src, src_mask, src_key_padding_mask, is_causal).")
      .def_prop_ro("self_attn", &snn::TransformerEncoderLayer::self_attn,
                   "The self-attention block (a MultiheadAttention).")
      .def_prop_ro("linear1", &snn::TransformerEncoderLayer::linear1,
                   "The feed-forward input projection d_model -> dim_feedforward.")
      .def_prop_ro("linear2", &snn::TransformerEncoderLayer::linear2,
                   "The feed-forward output projection dim_feedforward -> d_model.")
      .def_prop_ro("norm1", &snn::TransformerEncoderLayer::norm1, "The LayerNorm of the self-attention block.")
      .def_prop_ro("norm2", &snn::TransformerEncoderLayer::norm2, "The LayerNorm of the feed-forward block.")
      .def_prop_ro("dropout", &snn::TransformerEncoderLayer::dropout, "The dropout inside the feed-forward block.")
      .def_prop_ro("dropout1", &snn::TransformerEncoderLayer::dropout1, "The dropout after self-attention.")
      .def_prop_ro("dropout2", &snn::TransformerEncoderLayer::dropout2, "The dropout after the feed-forward block.")
      .def_prop_ro("norm_first", &snn::TransformerEncoderLayer::norm_first,
                   "Whether each block normalises its input (pre-norm) instead of its output.")
      .def_prop_ro("activation", &snn::TransformerEncoderLayer::activation,
                   "The feed-forward activation, 'relu', 'gelu' or 'gelu_tanh'.")
      .def("__repr__",
           [](const snn::TransformerEncoderLayer& m) {
    return "TransformerEncoderLayer(self_attn=" + std::to_string(m.self_attn()->embed_dim()) + "x" +
           std::to_string(m.self_attn()->num_heads()) +
           ", dim_feedforward=" + std::to_string(m.linear1()->out_features()) + ", activation='" + m.activation() +
           "'" + (m.norm_first() ? ", norm_first=True" : "") + name_suffix(m) + ")";
  })
      .def("clone", &snn::TransformerEncoderLayer::clone,
           "A new layer with this one's configuration, copies of its current values (same device and dtype), its "
           "requires_grad flags and its train/eval mode.");

  auto te_forward = [](snn::TransformerEncoder& self, const Tensor& src, std::optional<Tensor> mask,
                       std::optional<Tensor> src_key_padding_mask, std::optional<bool> is_causal) {
    return self.forward_full(src, mask, is_causal.value_or(false), src_key_padding_mask);
  };
  nb::class_<snn::TransformerEncoder, Module>(
      nn, "TransformerEncoder",
      "torch.nn.TransformerEncoder: num_layers independent copies of encoder_layer (its configuration and current "
      "values, as PyTorch's deep copies), applied in order, then norm if given. Children: layers (indexable) and "
      "norm; keys 'layers.0.self_attn::in_proj_weight', 'norm::weight'.\n\nforward(src, mask=None, "
      "src_key_padding_mask=None, is_causal=None) returns the encoded src (same shape); the masks go to every layer.")
      .def("__init__",
           [](snn::TransformerEncoder* self, const snn::TransformerEncoderLayer& layer, int64_t num_layers,
              std::shared_ptr<Module> norm, bool, bool, std::string name) {
    new (self) snn::TransformerEncoder(layer, num_layers, std::move(norm), std::move(name));
  },
           nb::arg("encoder_layer"), nb::arg("num_layers"), nb::arg("norm").none() = nb::none(),
           nb::arg("enable_nested_tensor") = true, nb::arg("mask_check") = true, nb::arg("name") = "",
           "num_layers copies of encoder_layer, then norm (a module, or None); enable_nested_tensor and mask_check "
           "are accepted for PyTorch compatibility and ignored.")
      .def("forward", te_forward, nb::arg("src"), nb::arg("mask").none() = nb::none(),
           nb::arg("src_key_padding_mask").none() = nb::none(), nb::arg("is_causal").none() = nb::none(),
           "Runs src (shaped as the layers expect) through every layer with the same masks, then norm; returns a "
           "tensor shaped like src. is_causal=True without mask applies the causal mask.")
      .def("__call__", te_forward, nb::arg("src"), nb::arg("mask").none() = nb::none(),
           nb::arg("src_key_padding_mask").none() = nb::none(), nb::arg("is_causal").none() = nb::none(),
           "forward(src, mask, src_key_padding_mask, is_causal).")
      .def_prop_ro("num_layers", &snn::TransformerEncoder::num_layers, "The number of stacked layers.")
      .def_prop_ro("norm", &snn::TransformerEncoder::norm, "The final normalisation module, or None.")
      .def_prop_ro("layers",
                   [](const snn::TransformerEncoder& m) {
    std::vector<std::shared_ptr<snn::TransformerEncoderLayer>> out;
    for (int64_t i = 0; i < m.num_layers(); ++i) out.push_back(m.layer(i));
    return out;
  }, "The layers, in order (a list).")
      .def("__repr__", [](const snn::TransformerEncoder& m) {
    return "TransformerEncoder(num_layers=" + std::to_string(m.num_layers()) +
           (m.norm() ? ", norm=" + m.norm()->type_name() : std::string()) + name_suffix(m) + ")";
  });

  auto tdl_forward = [](snn::TransformerDecoderLayer& self, const Tensor& tgt, const Tensor& memory,
                        std::optional<Tensor> tgt_mask, std::optional<Tensor> memory_mask,
                        std::optional<Tensor> tgt_key_padding_mask, std::optional<Tensor> memory_key_padding_mask,
                        bool tgt_is_causal, bool memory_is_causal) {
    return self.forward_full(tgt, memory, tgt_mask, memory_mask, tgt_key_padding_mask, memory_key_padding_mask,
                             tgt_is_causal, memory_is_causal);
  };
  nb::class_<snn::TransformerDecoderLayer, Module>(
      nn, "TransformerDecoderLayer",
      "torch.nn.TransformerDecoderLayer with the same children (self_attn, multihead_attn, linear1, dropout, linear2, "
      "norm1, norm2, norm3, dropout1, dropout2, dropout3) and parameter names.\n\nbatch_first defaults to False as "
      "in PyTorch. forward(tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None, "
      "memory_key_padding_mask=None, tgt_is_causal=False, memory_is_causal=False) returns the decoded tgt.")
      .def("__init__", layer_init<snn::TransformerDecoderLayer>("TransformerDecoderLayer"), nb::arg("d_model"),
           nb::arg("nhead"), nb::arg("dim_feedforward") = 2048, nb::arg("dropout") = 0.1,
           nb::arg("activation") = "relu", nb::arg("batch_first") = false, nb::arg("norm_first") = false,
           nb::arg("layer_norm_eps") = 1e-5, nb::arg("name") = "",
           "Self-attention, cross-attention over the encoder's memory and a feed-forward block d_model -> "
           "dim_feedforward -> d_model, each with dropout, a residual and a LayerNorm (after, or before with "
           "norm_first); activation 'relu', 'gelu' or 'gelu_tanh', or nn.ReLU(), nn.GELU(approximate=...), F.relu, "
           "F.gelu, functools.partial(F.gelu, approximate='tanh').")
      .def("forward", tdl_forward, nb::arg("tgt"), nb::arg("memory"), nb::arg("tgt_mask").none() = nb::none(),
           nb::arg("memory_mask").none() = nb::none(), nb::arg("tgt_key_padding_mask").none() = nb::none(),
           nb::arg("memory_key_padding_mask").none() = nb::none(), nb::arg("tgt_is_causal") = false,
           nb::arg("memory_is_causal") = false,
           "Decodes tgt (T, batch, d_model) against memory (S, batch, d_model) (batch_first: batch first); tgt_mask "
           "(T, T) / memory_mask (T, S): bool True = blocked or float added; the key padding masks (batch, T) / "
           "(batch, S) block padded positions; *_is_causal apply the causal mask when the mask is None. Returns a "
           "tensor shaped like tgt.")
      .def("__call__", tdl_forward, nb::arg("tgt"), nb::arg("memory"), nb::arg("tgt_mask").none() = nb::none(),
           nb::arg("memory_mask").none() = nb::none(), nb::arg("tgt_key_padding_mask").none() = nb::none(),
           nb::arg("memory_key_padding_mask").none() = nb::none(), nb::arg("tgt_is_causal") = false,
           nb::arg("memory_is_causal") = false, "forward(tgt, memory, ...).")
      .def_prop_ro("self_attn", &snn::TransformerDecoderLayer::self_attn,
                   "The self-attention block (a MultiheadAttention).")
      .def_prop_ro("multihead_attn", &snn::TransformerDecoderLayer::multihead_attn,
                   "The cross-attention block over memory (a MultiheadAttention).")
      .def_prop_ro("linear1", &snn::TransformerDecoderLayer::linear1,
                   "The feed-forward input projection d_model -> dim_feedforward.")
      .def_prop_ro("linear2", &snn::TransformerDecoderLayer::linear2,
                   "The feed-forward output projection dim_feedforward -> d_model.")
      .def_prop_ro("norm1", &snn::TransformerDecoderLayer::norm1, "The LayerNorm of the self-attention block.")
      .def_prop_ro("norm2", &snn::TransformerDecoderLayer::norm2, "The LayerNorm of the cross-attention block.")
      .def_prop_ro("norm3", &snn::TransformerDecoderLayer::norm3, "The LayerNorm of the feed-forward block.")
      .def_prop_ro("dropout", &snn::TransformerDecoderLayer::dropout, "The dropout inside the feed-forward block.")
      .def_prop_ro("dropout1", &snn::TransformerDecoderLayer::dropout1, "The dropout after self-attention.")
      .def_prop_ro("dropout2", &snn::TransformerDecoderLayer::dropout2, "The dropout after cross-attention.")
      .def_prop_ro("dropout3", &snn::TransformerDecoderLayer::dropout3, "The dropout after the feed-forward block.")
      .def_prop_ro("norm_first", &snn::TransformerDecoderLayer::norm_first,
                   "Whether each block normalises its input (pre-norm) instead of its output.")
      .def_prop_ro("activation", &snn::TransformerDecoderLayer::activation,
                   "The feed-forward activation, 'relu', 'gelu' or 'gelu_tanh'.")
      .def("__repr__",
           [](const snn::TransformerDecoderLayer& m) {
    return "TransformerDecoderLayer(self_attn=" + std::to_string(m.self_attn()->embed_dim()) + "x" +
           std::to_string(m.self_attn()->num_heads()) +
           ", dim_feedforward=" + std::to_string(m.linear1()->out_features()) + ", activation='" + m.activation() +
           "'" + (m.norm_first() ? ", norm_first=True" : "") + name_suffix(m) + ")";
  })
      .def("clone", &snn::TransformerDecoderLayer::clone,
           "A new layer with this one's configuration, copies of its current values (same device and dtype), its "
           "requires_grad flags and its train/eval mode.");

  auto td_forward = [](snn::TransformerDecoder& self, const Tensor& tgt, const Tensor& memory,
                       std::optional<Tensor> tgt_mask, std::optional<Tensor> memory_mask,
                       std::optional<Tensor> tgt_key_padding_mask, std::optional<Tensor> memory_key_padding_mask,
                       std::optional<bool> tgt_is_causal, bool memory_is_causal) {
    return self.forward_full(tgt, memory, tgt_mask, memory_mask, tgt_key_padding_mask, memory_key_padding_mask,
                             tgt_is_causal.value_or(false), memory_is_causal);
  };
  nb::class_<snn::TransformerDecoder, Module>(
      nn, "TransformerDecoder",
      "torch.nn.TransformerDecoder: num_layers independent copies of decoder_layer, applied in order, then norm if "
      "given. Children: layers (indexable) and norm.\n\nforward(tgt, memory, tgt_mask=None, memory_mask=None, "
      "tgt_key_padding_mask=None, memory_key_padding_mask=None, tgt_is_causal=None, memory_is_causal=False).")
      .def("__init__",
           [](snn::TransformerDecoder* self, const snn::TransformerDecoderLayer& layer, int64_t num_layers,
              std::shared_ptr<Module> norm, std::string name) {
    new (self) snn::TransformerDecoder(layer, num_layers, std::move(norm), std::move(name));
  },
           nb::arg("decoder_layer"), nb::arg("num_layers"), nb::arg("norm").none() = nb::none(), nb::arg("name") = "",
           "num_layers copies of decoder_layer (its configuration and current values), then norm (a module, or "
           "None).")
      .def("forward", td_forward, nb::arg("tgt"), nb::arg("memory"), nb::arg("tgt_mask").none() = nb::none(),
           nb::arg("memory_mask").none() = nb::none(), nb::arg("tgt_key_padding_mask").none() = nb::none(),
           nb::arg("memory_key_padding_mask").none() = nb::none(), nb::arg("tgt_is_causal").none() = nb::none(),
           nb::arg("memory_is_causal") = false,
           "Runs tgt through every layer against memory with the same masks, then norm; returns a tensor shaped "
           "like tgt.")
      .def("__call__", td_forward, nb::arg("tgt"), nb::arg("memory"), nb::arg("tgt_mask").none() = nb::none(),
           nb::arg("memory_mask").none() = nb::none(), nb::arg("tgt_key_padding_mask").none() = nb::none(),
           nb::arg("memory_key_padding_mask").none() = nb::none(), nb::arg("tgt_is_causal").none() = nb::none(),
           nb::arg("memory_is_causal") = false, "forward(tgt, memory, ...).")
      .def_prop_ro("num_layers", &snn::TransformerDecoder::num_layers, "The number of stacked layers.")
      .def_prop_ro("norm", &snn::TransformerDecoder::norm, "The final normalisation module, or None.")
      .def_prop_ro("layers",
                   [](const snn::TransformerDecoder& m) {
    std::vector<std::shared_ptr<snn::TransformerDecoderLayer>> out;
    for (int64_t i = 0; i < m.num_layers(); ++i) out.push_back(m.layer(i));
    return out;
  }, "The layers, in order (a list).")
      .def("__repr__", [](const snn::TransformerDecoder& m) {
    return "TransformerDecoder(num_layers=" + std::to_string(m.num_layers()) +
           (m.norm() ? ", norm=" + m.norm()->type_name() : std::string()) + name_suffix(m) + ")";
  });

  auto tr_forward = [](snn::Transformer& self, const Tensor& src, const Tensor& tgt, std::optional<Tensor> src_mask,
                       std::optional<Tensor> tgt_mask, std::optional<Tensor> memory_mask,
                       std::optional<Tensor> src_key_padding_mask, std::optional<Tensor> tgt_key_padding_mask,
                       std::optional<Tensor> memory_key_padding_mask, std::optional<bool> src_is_causal,
                       std::optional<bool> tgt_is_causal, bool memory_is_causal) {
    // A subclass may have replaced (or deleted) the children; the native forward needs its own.
    for (const auto& [slot, own] : {std::pair<std::string, const Module*>{"encoder", self.encoder().get()},
                                    std::pair<std::string, const Module*>{"decoder", self.decoder().get()}}) {
      const Module* current = nullptr;
      for (const auto& [s, c] : self.children()) {
        if (s == slot) current = c.get();
      }
      if (current != own) {
        throw st::ValueError("Transformer.forward: the child '" + slot + "' was replaced (by " +
                             (current ? current->type_name() : std::string("None")) +
                             "); call the children yourself in the subclass's forward");
      }
    }
    return self.forward_full(src, tgt, src_mask, tgt_mask, memory_mask, src_key_padding_mask, tgt_key_padding_mask,
                             memory_key_padding_mask, src_is_causal.value_or(false), tgt_is_causal.value_or(false),
                             memory_is_causal);
  };
  nb::class_<snn::Transformer, Module>(
      nn, "Transformer",
      "torch.nn.Transformer: a TransformerEncoder and a TransformerDecoder (each closed by a LayerNorm), matrices "
      "Xavier-uniform like PyTorch's reset. Children encoder and decoder, PyTorch's keys (a subclass may replace them, "
      "as PyTorch's "
      "word_language_model replaces decoder with a Linear; forward then refuses to run).\n\nbatch_first "
      "defaults to False as in PyTorch. forward(src, tgt, src_mask=None, tgt_mask=None, memory_mask=None, "
      "src_key_padding_mask=None, tgt_key_padding_mask=None, memory_key_padding_mask=None, src_is_causal=None, "
      "tgt_is_causal=None, memory_is_causal=False) returns the decoded tgt.")
      .def("__init__",
           [](snn::Transformer* self, int64_t d_model, int64_t nhead, int64_t num_encoder_layers,
              int64_t num_decoder_layers, int64_t dim_feedforward, double dropout, const Activation& activation,
              nb::typed<nb::handle, Module> custom_encoder, nb::typed<nb::handle, Module> custom_decoder,
              double layer_norm_eps, bool batch_first, bool norm_first, bool bias, std::string name) {
    if (!custom_encoder.is_none() || !custom_decoder.is_none()) {
      throw st::ValueError("Transformer: custom_encoder/custom_decoder are not supported");
    }
    if (!bias) throw st::ValueError("Transformer: bias=False is not supported");
    new (self) snn::Transformer(d_model, nhead, num_encoder_layers, num_decoder_layers, dim_feedforward, dropout,
                                activation_name(activation, "Transformer"), layer_norm_eps, batch_first, norm_first,
                                std::move(name));
  },
           nb::arg("d_model") = 512, nb::arg("nhead") = 8, nb::arg("num_encoder_layers") = 6,
           nb::arg("num_decoder_layers") = 6, nb::arg("dim_feedforward") = 2048, nb::arg("dropout") = 0.1,
           nb::arg("activation") = "relu", nb::arg("custom_encoder").none() = nb::none(),
           nb::arg("custom_decoder").none() = nb::none(), nb::arg("layer_norm_eps") = 1e-5,
           nb::arg("batch_first") = false, nb::arg("norm_first") = false, nb::arg("bias") = true, nb::arg("name") = "",
           "An encoder of num_encoder_layers and a decoder of num_decoder_layers layers (d_model, nhead, "
           "dim_feedforward, dropout, activation, layer_norm_eps, norm_first as in the layers). "
           "custom_encoder/custom_decoder and bias=False raise ValueError (not supported). e.g. "
           "nn.Transformer(d_model=32, nhead=4, num_encoder_layers=2, num_decoder_layers=2)")
      .def("forward", tr_forward, nb::arg("src"), nb::arg("tgt"), nb::arg("src_mask").none() = nb::none(),
           nb::arg("tgt_mask").none() = nb::none(), nb::arg("memory_mask").none() = nb::none(),
           nb::arg("src_key_padding_mask").none() = nb::none(), nb::arg("tgt_key_padding_mask").none() = nb::none(),
           nb::arg("memory_key_padding_mask").none() = nb::none(), nb::arg("src_is_causal").none() = nb::none(),
           nb::arg("tgt_is_causal").none() = nb::none(), nb::arg("memory_is_causal") = false,
           "Encodes src (S, N, d_model) and decodes tgt (T, N, d_model) against it (batch_first: batch first); "
           "masks as in TransformerEncoder/TransformerDecoder. Returns (T, N, d_model). ValueError when a subclass "
           "replaced encoder or decoder.")
      .def("__call__", tr_forward, nb::arg("src"), nb::arg("tgt"), nb::arg("src_mask").none() = nb::none(),
           nb::arg("tgt_mask").none() = nb::none(), nb::arg("memory_mask").none() = nb::none(),
           nb::arg("src_key_padding_mask").none() = nb::none(), nb::arg("tgt_key_padding_mask").none() = nb::none(),
           nb::arg("memory_key_padding_mask").none() = nb::none(), nb::arg("src_is_causal").none() = nb::none(),
           nb::arg("tgt_is_causal").none() = nb::none(), nb::arg("memory_is_causal") = false, "forward(src, tgt, ...).")
      .def_prop_ro("encoder",
                   [](const snn::Transformer& m) {
    return nb::typed<nb::object, std::optional<Module>>(registered_child(m, "encoder"));
  }, "The child 'encoder' (a TransformerEncoder unless a subclass replaced it).")
      .def_prop_ro("decoder",
                   [](const snn::Transformer& m) {
    return nb::typed<nb::object, std::optional<Module>>(registered_child(m, "decoder"));
  }, "The child 'decoder' (a TransformerDecoder unless a subclass replaced it).")
      .def_prop_ro("d_model", &snn::Transformer::d_model, "The model dim.")
      .def_prop_ro("nhead", &snn::Transformer::nhead, "The number of attention heads.")
      .def_prop_ro("batch_first", &snn::Transformer::batch_first, "Whether inputs are (batch, seq, d_model).")
      .def_static("generate_square_subsequent_mask",
                  [](int64_t sz) { return snn::causal_mask(sz, sz, Dtype::Float32, st::Device()); }, nb::arg("sz"),
                  "A float (sz, sz) causal mask: 0 on and below the diagonal, -inf above.")
      .def("__repr__", [](const snn::Transformer& m) {
    return "Transformer(d_model=" + std::to_string(m.d_model()) + ", nhead=" + std::to_string(m.nhead()) +
           ", num_encoder_layers=" + std::to_string(m.encoder()->num_layers()) +
           ", num_decoder_layers=" + std::to_string(m.decoder()->num_layers()) + name_suffix(m) + ")";
  });

  nn.def("scaled_dot_product_attention",
         [](const Tensor& q, const Tensor& k, const Tensor& v, std::optional<Tensor> attn_mask, double dropout_p,
            bool is_causal, std::optional<double> scale) {
    return snn::scaled_dot_product_attention(q, k, v, attn_mask, dropout_p, is_causal, scale);
  },
         nb::arg("query"), nb::arg("key"), nb::arg("value"), nb::arg("attn_mask").none() = nb::none(),
         nb::arg("dropout_p") = 0.0, nb::arg("is_causal") = false, nb::arg("scale").none() = nb::none(),
         "softmax(q k^T * scale + mask) v like torch.nn.functional.scaled_dot_product_attention: attn_mask is bool "
         "(True = may attend) or float (added); is_causal masks keys after each query; scale defaults to "
         "1/sqrt(head_dim).");
  nn.def("generate_square_subsequent_mask",
         [](int64_t sz, DtypeArg dtype, DeviceArg device) {
    const st::Device dev = device.is_none() ? st::Device() : st::Device::parse(nb::cast<std::string>(nb::str(device)));
    return snn::causal_mask(sz, sz, dtype.is_none() ? Dtype::Float32 : to_dtype(dtype), dev);
  }, nb::arg("sz"), nb::arg("dtype").none() = nb::none(), nb::arg("device").none() = nb::none(),
         "A float (sz, sz) causal mask: 0 on and below the diagonal, -inf above (like "
         "torch.nn.Transformer.generate_square_subsequent_mask).");
}

}  // namespace stpy
