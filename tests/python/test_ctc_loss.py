"""CTC loss (F.ctc_loss, nn.CTCLoss) against PyTorch: every reduction, padded and concatenated
targets, unequal lengths, a non-zero blank, unbatched input, impossible alignments with and
without zero_infinity, gradients (through log_softmax and with respect to log_probs themselves),
errors, and a small model that learns to emit a sequence."""

import numpy as np
import pytest

import spiraltorch as st
import spiraltorch.nn.functional as F

torch = pytest.importorskip("torch")

R = np.random.default_rng(0)
T, N, C, S = 12, 3, 6, 5
LOGITS = R.standard_normal((T, N, C))
TARGETS = R.integers(1, C, size=(N, S))
IL, TL = [12, 10, 7], [5, 3, 4]


def _both(reduction="mean", blank=0, targets=TARGETS, il=IL, tl=TL, logits=LOGITS, through_softmax=True,
          zero_infinity=False):
    out = []
    for lib in ("st", "torch"):
        if lib == "st":
            x = st.tensor(logits).requires_grad_(True)
            lp = F.log_softmax(x, -1) if through_softmax else x
            loss = F.ctc_loss(lp, st.tensor(targets), il, tl, blank=blank, reduction=reduction,
                              zero_infinity=zero_infinity)
        else:
            x = torch.tensor(logits, requires_grad=True)
            lp = torch.log_softmax(x, -1) if through_softmax else x
            loss = torch.nn.functional.ctc_loss(lp, torch.tensor(targets), torch.tensor(il), torch.tensor(tl),
                                                blank=blank, reduction=reduction, zero_infinity=zero_infinity)
        w = np.cos(np.arange(max(1, loss.numel()))).reshape(tuple(loss.shape))
        (loss * (st.tensor(w) if lib == "st" else torch.tensor(w))).sum().backward()
        out.append((loss.detach().numpy(), x.grad.numpy()))
    return out


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_matches_torch(reduction):
    (a, ga), (b, gb) = _both(reduction)
    np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(ga, gb, rtol=1e-10, atol=1e-12)


def test_concatenated_targets_blank_and_raw_log_probs():
    flat = np.concatenate([TARGETS[n, :TL[n]] for n in range(N)])
    (a, ga), (b, gb) = _both("sum", targets=flat)
    np.testing.assert_allclose(a, b, rtol=1e-12)
    np.testing.assert_allclose(ga, gb, atol=1e-12)
    # blank = 5 (targets avoid it), and the gradient with respect to log_probs themselves: PyTorch's form.
    tg = np.where(TARGETS == 5, 1, TARGETS)
    (a, ga), (b, gb) = _both("mean", blank=5, targets=tg, through_softmax=False,
                             logits=np.log(np.exp(LOGITS) / np.exp(LOGITS).sum(-1, keepdims=True)))
    np.testing.assert_allclose(a, b, rtol=1e-12)
    np.testing.assert_allclose(ga, gb, atol=1e-12)


def test_unbatched_float32_and_module():
    lp = np.log(np.exp(LOGITS[:, 0]) / np.exp(LOGITS[:, 0]).sum(-1, keepdims=True)).astype(np.float32)
    loss = st.nn.CTCLoss(reduction="none")(st.tensor(lp), st.tensor(TARGETS[0]), 12, 5)
    want = torch.nn.CTCLoss(reduction="none")(torch.tensor(lp), torch.tensor(TARGETS[0]), torch.tensor(12),
                                              torch.tensor(5))
    assert loss.dtype == st.float32 and tuple(loss.shape) == tuple(want.shape) == ()
    np.testing.assert_allclose(loss.numpy(), want.numpy(), rtol=1e-5)
    assert repr(st.nn.CTCLoss(blank=2)) == "CTCLoss(blank=2, reduction='mean', zero_infinity=False)"


def test_impossible_alignments():
    # Three repeated labels need 5 steps (blanks between the repeats); 4 steps cannot emit them.
    tg = np.array([[2, 2, 2]])
    logits = R.standard_normal((4, 1, 4))
    for zero_infinity in (False, True):
        (a, ga), (b, gb) = _both("sum", targets=tg, il=[4], tl=[3], logits=logits, zero_infinity=zero_infinity)
        np.testing.assert_array_equal(a, b)
        assert np.isinf(a) != zero_infinity
        if zero_infinity:
            np.testing.assert_array_equal(ga, np.zeros_like(ga))


def test_errors_name_the_values():
    lp = F.log_softmax(st.randn(5, 2, 4), -1)
    with pytest.raises(ValueError, match=r"ctc_loss: target 0 of sample 0 is not a class in \[0, 4\) other than the blank 0"):
        F.ctc_loss(lp, st.tensor([[0, 1], [1, 2]]), [5, 5], [2, 2])
    with pytest.raises(ValueError, match=r"ctc_loss: input_lengths\[1\] = 6 is outside \[0, 5\]"):
        F.ctc_loss(lp, st.tensor([[1, 2], [1, 2]]), [5, 6], [2, 2])
    with pytest.raises(st.ShapeError, match=r"expected 2 input and target lengths"):
        F.ctc_loss(lp, st.tensor([[1, 2], [1, 2]]), [5], [2, 2])
    with pytest.raises(ValueError, match=r"blank must be in \[0, 4\)"):
        F.ctc_loss(lp, st.tensor([[1, 2], [1, 2]]), [5, 5], [2, 2], blank=4)
    with pytest.raises(ValueError, match=r"CTCLoss: reduction must be"):
        st.nn.CTCLoss(reduction="avg")


def test_a_small_model_learns_to_emit_a_sequence():
    """Per-step logits trained with CTC put the target labels in order, blanks between."""
    st.manual_seed(0)
    logits = st.zeros(8, 1, 5, requires_grad=True)
    opt = st.optim.Adam([logits], lr=0.2)
    target = st.tensor([[3, 1, 4]])
    for _ in range(60):
        opt.zero_grad()
        loss = F.ctc_loss(F.log_softmax(logits, -1), target, [8], [3])
        loss.backward()
        opt.step()
    best = logits.detach().argmax(-1).reshape(-1).tolist()
    collapsed = [c for i, c in enumerate(best) if c != 0 and (i == 0 or c != best[i - 1])]
    assert collapsed == [3, 1, 4], best
    assert float(loss) < 0.1
