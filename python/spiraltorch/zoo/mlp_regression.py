"""MLP regression of a noisy sine trained with ModuleTrainer's roundtable loop.

The hidden layer takes Riemannian steps in the Poincare ball (attach_hypergrad);
the output layer plain SGD. Run: spiral-model-zoo run mlp_regression -- --epochs 200
"""

from __future__ import annotations

import argparse

import spiraltorch as st
from spiraltorch import nn
from spiraltorch.utils.progress import progress


def main() -> None:
    """Runs the recipe from the command line (``spiral-model-zoo run mlp_regression -- --help`` lists its options;
    the module docstring says what it trains and prints)."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--epochs", type=int, default=300)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--lr", type=float, default=0.1)
    args = parser.parse_args()

    st.manual_seed(0)
    x = st.linspace(-3.0, 3.0, 256).reshape(256, 1)
    y = x.sin() + st.randn(256, 1) * 0.05
    batches = [(x[i : i + args.batch], y[i : i + args.batch]) for i in range(0, 256, args.batch)]

    hidden = nn.Sequential(nn.Linear(1, 32, name="hidden"))
    hidden.attach_hypergrad(curvature=-1.0, learning_rate=args.lr)
    trainer = nn.ModuleTrainer(backend="cpu", curvature=-1.0, hyper_learning_rate=args.lr,
                               fallback_learning_rate=args.lr / 5, progress=False)  # one bar for the run
    schedule = trainer.roundtable(args.batch, 1, nn.RoundtableConfig(top_k=4, mid_k=8, bottom_k=4))

    class Tanh(nn.Module):
        def forward(self, t: st.Tensor) -> st.Tensor:
            return t.tanh()

    model = nn.Sequential(hidden, Tanh(), nn.Linear(32, 1, name="out"))
    mse = lambda pred, target: ((pred - target) ** 2).mean()  # noqa: E731
    bar = progress(args.epochs * x.shape[0], desc="train")
    for epoch in range(1, args.epochs + 1):
        stats = trainer.train_epoch(model, mse, batches, schedule)
        bar.update(x.shape[0])
        bar.set_postfix(epoch=epoch, mse=stats.average_loss)
        if epoch == 1 or epoch % 50 == 0 or epoch == args.epochs:
            bar.print(f"epoch {epoch:4d}  mse {stats.average_loss:.5f}  bands {stats.band_energy}")
    bar.close()
    with st.no_grad():
        final = mse(model(x), y).item()
    print(f"final mse {final:.5f} (noise floor 0.0025)")


if __name__ == "__main__":
    main()
