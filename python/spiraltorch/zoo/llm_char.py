"""Character-level language model: Embedding -> LSTM -> Linear, trained with
truncated back-propagation, then sampled. ``--corpus fortunes`` trains on English text from
Debian's ``fortunes`` package (bytes as characters, a random subset of ``--max-windows``
windows per epoch) and reports validation bits per character; ``builtin`` (the default when
the package is absent) uses a short built-in paragraph.

Run: spiral-model-zoo run llm_char -- --epochs 40
     spiral-model-zoo run llm_char -- --corpus fortunes --epochs 5
"""

from __future__ import annotations

import argparse
import math
import time

import spiraltorch as st
from spiraltorch import nn, optim
from spiraltorch.utils.progress import progress

TEXT = (
    "A spiral is a curve that winds around a centre while moving away from it. "
    "Shells, galaxies and storms draw spirals; so do seeds in a sunflower head, "
    "where each new seed turns by the golden angle and the pattern fills the disc "
    "without gaps. A learning system can be pictured the same way: each step turns "
    "a little, moves a little, and returns near where it started, but never quite "
    "to the same place. Training a model is the patient work of taking many such "
    "steps, measuring the error after each one, and turning the weights so that the "
    "next step errs a little less. The tensors carry the numbers, the gradients say "
    "which way is downhill, and the optimiser decides how far to walk. "
) * 4


class CharLM(nn.Module):
    """Embedding(``vocab``, 32) -> LSTM(32, ``hidden``, batch_first) -> Linear(``hidden``, ``vocab``):
    token ids ``(batch, seq)`` to next-token logits ``(batch, seq, vocab)``."""

    def __init__(self, vocab: int, hidden: int) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab, 32)
        self.rnn = nn.LSTM(32, hidden, batch_first=True)
        self.head = nn.Linear(hidden, vocab)

    def forward(self, tokens: st.Tensor) -> st.Tensor:
        out, _ = self.rnn(self.embed(tokens))
        return self.head(out)


def main() -> None:
    """Runs the recipe from the command line (``spiral-model-zoo run llm_char -- --help`` lists its options;
    the module docstring says what it trains and prints)."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--epochs", type=int, default=40)
    parser.add_argument("--seq", type=int, default=48)
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--hidden", type=int, default=128)
    parser.add_argument("--lr", type=float, default=5e-3)
    parser.add_argument("--corpus", choices=("auto", "builtin", "fortunes"), default="builtin")
    parser.add_argument("--max-windows", type=int, default=2000, help="windows per epoch (fortunes)")
    args = parser.parse_args()

    st.manual_seed(0)
    corpus = args.corpus
    if corpus == "auto":
        corpus = "fortunes" if st.datasets.find_fortunes() else "builtin"
    valid = None
    if corpus == "fortunes":
        text = st.datasets.fortunes_text("train").decode("latin-1")
        valid_text = st.datasets.fortunes_text("validation").decode("latin-1")
        chars = [chr(i) for i in range(256)]
        valid = st.tensor([ord(c) for c in valid_text[:20000]])
    else:
        text = TEXT
        chars = sorted(set(TEXT))
    index = {c: i for i, c in enumerate(chars)}
    data = st.tensor([index[c] for c in text])
    model = CharLM(len(chars), args.hidden)
    opt = optim.Adam(model.parameters(), lr=args.lr)
    loss_fn = nn.CategoricalCrossEntropy()
    windows = (data.shape[0] - 1) // args.seq
    starts = st.arange(windows) * args.seq
    if corpus == "fortunes":
        windows = min(windows, args.max_windows)
    print(f"text: {data.shape[0]} characters, vocabulary {len(chars)}, {windows} windows of {args.seq}")
    for epoch in range(1, args.epochs + 1):
        began = time.perf_counter()
        order = starts[st.argsort(st.rand(starts.shape[0]))][:windows]
        total, batches = 0.0, 0
        bar = progress(windows, desc=f"epoch {epoch}/{args.epochs}", unit="windows")
        for b in range(0, windows, args.batch):
            offs = order[b : b + args.batch].unsqueeze(1) + st.arange(args.seq + 1).unsqueeze(0)
            chunk = data[offs.reshape(-1)].reshape(offs.shape[0], args.seq + 1)
            logits = model(chunk[:, :-1])
            loss = loss_fn(logits.reshape(-1, len(chars)), chunk[:, 1:].reshape(-1))
            opt.zero_grad()
            loss.backward()
            optim.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            total += loss.item()
            batches += 1
            bar.update(int(offs.shape[0]))
            bar.set_postfix(loss=total / batches)
        bar.close()
        mean = total / batches
        line = f"epoch {epoch}  loss {mean:.3f}  perplexity {math.exp(mean):.2f}  ({time.perf_counter() - began:.1f} s)"
        if valid is not None:
            with st.no_grad():
                n = (valid.shape[0] - 1) // args.seq
                offs = (st.arange(n) * args.seq).unsqueeze(1) + st.arange(args.seq + 1).unsqueeze(0)
                chunk = valid[offs.reshape(-1)].reshape(n, args.seq + 1)
                vl = float(loss_fn(model(chunk[:, :-1]).reshape(-1, len(chars)), chunk[:, 1:].reshape(-1)))
            line += f"  validation {vl / math.log(2):.3f} bits/char"
        print(line)
    # Greedy-with-temperature sampling from a prompt.
    prompt = "A spiral " if corpus == "builtin" else "The "
    tokens = [index[c] for c in prompt]
    with st.no_grad():
        for _ in range(80):
            logits = model(st.tensor([tokens[-args.seq :]]))[0, -1]
            probs = (logits / 0.7).softmax(dim=0)
            cum = probs.cumsum(dim=0)
            r = st.rand(1).item()
            tokens.append(int((cum < r).sum().item()) if r < cum[-1].item() else int(probs.argmax().item()))
    print("sample:", "".join(chars[min(t, len(chars) - 1)] for t in tokens))


if __name__ == "__main__":
    main()
