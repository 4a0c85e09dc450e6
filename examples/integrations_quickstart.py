"""The README's integration lines, run on a small model: ONNX export checked against
onnxruntime, the deployment card, a TorchServe archive served through TorchServe's loader,
the BentoML model store and runner, an Optuna study and (with --ray) a Ray Tune grid.

Usage: python integrations_quickstart.py [OUTPUT_DIR] [--ray]
(default: $SPIRALTORCH_EXAMPLE_OUT or the current directory; the BentoML store goes under
OUTPUT_DIR/bentoml unless BENTOML_HOME is set).
"""

import os
import sys

args = [a for a in sys.argv[1:] if not a.startswith("--")]
out_dir = os.path.abspath(args[0] if args else os.environ.get("SPIRALTORCH_EXAMPLE_OUT", "."))
os.makedirs(out_dir, exist_ok=True)
os.environ.setdefault("BENTOML_HOME", os.path.join(out_dir, "bentoml"))  # read when bentoml is imported

import numpy as np  # noqa: E402

import spiraltorch as st  # noqa: E402
from spiraltorch import integrations as integ  # noqa: E402

st.manual_seed(0)
model = st.nn.Sequential(st.nn.Linear(4, 8), st.nn.ReLU(), st.nn.Linear(8, 3))
x = np.random.default_rng(0).standard_normal((2, 4)).astype(np.float32)
onnx_path = os.path.join(out_dir, "model.onnx")

# ONNX + deployment card
integ.export_onnx(model, x, onnx_path)
print("onnx max |diff| vs onnxruntime:", integ.verify_onnx(model, onnx_path, x))
card = integ.write_deployment_card(integ.deployment_card(model, x, artifacts={"onnx": onnx_path}),
                                   os.path.join(out_dir, "model.card.json"))
print("card:", card.name, integ.verify_deployment_card(card))

# TorchServe
mar = integ.torchserve_archive(model, "mlp", os.path.join(out_dir, "model_store"), input_shape=(None, 4), force=True)
print("torchserve:", mar.name, integ.torchserve_predict(mar, [x[0].tolist()]))

# BentoML
integ.bentoml_save_model(model, "mlp", input_shape=(None, 4))
runner = integ.bentoml_runner("mlp")
runner.init_local(quiet=True)
print("bentoml runner:", np.round(runner.predict.run(x), 5).tolist())

# Optuna: a linear regression whose default learning rate (1e-4) is far too small.
data_rng = np.random.default_rng(1)
X = data_rng.standard_normal((64, 4)).astype(np.float32)
Y = X @ data_rng.standard_normal((4, 1)).astype(np.float32)
batches = [(st.tensor(X[i:i + 16]), st.tensor(Y[i:i + 16])) for i in range(0, 64, 16)]
train, val = batches[:3], batches[3:]


def build(lr):
    st.manual_seed(0)
    net = st.nn.Sequential(st.nn.Linear(4, 1))
    return net, st.nn.MSELoss(), st.optim.SGD(net.parameters(), lr=lr)


import optuna  # noqa: E402

optuna.logging.set_verbosity(optuna.logging.WARNING)
objective = integ.optuna_objective(lambda t: build(t.suggest_float("lr", 1e-4, 0.5, log=True)), train, val, epochs=8)
default = objective(optuna.trial.FixedTrial({"lr": 1e-4}))
study = integ.optuna_optimize(objective, n_trials=12, seed=0)
pruned = sum(t.state == optuna.trial.TrialState.PRUNED for t in study.trials)
print(f"optuna: default lr 1e-4 val_loss {default:.4g}; best lr {study.best_params['lr']:.3g} "
      f"val_loss {study.best_value:.4g}; {pruned} of 12 trials pruned")

if "--ray" in sys.argv:
    import ray
    from ray import tune

    grid = integ.ray_tune_run(integ.ray_tune_trainable(lambda c: build(c["lr"]), lambda: (train, val)),
                              {"lr": tune.grid_search([1e-4, 0.2])}, num_cpus=2,
                              storage_path=os.path.join(out_dir, "ray_results"))
    ray.shutdown()
    best = grid.get_best_result()
    print(f"ray tune: best lr {best.config['lr']} val_loss {best.metrics['val_loss']:.4g}")
