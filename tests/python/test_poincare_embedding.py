"""st.geometry.PoincareEmbedding and reconstruction_metrics (Nickel & Kiela 2017) on WordNet
(Debian's wordnet-base; the WordNet tests skip when it is not installed)."""

import numpy as np
import pytest

import spiraltorch as st
from spiraltorch.datasets import find_wordnet, wordnet_closure

needs_wordnet = pytest.mark.skipif(find_wordnet() is None, reason="wordnet-base not installed (/usr/share/wordnet)")


def tree_edges():
    # closure of 0 -> {1, 2}, 1 -> {3, 4}, 2 -> {5, 6} as (node, ancestor)
    return st.tensor([[1, 0], [2, 0], [3, 1], [3, 0], [4, 1], [4, 0], [5, 2], [5, 0], [6, 2], [6, 0]], dtype="int64")


def reference_metrics(w, pairs, c=-1.0):
    """The authors' protocol in NumPy: every node's ancestors ranked by Poincare distance among
    its non-ancestors (itself excluded); ranks pooled over pairs, average precision per node."""
    k = -c
    w = np.asarray(w, dtype=np.float64)
    sq = (w ** 2).sum(1)
    diff = ((w[:, None, :] - w[None, :, :]) ** 2).sum(-1)
    dist = np.arccosh(1 + 2 * k * diff / np.outer(1 - k * sq, 1 - k * sq)) / np.sqrt(k)
    anc = {}
    for u, v in pairs:
        anc.setdefault(int(u), set()).add(int(v))
    ranks, aps = [], []
    for u, a in anc.items():
        a = sorted(a)
        neg = np.ones(len(w), dtype=bool)
        neg[a] = False
        neg[u] = False
        r = np.sort((dist[u][neg][None, :] < dist[u][a][:, None]).sum(1) + 1)
        ranks.extend(r)
        aps.append(np.mean(np.arange(1, len(r) + 1) / (r + np.arange(len(r)))))
    return float(np.mean(ranks)), float(np.mean(aps))


@needs_wordnet
def test_wordnet_mammal_closure_sizes():
    names, edges = wordnet_closure("mammal")
    assert (len(names), tuple(edges.shape)) == (1182, (6542, 2))  # the reference sizes
    assert edges.dtype == st.int64 and len(set(names)) == len(names)
    e = edges.numpy()
    mammal = names.index("mammal.n.01")
    assert mammal not in set(e[:, 0])  # the root has no ancestor inside the subtree
    has_mammal = {u for u, v in e if v == mammal}
    assert has_mammal == set(range(len(names))) - {mammal}
    names_ni, edges_ni = wordnet_closure("mammal", instance_hypernyms=False)
    assert (len(names_ni), edges_ni.shape[0]) == (1170, 6448)
    # A direct look at the closure: dog.n.01 is a canine, a carnivore, a placental and a mammal.
    dog = names.index("dog.n.01")
    ancestors = {names[v] for u, v in e if u == dog}
    assert {"canine.n.02", "carnivore.n.01", "placental.n.01", "mammal.n.01"} <= ancestors
    with pytest.raises(st.SpiralValueError, match="no noun synset"):
        wordnet_closure("no_such_thing")


@needs_wordnet
def test_short_fit_reconstructs_a_wordnet_subtree():
    names, edges = wordnet_closure("canine.n.02")  # 224 nodes, 798 closure edges
    model = st.geometry.PoincareEmbedding(len(names), 5, seed=0)
    seen = []
    reports = model.fit(edges, epochs=60, lr=1.0, callback=lambda e, loss, s: seen.append((e, loss, s)))
    assert [r["epoch"] for r in reports] == [e for e, _, _ in seen] == list(range(1, 61))
    assert reports[-1]["loss"] < reports[0]["loss"] and reports[0]["lr"] == pytest.approx(0.1)
    m = st.geometry.reconstruction_metrics(model.weight, edges)
    assert m["map"] >= 0.85 and m["mean_rank"] <= 2.0, m
    assert (m["nodes"], m["pairs"]) == (223, 798)
    assert np.all((model.weight.numpy() ** 2).sum(1) < 1)


def test_tiny_tree_embedding_and_determinism(capsys):
    a = st.geometry.PoincareEmbedding(7, 2, curvature=-1.0, seed=3)
    assert a.weight.dtype == st.float64 and tuple(a.weight.shape) == (7, 2)
    assert np.abs(a.weight.numpy()).max() <= 1e-3
    a.fit(tree_edges(), epochs=300, lr=0.5, negatives=4, batch_size=2, verbose=True)
    printed = capsys.readouterr().out.splitlines()
    assert len(printed) == 300 and printed[0].startswith("epoch 1/300")
    assert st.geometry.reconstruction_metrics(a.weight, tree_edges()) == {
        "mean_rank": 1.0, "map": 1.0, "nodes": 6, "pairs": 10}
    b = st.geometry.PoincareEmbedding(7, 2, seed=3)
    b.fit([[1, 0], [2, 0], [3, 1], [3, 0], [4, 1], [4, 0], [5, 2], [5, 0], [6, 2], [6, 0]],  # nested lists work too
          epochs=300, lr=0.5, negatives=4, batch_size=2, threads=1)
    assert np.array_equal(a.weight.numpy(), b.weight.numpy())


@pytest.mark.parametrize("c", [-1.0, -0.5])
def test_metrics_match_numpy_reference(c):
    rng = np.random.default_rng(0)
    n = 40
    w = rng.uniform(-1, 1, size=(n, 3))
    w *= (rng.uniform(0.05, 0.95, size=(n, 1)) / np.sqrt(-c)) / np.linalg.norm(w, axis=1, keepdims=True)
    pairs = np.array([(u, v) for u in range(n) for v in range(n) if u != v and rng.random() < 0.15])
    got = st.geometry.reconstruction_metrics(st.tensor(w), st.tensor(pairs), curvature=c)
    rank, ap = reference_metrics(w, pairs, c)
    assert got["mean_rank"] == pytest.approx(rank, rel=1e-12)
    assert got["map"] == pytest.approx(ap, rel=1e-12)
    # float32 weights are accepted (ranked in float64)
    assert st.geometry.reconstruction_metrics(st.tensor(w.astype(np.float32)), st.tensor(pairs), c)["pairs"] == len(
        {tuple(p) for p in pairs})


def test_failing_fit_raises_and_changes_nothing():
    model = st.geometry.PoincareEmbedding(7, 3, seed=1)
    before = model.weight.numpy().copy()
    with pytest.raises(st.SpiralValueError, match=r"names node 9, outside \[0, 7\)"):
        model.fit(st.tensor([[1, 0], [9, 0]], dtype="int64"), epochs=2)
    with pytest.raises(st.ShapeError, match=r"\(E, 2\)"):
        model.fit(st.tensor([[1, 0, 2]], dtype="int64"), epochs=2)
    with pytest.raises(st.SpiralValueError, match="with itself"):
        model.fit(st.tensor([[2, 2]], dtype="int64"), epochs=2)
    with pytest.raises(st.SpiralValueError, match="lr must be positive"):
        model.fit(tree_edges(), epochs=2, lr=0.0)
    with pytest.raises(st.SpiralValueError, match="negatives"):
        model.fit(tree_edges(), epochs=2, negatives=0)

    def stop(epoch, loss, seconds):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        model.fit(tree_edges(), epochs=5, callback=stop)
    assert np.array_equal(model.weight.numpy(), before)
    with pytest.raises(st.SpiralValueError, match="curvature"):
        st.geometry.PoincareEmbedding(7, 3, curvature=1.0)
    with pytest.raises(st.ShapeError):
        st.geometry.reconstruction_metrics(st.zeros(7), tree_edges())
    with pytest.raises(st.SpiralValueError, match="outside"):
        st.geometry.reconstruction_metrics(model.weight, st.tensor([[0, 7]], dtype="int64"))


@needs_wordnet
def test_zoo_recipe_poincare_wordnet(capsys):
    from spiraltorch import model_zoo

    entry = model_zoo.get_model("poincare_wordnet")
    assert isinstance(entry, model_zoo.ModelEntry) and entry in model_zoo.all_models()
    assert entry.available and entry.task == "embedding" and "wordnet" in entry.requires
    assert model_zoo.recommend_model("poincare_wordnet").key == "poincare_wordnet"
    model_zoo.run_model("poincare_wordnet", ["--subtree", "feline.n.01", "--dim", "5", "--epochs", "40", "--lr", "1.0"])
    out = capsys.readouterr().out.strip().splitlines()
    assert out[0].startswith("wordnet feline.n.01: 60 nodes, 169 closure edges")
    last = out[-1]
    assert last.startswith("poincare_wordnet feline.n.01 dim 5: mean rank")
    assert float(last.split("MAP")[1].split()[0]) > 0.8


def test_training_options_euclidean_baseline_budget_and_resume(tmp_path, capsys):
    edges = tree_edges()
    # The paper's degree^0.75 burn-in negatives (default) vs uniform ones: different, each deterministic.
    runs = {}
    for sampling in ("degree", "uniform"):
        m = st.geometry.PoincareEmbedding(7, 2, seed=3)
        reports = m.fit(edges, epochs=30, lr=0.5, negatives=4, batch_size=2, burn_in_sampling=sampling)
        runs[sampling] = m.weight.numpy()
        assert [r["lr"] for r in reports[:10]] == [0.05] * 10 and reports[-1]["lr"] == 0.5
    assert not np.array_equal(runs["degree"], runs["uniform"])
    # Linear annealing after burn-in.
    m = st.geometry.PoincareEmbedding(7, 2, seed=3)
    lrs = [r["lr"] for r in m.fit(edges, epochs=20, lr=0.5, negatives=4, batch_size=2, schedule="linear",
                                   final_lr_fraction=0.1)]
    assert lrs[10] == pytest.approx(0.5) and lrs[-1] == pytest.approx(0.5 * (1 - 0.9 * 9 / 10))
    # A wall-clock budget stops early; the weights are published.
    m = st.geometry.PoincareEmbedding(7, 2, seed=3)
    reports = m.fit(edges, epochs=10 ** 7, lr=0.5, negatives=4, batch_size=2, max_seconds=0.05)
    assert 1 <= len(reports) < 10 ** 7 and not np.array_equal(m.weight.numpy(), runs["degree"] * 0)
    for bad in (dict(schedule="cosine"), dict(burn_in_sampling="zipf"), dict(max_seconds=-1.0),
                dict(final_lr_fraction=1.5)):
        with pytest.raises(ValueError):
            m.fit(edges, epochs=1, **bad)
    # The Euclidean baseline: d = |u - v|^2, plain SGD, ranked by Euclidean distance.
    e = st.geometry.PoincareEmbedding(7, 3, seed=3, geometry="euclidean")
    assert e.geometry == "euclidean" and st.geometry.PoincareEmbedding(7, 3).geometry == "poincare"
    e.fit(edges, epochs=300, lr=0.5, negatives=4, batch_size=2)
    w = e.weight.numpy()
    got = st.geometry.reconstruction_metrics(e.weight, edges, geometry="euclidean")
    # NumPy reference of the protocol with Euclidean distances.
    pairs = edges.numpy()
    anc = {u: set(pairs[pairs[:, 0] == u, 1]) for u in set(pairs[:, 0])}
    ranks, aps = [], []
    for u, a in anc.items():
        d = ((w - w[u]) ** 2).sum(1)
        others = [v for v in range(7) if v != u and v not in a]
        r = sorted(1 + sum(d[o] < d[v] for o in others) for v in a)
        ranks += r
        aps.append(np.mean([(i + 1) / (i + ri) for i, ri in enumerate(r)]))
    assert got["mean_rank"] == pytest.approx(np.mean(ranks)) and got["map"] == pytest.approx(np.mean(aps))
    with pytest.raises(ValueError, match="geometry"):
        st.geometry.reconstruction_metrics(e.weight, edges, geometry="sphere")
    # load_weight: checked, then used to continue.
    p = st.geometry.PoincareEmbedding(7, 2, seed=3)
    p.load_weight(st.tensor(runs["degree"], dtype=st.float64))
    np.testing.assert_array_equal(p.weight.numpy(), runs["degree"])
    with pytest.raises(ValueError, match="outside the ball"):
        p.load_weight(st.tensor(np.full((7, 2), 0.9), dtype=st.float64))
    with pytest.raises(st.ShapeError):
        p.load_weight(st.zeros(6, 2, dtype=st.float64))
    np.testing.assert_array_equal(p.weight.numpy(), runs["degree"])


@needs_wordnet
def test_zoo_recipe_budget_checkpoint_and_resume(tmp_path, capsys):
    from spiraltorch import model_zoo

    ckpt = str(tmp_path / "feline.npy")
    model_zoo.run_model("poincare_wordnet", ["--subtree", "feline.n.01", "--dim", "5", "--minutes", "0.02",
                                             "--threads", "1", "--checkpoint", ckpt, "--lr", "1.0"])
    out = capsys.readouterr().out.strip().splitlines()
    assert any(line.startswith("checkpoint: ") for line in out)
    assert out[-1].startswith("poincare_wordnet feline.n.01 dim 5: mean rank")
    saved = np.load(ckpt)
    assert saved.shape == (60, 5) and (np.linalg.norm(saved, axis=1) < 1).all()
    model_zoo.run_model("poincare_wordnet", ["--subtree", "feline.n.01", "--dim", "5", "--epochs", "5",
                                             "--resume", ckpt])
    out = capsys.readouterr().out.strip().splitlines()
    assert out[1] == f"resumed from {ckpt}" and "after 5 epochs" in out[-1]
