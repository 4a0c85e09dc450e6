"""Functional forms of the native layers (``spiraltorch.nn.functional``, like ``torch.nn.functional``).

Every name is re-exported from ``spiraltorch._core.nn``; add new names to the import below.
"""

from __future__ import annotations

from .._core.nn import (
    # basic layers (nn_basic.cpp)
    linear as linear,
    layer_norm as layer_norm,
    add_layer_norm as add_layer_norm,
    embedding as embedding,
    dropout as dropout,
    batch_norm as batch_norm,
    relu as relu,
    gelu as gelu,
    feed_forward as feed_forward,
    silu as silu,
    tanh as tanh,
    sigmoid as sigmoid,
    softmax as softmax,
    log_softmax as log_softmax,
    flatten as flatten,
    # more activations (nn_activations.cpp)
    leaky_relu as leaky_relu,
    elu as elu,
    selu as selu,
    celu as celu,
    softplus as softplus,
    mish as mish,
    hardswish as hardswish,
    hardsigmoid as hardsigmoid,
    hardtanh as hardtanh,
    relu6 as relu6,
    logsigmoid as logsigmoid,
    softsign as softsign,
    tanhshrink as tanhshrink,
    threshold as threshold,
    prelu as prelu,
    glu as glu,
    softmin as softmin,
    # normalisation (nn_norm.cpp)
    group_norm as group_norm,
    instance_norm as instance_norm,
    rms_norm as rms_norm,
    normalize as normalize,
    cosine_similarity as cosine_similarity,
    # convolution and pooling (nn_conv.cpp)
    conv1d as conv1d,
    conv2d as conv2d,
    conv_transpose1d as conv_transpose1d,
    conv_transpose2d as conv_transpose2d,
    max_pool2d as max_pool2d,
    avg_pool2d as avg_pool2d,
    adaptive_avg_pool2d as adaptive_avg_pool2d,
    # torch-family layers (nn_pool_shuffle_dropout_cells.cpp)
    embedding_bag as embedding_bag,
    max_pool1d as max_pool1d,
    avg_pool1d as avg_pool1d,
    adaptive_avg_pool1d as adaptive_avg_pool1d,
    adaptive_max_pool2d as adaptive_max_pool2d,
    pixel_shuffle as pixel_shuffle,
    pixel_unshuffle as pixel_unshuffle,
    dropout1d as dropout1d,
    dropout2d as dropout2d,
    alpha_dropout as alpha_dropout,
    feature_alpha_dropout as feature_alpha_dropout,
    bilinear as bilinear,
    # attention (nn_seq.cpp)
    scaled_dot_product_attention as scaled_dot_product_attention,
    # losses (nn_loss.cpp)
    mse_loss as mse_loss,
    l1_loss as l1_loss,
    huber_loss as huber_loss,
    binary_cross_entropy_with_logits as binary_cross_entropy_with_logits,
    hyperbolic_cross_entropy as hyperbolic_cross_entropy,
    cross_entropy as cross_entropy,
    linear_cross_entropy as linear_cross_entropy,
    nll_loss as nll_loss,
    sigmoid_focal_loss as sigmoid_focal_loss,
    pairwise_distance as pairwise_distance,
    contrastive_loss as contrastive_loss,
    triplet_margin_loss as triplet_margin_loss,
    # torch's remaining losses (nn_loss_margin_likelihood.cpp)
    binary_cross_entropy as binary_cross_entropy,
    ctc_loss as ctc_loss,
    kl_div as kl_div,
    smooth_l1_loss as smooth_l1_loss,
    soft_margin_loss as soft_margin_loss,
    margin_ranking_loss as margin_ranking_loss,
    hinge_embedding_loss as hinge_embedding_loss,
    cosine_embedding_loss as cosine_embedding_loss,
    poisson_nll_loss as poisson_nll_loss,
    gaussian_nll_loss as gaussian_nll_loss,
    multilabel_soft_margin_loss as multilabel_soft_margin_loss,
    multi_margin_loss as multi_margin_loss,
)

# torch.nn.functional names composed from native ops (pad, interpolate, one_hot).
from ._functional_compat import interpolate as interpolate, one_hot as one_hot, pad as pad

__all__ = [n for n in globals() if not n.startswith("_") and n != "annotations"]
