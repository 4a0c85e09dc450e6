"""WaveRnn byte-level language model on English text (Debian's ``fortunes``): Embedding ->
WaveRnn -> Linear, Adam on random 128-byte windows; prints validation bits per byte next to
the unigram baseline. ``--arch`` also trains the other architectures of
:mod:`spiraltorch.zoo.byte_lm` (wave_gate, lstm, transformer) under the same budget.

Run: spiral-model-zoo run wave_rnn_lm -- --steps 600 --jsonl metrics.jsonl
"""

from __future__ import annotations

from spiraltorch.zoo import byte_lm


def main() -> None:
    """Runs the recipe from the command line (``spiral-model-zoo run wave_rnn_lm -- --help`` lists its options;
    the module docstring says what it trains and prints)."""
    byte_lm.cli(default_arch="wave_rnn")


if __name__ == "__main__":
    main()
