"""Functional forms of the native layers (``spiraltorch.nn.functional``, like ``torch.nn.functional``).

Every name is re-exported from ``spiraltorch._core.nn``; add new names to the list below.
"""

from __future__ import annotations

from .. import _core

_native = _core.nn

__all__ = [
    # basic layers (nn_basic.cpp)
    "linear",
    "layer_norm",
    "embedding",
    "dropout",
    "batch_norm",
    "relu",
    "gelu",
    "silu",
    "tanh",
    "sigmoid",
    "softmax",
    "log_softmax",
    "flatten",
    # more activations (nn_activations.cpp)
    "leaky_relu",
    "elu",
    "selu",
    "celu",
    "softplus",
    "mish",
    "hardswish",
    "hardsigmoid",
    "hardtanh",
    "relu6",
    "logsigmoid",
    "softsign",
    "tanhshrink",
    "threshold",
    "prelu",
    "glu",
    "softmin",
    # normalisation (nn_norm.cpp)
    "group_norm",
    "instance_norm",
    "rms_norm",
    "normalize",
    "cosine_similarity",
    # convolution and pooling (nn_conv.cpp)
    "conv1d",
    "conv2d",
    "conv_transpose1d",
    "conv_transpose2d",
    "max_pool2d",
    "avg_pool2d",
    "adaptive_avg_pool2d",
    # torch-family layers (nn_pool_shuffle_dropout_cells.cpp)
    "embedding_bag",
    "max_pool1d",
    "avg_pool1d",
    "adaptive_avg_pool1d",
    "adaptive_max_pool2d",
    "pixel_shuffle",
    "pixel_unshuffle",
    "dropout1d",
    "dropout2d",
    "alpha_dropout",
    "feature_alpha_dropout",
    "bilinear",
    # attention (nn_seq.cpp)
    "scaled_dot_product_attention",
    # losses (nn_loss.cpp)
    "mse_loss",
    "l1_loss",
    "huber_loss",
    "binary_cross_entropy_with_logits",
    "hyperbolic_cross_entropy",
    "cross_entropy",
    "nll_loss",
    "sigmoid_focal_loss",
    "pairwise_distance",
    "contrastive_loss",
    "triplet_margin_loss",
    # torch's remaining losses (nn_loss_margin_likelihood.cpp)
    "binary_cross_entropy",
    "ctc_loss",
    "kl_div",
    "smooth_l1_loss",
    "soft_margin_loss",
    "margin_ranking_loss",
    "hinge_embedding_loss",
    "cosine_embedding_loss",
    "poisson_nll_loss",
    "gaussian_nll_loss",
    "multilabel_soft_margin_loss",
    "multi_margin_loss",
]

for _name in list(__all__):
    if hasattr(_native, _name):
        globals()[_name] = getattr(_native, _name)
    else:  # pragma: no cover - a name whose native part is not built yet
        __all__.remove(_name)
del _name

# torch.nn.functional names composed from native ops (pad, interpolate, one_hot).
from ._functional_compat import interpolate, one_hot, pad  # noqa: E402

__all__ += ["interpolate", "one_hot", "pad"]
