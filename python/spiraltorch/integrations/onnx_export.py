"""ONNX export of SpiralTorch models, built with the ``onnx`` package's helper API.

``export_onnx(model, example_input, path)`` walks a ``Sequential`` chain (nested chains and
single layers too) and emits one ONNX subgraph per layer from the layer's weights:

============================  ==================================================================
SpiralTorch layer             ONNX
============================  ==================================================================
Linear                        MatMul (W^T) + Add
LoraLinear                    MatMul with the merged weight W + (alpha/rank) B A, + Add
Conv1d / Conv2d               Conv (pads, strides, dilations, group)
BatchNorm1d / BatchNorm2d     BatchNormalization with the running statistics (eval mode)
LayerNorm                     LayerNormalization
ReLU, Sigmoid, Tanh           Relu, Sigmoid, Tanh
SiLU                          x * Sigmoid(x)
GELU (none / tanh)            0.5 x (1 + erf(x / sqrt 2)) or its tanh form
Softmax                       Softmax(axis)
MaxPool2d / AvgPool2d         MaxPool / AveragePool
AdaptiveAvgPool2d             GlobalAveragePool (1x1) or AveragePool (when sizes divide)
Flatten                       Reshape (leading dims kept, so the batch axis stays dynamic)
Embedding                     Gather on the weight (int64 indices)
Dropout, Identity             Identity (inference)
MultiheadAttention (self)     in-projection, per-head scaled dot-product Softmax, out-projection
TransformerEncoderLayer       the attention above plus LayerNorm and the feed-forward block
TransformerEncoder            its layers in order, then its norm
LSTM / GRU                    LSTM / GRU (gates reordered, one op per layer)
FeatureReorder2d              Transpose (NHWC <-> NCHW), Reshape around it for flat input
WaveGate                      sigmoid/tanh gates, then exp_0 and the clip into the Poincare ball
============================  ==================================================================

Layers outside this table, Python ``Module`` subclasses with their own ``forward`` and
settings with no ONNX equivalent raise ``UnsupportedLayerError`` naming the layer and its
path. The graph is always computed in inference (eval) mode. ``verify_onnx`` runs the file in
onnxruntime and returns the largest difference to SpiralTorch's own output.
"""

from __future__ import annotations

import math
import os
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np

from .. import _core
from .._atomic import atomic_write_bytes
from .architecture import UnsupportedLayerError, known_layer_kind, layer_kind

PathLike = Union[str, "os.PathLike[str]"]
DEFAULT_OPSET = 17


def _require_onnx() -> Any:
    try:
        import onnx  # type: ignore
    except ImportError as exc:  # pragma: no cover - exercised only without onnx
        raise ImportError("export_onnx needs the 'onnx' package: pip install onnx") from exc
    return onnx


def _np(t: Any) -> np.ndarray:
    return np.ascontiguousarray(t.detach().numpy()).copy()


def _pair(v: Any, n: int) -> List[int]:
    if isinstance(v, (tuple, list)):
        if len(v) == 1:
            return [int(v[0])] * n
        return [int(x) for x in v]
    return [int(v)] * n


class _Graph:
    """Collects nodes and initializers; every name it hands out is unique."""

    def __init__(self, onnx: Any) -> None:
        self.onnx = onnx
        self.h = onnx.helper
        self.nodes: List[Any] = []
        self.inits: List[Any] = []
        self.count = 0

    def name(self, hint: str) -> str:
        self.count += 1
        return f"{hint}_{self.count}"

    def const(self, hint: str, value: Any, dtype: Any = np.float32) -> str:
        name = self.name(hint)
        arr = np.asarray(value, dtype=dtype)
        self.inits.append(self.onnx.numpy_helper.from_array(arr, name))
        return name

    def op(self, op_type: str, inputs: Sequence[str], hint: str, n_out: int = 1, **attrs: Any) -> Any:
        outs = [self.name(hint) for _ in range(n_out)]
        self.nodes.append(self.h.make_node(op_type, list(inputs), outs, name=self.name(op_type), **attrs))
        return outs[0] if n_out == 1 else outs


class _Exporter:
    def __init__(self, onnx: Any, opset: int) -> None:
        self.g = _Graph(onnx)
        self.opset = opset

    # Each handler maps (module, input name, input shape, path) to an output name; shapes come
    # from running the SpiralTorch layer itself, so every intermediate shape is known.
    def emit(self, module: Any, x: str, shape: Tuple[int, ...], path: str) -> str:
        kind, where = known_layer_kind(
            "export_onnx: layer", module, path, "not mappable to ONNX", f"exportable layers: {', '.join(EXPORTABLE_LAYERS)}"
        )
        handler = getattr(self, f"_{kind}", None)
        if handler is None:
            raise UnsupportedLayerError(f"export_onnx: layer {kind} at {where} has no ONNX mapping; exportable layers: "
                                        f"{', '.join(EXPORTABLE_LAYERS)}")
        return handler(module, x, shape, where)

    def _Sequential(self, m: Any, x: str, shape: Tuple[int, ...], where: str) -> str:
        raise AssertionError("Sequential is flattened by export_onnx")

    def _linear(self, x: str, weight: np.ndarray, bias: Optional[np.ndarray], hint: str) -> str:
        y = self.g.op("MatMul", [x, self.g.const(f"{hint}_wT", weight.T)], hint)
        if bias is not None:
            y = self.g.op("Add", [y, self.g.const(f"{hint}_b", bias)], hint)
        return y

    def _Linear(self, m: Any, x: str, shape: Tuple[int, ...], where: str) -> str:
        return self._linear(x, _np(m.weight), None if m.bias is None else _np(m.bias), "linear")

    def _LoraLinear(self, m: Any, x: str, shape: Tuple[int, ...], where: str) -> str:
        weight = _np(m.weight).astype(np.float64)
        if not m.merged:  # eval mode: dropout is the identity, so the adapter folds into W
            weight += m.scaling * (_np(m.lora_b).astype(np.float64) @ _np(m.lora_a).astype(np.float64))
        return self._linear(x, weight.astype(np.float32), None if m.bias is None else _np(m.bias), "lora")

    def _FeatureReorder2d(self, m: Any, x: str, shape: Tuple[int, ...], where: str) -> str:
        if m.layout == "NCHW":
            return self.g.op("Identity", [x], "reorder")
        c, h, w = (int(d) for d in m.shape)
        to = m.direction == "to_canonical"
        y = x
        if len(shape) == 2:
            y = self.g.op("Reshape", [y, self.g.const("reorder_4d", [0, h, w, c] if to else [0, c, h, w], np.int64)],
                          "reorder")
        y = self.g.op("Transpose", [y], "reorder", perm=[0, 3, 1, 2] if to else [0, 2, 3, 1])
        if len(shape) == 2:
            y = self.g.op("Reshape", [y, self.g.const("reorder_flat", [0, c * h * w], np.int64)], "reorder")
        return y

    def _row_norm(self, x: str) -> str:
        # sqrt(sum x^2 over the last axis), floored at 1e-15 as geometry::row_norm does
        g = self.g
        sq = g.op("ReduceSum", [g.op("Mul", [x, x], "sq"), g.const("last_axis", [-1], np.int64)], "sq", keepdims=1)
        return g.op("Max", [g.op("Sqrt", [sq], "norm"), g.const("norm_floor", 1e-15)], "norm")

    def _WaveGate(self, m: Any, x: str, shape: Tuple[int, ...], where: str) -> str:
        g = self.g
        state = m.state_dict()
        gate = g.op("Sigmoid", [self._linear(x, _np(state["gate_weight"]), _np(state["gate_bias"]), "wave_gate")],
                    "wave_gate")
        value = g.op("Tanh", [self._linear(x, _np(state["value_weight"]), _np(state["value_bias"]), "wave_value")],
                     "wave_value")
        # x + g (v - x), then exp_0 (v tanh(sqrt k |v|) / (sqrt k |v|)) and clip_to_ball (eps 1e-5)
        mixed = g.op("Add", [x, g.op("Mul", [gate, g.op("Sub", [value, x], "wave")], "wave")], "wave_mixed")
        sk = math.sqrt(-float(m.curvature))
        scaled = g.op("Mul", [self._row_norm(mixed), g.const("sqrt_k", sk)], "wave_exp")
        ball = g.op("Mul", [mixed, g.op("Div", [g.op("Tanh", [scaled], "wave_exp"), scaled], "wave_exp")], "wave_exp")
        norm = self._row_norm(ball)
        clipped = g.op("Min", [norm, g.const("radius", (1.0 - 1e-5) / sk)], "wave_clip")
        return g.op("Mul", [ball, g.op("Div", [clipped, norm], "wave_clip")], "wave_clip")

    def _conv(self, m: Any, x: str, shape: Tuple[int, ...], where: str, n: int) -> str:
        k = _pair(m.kernel_size, n)
        dil = _pair(m.dilation, n)
        if isinstance(m.padding, str):
            if m.padding == "valid":
                pad = [0] * n
            else:  # "same" with stride 1: total padding d*(k-1), the extra element at the end like PyTorch
                total = [d * (kk - 1) for d, kk in zip(dil, k)]
                pad_begin = [t // 2 for t in total]
                pad = None
                pads = pad_begin + [t - b for t, b in zip(total, pad_begin)]
        else:
            pad = _pair(m.padding, n)
        if pad is not None:
            pads = pad + pad
        inputs = [x, self.g.const("conv_w", _np(m.weight))]
        if m.bias is not None:
            inputs.append(self.g.const("conv_b", _np(m.bias)))
        return self.g.op("Conv", inputs, "conv", kernel_shape=k, strides=_pair(m.stride, n), pads=pads,
                         dilations=dil, group=int(m.groups))

    def _Conv1d(self, m: Any, x: str, shape: Tuple[int, ...], where: str) -> str:
        return self._conv(m, x, shape, where, 1)

    def _Conv2d(self, m: Any, x: str, shape: Tuple[int, ...], where: str) -> str:
        return self._conv(m, x, shape, where, 2)

    def _batch_norm(self, m: Any, x: str, shape: Tuple[int, ...], where: str) -> str:
        if not m.track_running_stats or m.running_mean is None:
            raise UnsupportedLayerError(f"export_onnx: {type(m).__name__} at {where} has no running statistics "
                                        "(track_running_stats=False normalises by batch statistics, which ONNX inference does not)")
        c = m.num_features
        scale = _np(m.weight) if m.affine else np.ones(c, np.float32)
        bias = _np(m.bias) if m.affine else np.zeros(c, np.float32)
        return self.g.op("BatchNormalization", [x, self.g.const("bn_scale", scale), self.g.const("bn_bias", bias),
                                                self.g.const("bn_mean", _np(m.running_mean)),
                                                self.g.const("bn_var", _np(m.running_var))],
                         "bn", epsilon=float(m.eps))

    _BatchNorm1d = _batch_norm
    _BatchNorm2d = _batch_norm

    def _layer_norm(self, x: str, normalized: Sequence[int], eps: float, weight: Optional[np.ndarray],
                    bias: Optional[np.ndarray]) -> str:
        size = tuple(int(d) for d in normalized)
        scale = weight if weight is not None else np.ones(size, np.float32)
        b = bias if bias is not None else np.zeros(size, np.float32)
        return self.g.op("LayerNormalization", [x, self.g.const("ln_scale", scale), self.g.const("ln_bias", b)], "ln",
                         axis=-len(size), epsilon=float(eps))

    def _LayerNorm(self, m: Any, x: str, shape: Tuple[int, ...], where: str) -> str:
        w = _np(m.weight) if m.weight is not None else None
        b = _np(m.bias) if m.bias is not None else None
        return self._layer_norm(x, m.normalized_shape, m.eps, w, b)

    def _ReLU(self, m: Any, x: str, shape: Tuple[int, ...], where: str) -> str:
        return self.g.op("Relu", [x], "relu")

    def _Sigmoid(self, m: Any, x: str, shape: Tuple[int, ...], where: str) -> str:
        return self.g.op("Sigmoid", [x], "sigmoid")

    def _Tanh(self, m: Any, x: str, shape: Tuple[int, ...], where: str) -> str:
        return self.g.op("Tanh", [x], "tanh")

    def _SiLU(self, m: Any, x: str, shape: Tuple[int, ...], where: str) -> str:
        return self.g.op("Mul", [x, self.g.op("Sigmoid", [x], "silu_sig")], "silu")

    def _gelu(self, x: str, approximate: str) -> str:
        g = self.g
        if approximate == "tanh":
            # 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
            x3 = g.op("Mul", [g.op("Mul", [x, x], "gelu_x2"), x], "gelu_x3")
            inner = g.op("Add", [x, g.op("Mul", [x3, g.const("gelu_c", 0.044715)], "gelu")], "gelu")
            t = g.op("Tanh", [g.op("Mul", [inner, g.const("gelu_k", math.sqrt(2.0 / math.pi))], "gelu")], "gelu")
        else:
            t = g.op("Erf", [g.op("Mul", [x, g.const("gelu_rsqrt2", 1.0 / math.sqrt(2.0))], "gelu")], "gelu")
        one_plus = g.op("Add", [t, g.const("one", 1.0)], "gelu")
        return g.op("Mul", [g.op("Mul", [x, g.const("half", 0.5)], "gelu"), one_plus], "gelu")

    def _GELU(self, m: Any, x: str, shape: Tuple[int, ...], where: str) -> str:
        if m.approximate not in ("none", "tanh"):
            raise UnsupportedLayerError(f"export_onnx: GELU at {where} has approximate={m.approximate!r}")
        return self._gelu(x, m.approximate)

    def _Softmax(self, m: Any, x: str, shape: Tuple[int, ...], where: str) -> str:
        return self.g.op("Softmax", [x], "softmax", axis=int(m.dim))

    def _Identity(self, m: Any, x: str, shape: Tuple[int, ...], where: str) -> str:
        return self.g.op("Identity", [x], "identity")

    _Dropout = _Identity

    def _Flatten(self, m: Any, x: str, shape: Tuple[int, ...], where: str) -> str:
        rank = len(shape)
        start = m.start_dim % rank if rank else 0
        end = m.end_dim % rank if rank else 0
        # 0 copies the input's dim (keeps the batch axis dynamic), -1 takes what is left.
        target = [0] * start + [-1] + [int(d) for d in shape[end + 1:]]
        return self.g.op("Reshape", [x, self.g.const("flatten_shape", target, np.int64)], "flatten")

    def _MaxPool2d(self, m: Any, x: str, shape: Tuple[int, ...], where: str) -> str:
        k = _pair(m.kernel_size, 2)
        stride = _pair(m.stride, 2) if m.stride is not None else k
        pad = _pair(m.padding, 2)
        return self.g.op("MaxPool", [x], "maxpool", kernel_shape=k, strides=stride, pads=pad + pad,
                         dilations=_pair(m.dilation, 2), ceil_mode=int(m.ceil_mode))

    def _AvgPool2d(self, m: Any, x: str, shape: Tuple[int, ...], where: str) -> str:
        if m.ceil_mode:
            raise UnsupportedLayerError(f"export_onnx: AvgPool2d at {where} uses ceil_mode=True, whose edge windows "
                                        "ONNX AveragePool divides differently")
        k = _pair(m.kernel_size, 2)
        stride = _pair(m.stride, 2) if m.stride is not None else k
        pad = _pair(m.padding, 2)
        return self.g.op("AveragePool", [x], "avgpool", kernel_shape=k, strides=stride, pads=pad + pad,
                         count_include_pad=int(m.count_include_pad))

    def _AdaptiveAvgPool2d(self, m: Any, x: str, shape: Tuple[int, ...], where: str) -> str:
        out = _pair(m.output_size, 2)
        if out == [1, 1]:
            return self.g.op("GlobalAveragePool", [x], "gap")
        h, w = int(shape[-2]), int(shape[-1])
        if h % out[0] or w % out[1]:
            raise UnsupportedLayerError(f"export_onnx: AdaptiveAvgPool2d at {where} maps {h}x{w} to {out[0]}x{out[1]}, "
                                        "which is no fixed window (sizes must divide)")
        k = [h // out[0], w // out[1]]
        return self.g.op("AveragePool", [x], "adaptive_avgpool", kernel_shape=k, strides=k)

    def _Embedding(self, m: Any, x: str, shape: Tuple[int, ...], where: str) -> str:
        return self.g.op("Gather", [self.g.const("embedding", _np(m.weight)), x], "embedding", axis=0)

    def _attention(self, m: Any, x: str, where: str) -> str:
        """Self-attention on (batch, seq, embed) input, no masks, eval mode."""
        g = self.g
        e, h = int(m.embed_dim), int(m.num_heads)
        d = e // h
        w = _np(m.in_proj_weight)
        b = _np(m.in_proj_bias) if m.in_proj_bias is not None else None
        heads = []
        for i, part in enumerate(("q", "k", "v")):
            proj = self._linear(x, w[i * e:(i + 1) * e], None if b is None else b[i * e:(i + 1) * e], f"attn_{part}")
            split = g.op("Reshape", [proj, g.const("heads_shape", [0, 0, h, d], np.int64)], f"attn_{part}")
            heads.append(g.op("Transpose", [split], f"attn_{part}", perm=[0, 2, 1, 3]))
        q, k, v = heads
        scores = g.op("MatMul", [q, g.op("Transpose", [k], "attn_kT", perm=[0, 1, 3, 2])], "attn_scores")
        scores = g.op("Mul", [scores, g.const("attn_scale", 1.0 / math.sqrt(d))], "attn_scores")
        probs = g.op("Softmax", [scores], "attn_probs", axis=-1)
        ctx = g.op("Transpose", [g.op("MatMul", [probs, v], "attn_ctx")], "attn_ctx", perm=[0, 2, 1, 3])
        ctx = g.op("Reshape", [ctx, g.const("merge_shape", [0, 0, e], np.int64)], "attn_ctx")
        out_b = m.out_proj.bias
        return self._linear(ctx, _np(m.out_proj.weight), None if out_b is None else _np(out_b), "attn_out")

    def _MultiheadAttention(self, m: Any, x: str, shape: Tuple[int, ...], where: str) -> str:
        if len(shape) != 3:
            raise UnsupportedLayerError(f"export_onnx: MultiheadAttention at {where} needs 3-D input, got shape {shape}")
        if not m.batch_first:
            x = self.g.op("Transpose", [x], "to_batch_first", perm=[1, 0, 2])
        y = self._attention(m, x, where)
        if not m.batch_first:
            y = self.g.op("Transpose", [y], "to_seq_first", perm=[1, 0, 2])
        return y

    def _TransformerEncoder(self, m: Any, x: str, shape: Tuple[int, ...], where: str) -> str:
        for i, layer in enumerate(m.layers):
            x = self._TransformerEncoderLayer(layer, x, shape, f"{where}.layers.{i}")
        return x if m.norm is None else self.emit(m.norm, x, shape, f"{where}.norm")

    def _TransformerEncoderLayer(self, m: Any, x: str, shape: Tuple[int, ...], where: str) -> str:
        if m.activation not in ("relu", "gelu", "gelu_tanh"):
            raise UnsupportedLayerError(f"export_onnx: TransformerEncoderLayer at {where} has activation {m.activation!r}")
        attn = m.self_attn
        if not attn.batch_first:
            x = self.g.op("Transpose", [x], "to_batch_first", perm=[1, 0, 2])

        def norm(layer: Any, inp: str) -> str:
            return self._layer_norm(inp, layer.normalized_shape, layer.eps, _np(layer.weight),
                                    None if layer.bias is None else _np(layer.bias))

        def ff(inp: str) -> str:
            hdn = self._linear(inp, _np(m.linear1.weight), _np(m.linear1.bias), "ff1")
            if m.activation == "relu":
                hdn = self.g.op("Relu", [hdn], "ff_act")
            else:
                hdn = self._gelu(hdn, "tanh" if m.activation == "gelu_tanh" else "none")
            return self._linear(hdn, _np(m.linear2.weight), _np(m.linear2.bias), "ff2")

        if m.norm_first:
            x = self.g.op("Add", [x, self._attention(attn, norm(m.norm1, x), where)], "res1")
            y = self.g.op("Add", [x, ff(norm(m.norm2, x))], "res2")
        else:
            x = norm(m.norm1, self.g.op("Add", [x, self._attention(attn, x, where)], "res1"))
            y = norm(m.norm2, self.g.op("Add", [x, ff(x)], "res2"))
        if not attn.batch_first:
            y = self.g.op("Transpose", [y], "to_seq_first", perm=[1, 0, 2])
        return y

    def _rnn(self, m: Any, x: str, shape: Tuple[int, ...], where: str, op_type: str) -> str:
        g = self.g
        if getattr(m, "proj_size", 0):
            raise UnsupportedLayerError(f"export_onnx: {op_type} with proj_size at {where} has no ONNX operator "
                                        "(ONNX's LSTM has no projection)")
        hs = int(m.hidden_size)
        dirs = 2 if m.bidirectional else 1
        seq = g.op("Transpose", [x], "rnn_seq_first", perm=[1, 0, 2]) if m.batch_first else x
        state = m.state_dict()
        gates = {"LSTM": 4, "GRU": 3, "RNN": 1}[op_type]
        # PyTorch gate blocks -> ONNX order: LSTM i,f,g,o -> i,o,f,c; GRU r,z,n -> z,r,h.
        order = {"LSTM": [0, 3, 1, 2], "GRU": [1, 0, 2], "RNN": [0]}[op_type]

        def reorder(a: np.ndarray) -> np.ndarray:
            blocks = [a[i * hs:(i + 1) * hs] for i in range(gates)]
            return np.concatenate([blocks[i] for i in order], axis=0)

        for layer in range(int(m.num_layers)):
            # ONNX stacks the directions on a leading axis: forward, then reverse (PyTorch's *_reverse).
            sfx = ["", "_reverse"][:dirs]
            w = np.stack([reorder(_np(state[f"weight_ih_l{layer}{s}"])) for s in sfx])
            r = np.stack([reorder(_np(state[f"weight_hh_l{layer}{s}"])) for s in sfx])
            if m.bias:
                bias = np.stack([np.concatenate([reorder(_np(state[f"bias_ih_l{layer}{s}"])),
                                                 reorder(_np(state[f"bias_hh_l{layer}{s}"]))]) for s in sfx])
            else:
                bias = np.zeros((dirs, 2 * gates * hs), np.float32)
            attrs: Dict[str, Any] = {"hidden_size": hs}
            if dirs == 2:
                attrs["direction"] = "bidirectional"
            if op_type == "GRU":
                attrs["linear_before_reset"] = 1
            if op_type == "RNN":
                attrs["activations"] = ["Relu" if m.nonlinearity == "relu" else "Tanh"] * dirs
            y = g.op(op_type, [seq, g.const("rnn_w", w), g.const("rnn_r", r), g.const("rnn_b", bias)], "rnn",
                     n_out=1, **attrs)
            # Y is (seq, num_directions, batch, hidden): PyTorch's (seq, batch, directions * hidden).
            if dirs == 1:
                seq = g.op("Squeeze", [y, g.const("axis1", [1], np.int64)], "rnn_y")
            else:
                y = g.op("Transpose", [y], "rnn_dirs_last", perm=[0, 2, 1, 3])
                seq = g.op("Reshape", [y, g.const("rnn_join_dirs", [0, 0, -1], np.int64)], "rnn_y")
        return g.op("Transpose", [seq], "rnn_batch_first", perm=[1, 0, 2]) if m.batch_first else seq

    def _LSTM(self, m: Any, x: str, shape: Tuple[int, ...], where: str) -> str:
        return self._rnn(m, x, shape, where, "LSTM")

    def _GRU(self, m: Any, x: str, shape: Tuple[int, ...], where: str) -> str:
        return self._rnn(m, x, shape, where, "GRU")

    def _RNN(self, m: Any, x: str, shape: Tuple[int, ...], where: str) -> str:
        return self._rnn(m, x, shape, where, "RNN")


EXPORTABLE_LAYERS: Tuple[str, ...] = tuple(sorted(
    name[1:] for name in vars(_Exporter) if name[1:2].isupper() and name != "_Sequential"
))


def _leaves(model: Any, path: str = "") -> List[Tuple[str, Any]]:
    """The layers of a (nested) Sequential in call order, with their dotted paths."""
    if layer_kind(model) == "Sequential":
        out: List[Tuple[str, Any]] = []
        for key, child in model.named_children():
            out += _leaves(child, f"{path}.{key}" if path else key)
        return out
    return [(path, model)]


def _first(y: Any) -> Any:
    return y[0] if isinstance(y, tuple) else y


def _as_tensor(example: Any) -> Any:
    if isinstance(example, _core.Tensor):
        return example
    return _core.tensor(np.asarray(example))


_DTYPES = {"float32": np.float32, "float64": np.float64, "int64": np.int64, "int32": np.int32}


def export_onnx(
    model: Any,
    example_input: Any,
    path: Optional[PathLike] = None,
    *,
    opset: int = DEFAULT_OPSET,
    dynamic_batch: bool = True,
    input_name: str = "input",
    output_name: str = "output",
    graph_name: str = "spiraltorch",
) -> Any:
    """Builds an ONNX model computing ``model``'s eval-mode forward on inputs shaped like
    ``example_input`` (a Tensor or array; float32, or int64 indices for an Embedding first
    layer). With ``dynamic_batch`` the first axis is named ``batch`` and may vary. The model
    is checked with ``onnx.checker``; it is written to ``path`` when given. Returns the
    ``onnx.ModelProto``. Raises ``UnsupportedLayerError`` naming any layer with no mapping;
    nothing is written then. The model's training flag is restored afterwards."""
    onnx = _require_onnx()
    from ..autograd import no_grad

    if opset < 17:
        raise _core.SpiralValueError(f"export_onnx: opset must be >= 17 (LayerNormalization), got {opset}")
    layers = _leaves(model)
    exporter = _Exporter(onnx, opset)
    x = _as_tensor(example_input)
    in_dtype = str(x.dtype).replace("spiraltorch.", "")
    if in_dtype not in ("float32", "int64"):
        raise _core.DtypeError(f"export_onnx: example input must be float32 (or int64 indices), got {in_dtype}")
    was_training = model.training
    model.eval()
    try:
        with no_grad():
            in_shape = tuple(int(d) for d in x.shape)
            name, shape, value = input_name, in_shape, x
            for where, layer in layers:
                name = exporter.emit(layer, name, shape, where)
                try:
                    value = _first(layer(value))
                except _core.SpiralError as exc:  # say which layer of the export the example broke
                    raise type(exc)(f"export_onnx: {type(layer).__name__} at {where or '<root>'} failed on the "
                                    f"example's activation of shape {shape}: {exc}") from exc
                shape = tuple(int(d) for d in value.shape)
    finally:
        model.train(was_training)
    g = exporter.g
    if name == input_name:
        name = g.op("Identity", [name], "output")
    g.nodes.append(g.h.make_node("Identity", [name], [output_name], name="output_identity"))
    out_dtype = str(value.dtype).replace("spiraltorch.", "")

    def dims(s: Tuple[int, ...]) -> List[Any]:
        return ["batch" if (dynamic_batch and i == 0) else d for i, d in enumerate(s)]

    elem = {"float32": onnx.TensorProto.FLOAT, "int64": onnx.TensorProto.INT64}
    graph = g.h.make_graph(
        g.nodes,
        graph_name,
        [g.h.make_tensor_value_info(input_name, elem[in_dtype], dims(in_shape))],
        [g.h.make_tensor_value_info(output_name, elem.get(out_dtype, onnx.TensorProto.FLOAT), dims(shape))],
        initializer=g.inits,
    )
    proto = g.h.make_model(graph, opset_imports=[g.h.make_opsetid("", opset)], producer_name="spiraltorch",
                           producer_version=str(getattr(__import__("spiraltorch"), "__version__", "")))
    proto.ir_version = min(proto.ir_version, 10)
    onnx.checker.check_model(proto, full_check=True)
    if path is not None:
        atomic_write_bytes(path, proto.SerializeToString())
    return proto


def verify_onnx(model: Any, onnx_model: Any, inputs: Any, *, atol: float = 1e-5, rtol: float = 1e-5) -> float:
    """Runs ``onnx_model`` (a path or ModelProto) in onnxruntime on ``inputs`` and compares with
    ``model``'s eval-mode output. Returns the largest absolute difference; raises
    ``SpiralValueError`` naming it when any element differs by more than ``atol + rtol*|ref|``."""
    try:
        import onnxruntime as ort  # type: ignore
    except ImportError as exc:  # pragma: no cover
        raise ImportError("verify_onnx needs 'onnxruntime': pip install onnxruntime") from exc
    from ..autograd import no_grad

    data = onnx_model if isinstance(onnx_model, (str, os.PathLike)) else onnx_model.SerializeToString()
    session = ort.InferenceSession(os.fspath(data) if isinstance(data, os.PathLike) else data,
                                   providers=["CPUExecutionProvider"])
    x = _as_tensor(inputs)
    was_training = model.training
    model.eval()
    try:
        with no_grad():
            ref = _first(model(x)).numpy()
    finally:
        model.train(was_training)
    feed = {session.get_inputs()[0].name: np.ascontiguousarray(x.numpy())}
    got = session.run(None, feed)[0]
    if got.shape != ref.shape:
        raise _core.ShapeError(f"verify_onnx: onnxruntime output shape {got.shape} != SpiralTorch {ref.shape}")
    diff = np.abs(got.astype(np.float64) - ref.astype(np.float64))
    worst = float(diff.max()) if diff.size else 0.0
    if np.any(diff > atol + rtol * np.abs(ref)):
        raise _core.SpiralValueError(f"verify_onnx: onnxruntime differs from SpiralTorch by up to {worst:.3g} "
                                     f"(atol {atol}, rtol {rtol})")
    return worst


__all__ = ["DEFAULT_OPSET", "EXPORTABLE_LAYERS", "export_onnx", "verify_onnx"]
