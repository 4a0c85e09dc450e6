"""AmegagradSession quickstart: a model session fits a small regression with Amegagrad updates
(hyperbolic + Euclidean tapes, rates tuned by DesireGradientControl), records an Atlas frame per
step, writes a JSONL trace, and reads the trace back.

Usage: python amegagrad_session_quickstart.py [OUTPUT_DIR] [STEPS]"""

import os
import sys

import spiraltorch as st

out_dir = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("SPIRALTORCH_EXAMPLE_OUT", ".")
steps = int(sys.argv[2]) if len(sys.argv) > 2 else 40
os.makedirs(out_dir, exist_ok=True)
trace_path = os.path.join(out_dir, "amegagrad_session_trace.jsonl")

st.manual_seed(0)
x = st.randn(32, 3)
y = x @ st.tensor([[0.3], [-0.2], [0.1]])  # a linear target the model can fit
model = st.nn.Linear(3, 1)
session = st.AmegagradSession(model, lambda p, t: ((p - t) ** 2).mean(), hyper_learning_rate=0.2,
                              real_learning_rate=0.1, trace_path=trace_path)

for i in range(steps):
    result = session.step(x, y)
    if i % max(1, steps // 4) == 0 or i == steps - 1:
        m = result["metrics"]
        print(f"step {result['step']:3d}: loss {result['loss']:.5f}  hyper lr {m['hypergrad.learning_rate']:.4f}"
              f"  max radius {m['geometry.max_radius']:.4f}")

trace = st.zspace_trace.load_trace(trace_path)
summary = trace.summary()
loss = summary["metrics"]["session.loss"]
print(f"trace: {summary['steps']} steps from {summary['sources']}, loss {loss['first']:.5f} -> {loss['last']:.5f}")
print("atlas:", st.zspace_atlas.trace_to_atlas_route(trace, bound=16).summary()["frames"], "frames")
