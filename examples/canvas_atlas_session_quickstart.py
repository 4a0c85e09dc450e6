"""Canvas -> Atlas -> Session quickstart: a small closed loop.

Each round an AmegagradSession updates its weights, a CanvasProjector renders the weights and emits
a loopback patch (the canvas intensity block-averaged back to the weights' shape, zero mean) that
the session absorbs on its next step, and CanvasProjector.emit_atlas_frame(...) streams the canvas
metrics into the same AtlasRoute as the session's own frames.

Usage: python canvas_atlas_session_quickstart.py [OUTPUT_DIR] [ROUNDS]"""

import os
import sys

import spiraltorch as st

out_dir = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("SPIRALTORCH_EXAMPLE_OUT", ".")
rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 6
os.makedirs(out_dir, exist_ok=True)

encoder = st.LanguageWaveEncoder(-1.0, 0.5)
wave = encoder.encode_z_space("canvas loop")
rows, cols = wave.shape()
session = st.AmegagradSession((rows, cols), curvature=-1.0, hyper_learning_rate=0.05, real_learning_rate=0.02)
projector = st.CanvasProjector(32, 96, colormap="diverging", normalization="symmetric")

session.step_wave(wave)  # the first update comes from the text
for i in range(rounds):
    projector.render(session.weights)  # the weights, resampled onto the canvas
    patch = projector.loopback_patch(rows, cols, gain=0.5)
    result = session.step_wave(patch, note=f"loopback {i}")
    projector.emit_atlas_frame(session.route, timestamp=result["timestamp"], bound=64)
    print(f"round {i}: canvas energy {projector.metrics()['canvas.energy']:.4f}, "
          f"hypergrad l2 {result['metrics']['hypergrad.l2']:.5f}, patch std {float(patch.std()):.4f}")

path = os.path.join(out_dir, "spiraltorch_canvas_loop.png")
projector.write_png(path)
summary = session.route.summary()
print("route:", summary["frames"], "frames; districts:", [d["name"] for d in summary["districts"]])
print("surface perspective:", session.route.perspective_for("Surface", focus_prefixes=["canvas."])["guidance"])
print("wrote", path)
