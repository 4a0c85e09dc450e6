"""Hello SpiralSession: aligns a barycenter with a hypergrad tape, prepares a Sequential module, and
finishes a roundtable epoch entirely from Python (the seed's snippet first, then the rest)."""

from spiraltorch import Tensor, Hypergrad, LanguageWaveEncoder

encoder = LanguageWaveEncoder(-1.0, 0.5)
wave = encoder.encode_z_space("SpiralTorch in Rust")
rows, cols = wave.shape()
z = Tensor(rows, cols, [0.0] * (rows * cols))

tape = Hypergrad(-1.0, 0.05, *z.shape())
tape.accumulate_pair(z, wave)
tape.apply(z)
print(z.tolist())

# The barycenter of two densities, and a hypergrad tape that follows its corridor of intermediates.
import spiraltorch as st  # noqa: E402

densities = [st.Tensor(1, 2, [0.8, 0.2]), st.Tensor(1, 2, [0.3, 0.7])]
bary = st.z_space_barycenter([1.0, 2.0], densities, entropy_weight=0.1)
corridor = Hypergrad(-1.0, 0.05, 1, 2)
corridor.accumulate_barycenter_path(bary.intermediates())
point = st.Tensor(1, 2, [0.0, 0.0])
corridor.apply(point)
print("barycenter density:", [round(v, 4) for v in bary.density.tolist()[0]],
      "| tape step along the corridor:", [round(v, 5) for v in point.tolist()[0]])

# A Sequential module prepared for hypergrad, then one roundtable epoch of the native trainer.
session = st.SpiralSession(backend="cpu", seed=7)
model = st.nn.Sequential(st.nn.Linear(4, 3), st.nn.ReLU(), st.nn.Linear(3, 2))
trainer = st.nn.ModuleTrainer(curvature=-1.0, hyper_learning_rate=0.05, fallback_learning_rate=0.05)
trainer.prepare(model)
x, y = st.randn(8, 4), st.randn(8, 2) * 0.3
batches = [(x, y)] * 4
schedule = trainer.roundtable(8, 2)
before = trainer.evaluate_epoch(model, lambda p, t: ((p - t) ** 2).mean(), batches).average_loss
stats = trainer.train_epoch(model, lambda p, t: ((p - t) ** 2).mean(), batches, schedule)
print(f"roundtable epoch on {session.device}: {stats.batches} batches, loss {before:.4f} -> {stats.average_loss:.4f}")
