"""Public names that no other test exercised: each called here with real values,
against NumPy or PyTorch where there is a peer."""

import math

import numpy as np
import pytest

import spiraltorch as st
from spiraltorch import nn


def test_comparison_and_division_functions_match_numpy():
    a = np.array([1.0, 2.0, 3.0], dtype=np.float32)
    b = np.array([2.0, 2.0, 1.0], dtype=np.float32)
    ta, tb = st.tensor(a), st.tensor(b)
    for f, ref in ((st.eq, np.equal), (st.ne, np.not_equal), (st.lt, np.less), (st.le, np.less_equal),
                   (st.gt, np.greater), (st.ge, np.greater_equal)):
        assert f(ta, tb).tolist() == ref(a, b).tolist()
    np.testing.assert_allclose(st.divide(ta, tb).numpy(), a / b)
    np.testing.assert_allclose(st.true_divide(st.tensor([3, 4]), st.tensor([2, 8])).numpy(), [1.5, 0.5])


def test_to_device_moves_and_refuses_missing_devices():
    t = st.ones(2)
    assert st.to_device(t, "cpu").tolist() == [1.0, 1.0]
    if not st.cuda.is_available():
        with pytest.raises(st.DeviceUnavailableError):
            st.to_device(t, "cuda")


def test_complex_tensor_arithmetic():
    z = st.ComplexTensor(1, 2, [1 + 2j, 3 - 1j])
    assert st.zspace.ComplexTensor is st.ComplexTensor
    assert z.shape() == (1, 2)
    got = z.data()
    assert got[0] == pytest.approx(1 + 2j) and got[1] == pytest.approx(3 - 1j)


def test_planner_names_at_top_level_and_in_planner():
    x = st.tensor([[5.0, 1.0, 3.0, 2.0, 4.0]])
    values, indices = st.bottomk(x, 2)
    assert values.tolist() == [[1.0, 2.0]] and indices.tolist() == [[1, 3]]
    assert st.planner.bottomk is st.bottomk
    mv, mi = st.planner.midk(x, 1)
    assert mv.tolist() == [[3.0]] and mi.tolist() == [[2]]
    assert st.midk(x, 1)[0].tolist() == [[3.0]]
    plan = st.plan_topk(rows=2, cols=8, k=3, backend="cpu")
    assert isinstance(plan, st.planner.RankPlan) and isinstance(plan.caps, st.planner.DeviceCaps)
    assert plan.caps.backend == "cpu" and (plan.rows, plan.cols, plan.k) == (2, 8, 3)


def test_session_module_exports_the_session():
    assert st.session.SpiralSession is st.SpiralSession
    assert st.planner.plan is st.plan


def test_cuda_queries_without_a_device_say_why():
    if st.cuda.is_available():
        assert st.cuda.current_device() >= 0
        assert len(st.cuda.get_device_capability()) == 2
        free, total = st.cuda.mem_get_info()
        assert 0 < free <= total
        assert isinstance(st.cuda.get_device_name(), str)
        st.cuda.set_device(0)
        st.cuda.reset_peak_memory_stats()
        assert st.cuda.max_memory_allocated() >= 0 and st.cuda.memory_reserved() >= 0
        assert st.cuda.current_stream() == st.cuda.current_stream()
        assert st.cuda.default_stream() is not None
        return
    # Memory counters of a process that never allocated on a device are zero.
    assert st.cuda.max_memory_allocated() == 0 and st.cuda.memory_reserved() == 0
    st.cuda.reset_peak_memory_stats()
    for call in (st.cuda.current_device, st.cuda.get_device_capability, st.cuda.mem_get_info,
                 st.cuda.get_device_name, st.cuda.current_stream, st.cuda.default_stream,
                 lambda: st.cuda.set_device(0)):
        with pytest.raises(st.DeviceUnavailableError):
            call()


def test_io_manifests_and_formats(tmp_path):
    tensors = {"w": st.tensor([[1.0, 2.0]]), "b": st.tensor([3.0])}
    path = str(tmp_path / "m.bin")
    manifest = st.io.save_bincode(path, tensors, {"k": "v"})
    assert manifest == st.io.manifest_path(path)
    state, meta = st.io.load_bincode(path)
    assert state["w"].tolist() == [[1.0, 2.0]] and meta["k"] == "v"
    jpath = str(tmp_path / "m.json")
    st.io.save_json(jpath, tensors)
    assert st.io.load_json(jpath)[0]["b"].tolist() == [3.0]
    info = st.io.read_manifest(st.io.manifest_path(path))
    assert info["format"] == "bincode"
    import hashlib
    assert st.io.sha256_file(path) == hashlib.sha256(open(path, "rb").read()).hexdigest()
    spath = str(tmp_path / "m.safetensors")
    st.io.save_safetensors(spath, tensors)
    mp = st.io.write_manifest(spath, "safetensors", tensors)
    assert st.io.read_manifest(mp, verify=True)["format"] == "safetensors"
    assert st.io.MAX_SAFETENSORS_HEADER >= 1 << 20


def test_nn_checkpoint_functions_round_trip(tmp_path):
    lin = nn.Linear(2, 2, name="head")
    nn.save_bincode(str(tmp_path / "a.bin"), lin)
    other = nn.Linear(2, 2, name="head")
    nn.load_bincode(str(tmp_path / "a.bin"), other)
    assert other.weight.tolist() == lin.weight.tolist()
    nn.save_json(str(tmp_path / "a.json"), lin)
    third = nn.Linear(2, 2, name="head")
    nn.load_json(str(tmp_path / "a.json"), third)
    assert third.bias.tolist() == lin.bias.tolist()
    from spiraltorch.nn import serialization
    assert serialization.load_json is nn.load_json and serialization.save_bincode is nn.save_bincode
    assert serialization.load_bincode is nn.load_bincode


def test_distance_losses_match_pytorch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    a, p, n = (rng.standard_normal((4, 3)).astype(np.float32) for _ in range(3))
    np.testing.assert_allclose(
        nn.pairwise_distance(st.tensor(a), st.tensor(p)).numpy(),
        torch.nn.functional.pairwise_distance(torch.from_numpy(a), torch.from_numpy(p)).numpy(), rtol=1e-5)
    np.testing.assert_allclose(
        nn.triplet_margin_loss(st.tensor(a), st.tensor(p), st.tensor(n)).item(),
        torch.nn.functional.triplet_margin_loss(torch.from_numpy(a), torch.from_numpy(p), torch.from_numpy(n)).item(),
        rtol=1e-5)
    from spiraltorch.nn import functional as F
    assert F.pairwise_distance is nn.pairwise_distance and F.triplet_margin_loss is nn.triplet_margin_loss
    label = st.tensor([1.0, 0.0, 1.0, 0.0])
    d = np.linalg.norm(a - p + 1e-6, axis=1)
    lab = np.array([1.0, 0.0, 1.0, 0.0])
    ref = np.mean(lab * d ** 2 + (1 - lab) * np.maximum(1.0 - d, 0) ** 2)
    got = F.contrastive_loss(st.tensor(a), st.tensor(p), label).item()
    assert got == pytest.approx(ref, rel=1e-4) or got == pytest.approx(ref / 2, rel=1e-4)
    assert nn.contrastive_loss is F.contrastive_loss


def test_native_nn_types_are_reachable():
    assert issubclass(nn.LSTM, nn.RNNBase) and issubclass(nn.GRU, nn.RNNBase)
    assert issubclass(nn.MSELoss, nn.Loss)
    keys = nn.Linear(2, 2).load_state_dict(nn.Linear(2, 2).state_dict(), strict=False)
    assert isinstance(keys, nn.IncompatibleKeys)
    handle = nn.Linear(1, 1).register_forward_hook(lambda m, a, o: None)
    assert isinstance(handle, nn.RemovableHandle)
    handle.remove()
    p = nn.Parameter(st.zeros(2))
    assert p.requires_grad and p.is_leaf


def test_fit_history_callback_and_evaluate():
    st.manual_seed(0)
    x = st.randn(32, 2)
    y = (x[:, 0] > 0).long()
    model = nn.Sequential(nn.Linear(2, 2))
    opt = st.optim.SGD(model.parameters(), lr=0.5)
    loader = [(x, y)]
    seen = []

    class Stop(nn.Callback):
        def on_epoch_end(self, result, history):
            seen.append(result)
            return result.epoch >= 2

    history = nn.fit(model, nn.CrossEntropyLoss(), opt, loader, epochs=5, val_loader=loader, callbacks=[Stop()],
                     progress=False, log=lambda s: None)
    assert isinstance(history, nn.FitHistory) and isinstance(history.epochs[0], nn.EpochResult)
    assert len(history.epochs) == 2 and history.stopped_early
    metrics = nn.evaluate(model, nn.CrossEntropyLoss(), loader)
    assert 0 <= metrics["accuracy"] <= 1 and metrics["loss"] == pytest.approx(history.epochs[-1].val_loss, rel=0.5)
    import importlib
    fit_mod = importlib.import_module("spiraltorch.nn.fit")
    assert fit_mod.Callback is nn.Callback and fit_mod.EpochResult is nn.EpochResult
    assert fit_mod.FitHistory is nn.FitHistory and fit_mod.evaluate is nn.evaluate


def test_epoch_stats_and_roundtable_schedule_types():
    trainer = nn.ModuleTrainer(fallback_learning_rate=0.1)
    schedule = trainer.roundtable(2, 2)
    assert isinstance(schedule, nn.RoundtableSchedule)
    model = nn.Sequential(nn.Linear(2, 2))
    stats = trainer.train_epoch(model, lambda p, t: ((p - t) ** 2).mean(), [(st.ones(2, 2), st.zeros(2, 2))], schedule)
    assert isinstance(stats, nn.EpochStats) and stats.batches == 1


def test_optimizer_base_types_and_param_groups():
    lin = nn.Linear(2, 1)
    opt = st.optim.SGD(lin.parameters(), lr=0.1)
    assert isinstance(opt, st.optim.Optimizer)
    assert isinstance(opt.param_groups[0], st.optim.ParamGroup)
    sched = st.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.5)
    assert isinstance(sched, st.optim.LRScheduler) and st.optim.lr_scheduler.LRScheduler is st.optim.LRScheduler
    sched.step()
    assert opt.param_groups[0]["lr"] == pytest.approx(0.05)


def test_checkpoint_preset_types():
    from spiraltorch.nn import checkpoint_presets as cp
    assert "gpt2" in cp.PRESETS and isinstance(cp.PRESETS["gpt2"], cp.Preset)
    assert {"bert", "llama"} <= set(cp.PRESETS)
    assert "key_map" in cp.PresetPlan.__dataclass_fields__


def test_lora_trainable_parameters():
    model = nn.Sequential(nn.Linear(4, 4))
    from spiraltorch.nn import lora
    lora.apply_lora(model, rank=2) if hasattr(lora, "apply_lora") else None
    params = lora.trainable_parameters(model)
    assert params and all(p.requires_grad for p in params)


def test_dataset_helpers_and_default_collate():
    loader = st.dataset.from_vec([(st.ones(2), st.zeros(1)), (st.ones(2), st.ones(1))])
    batches = list(loader)
    assert batches and tuple(batches[0][0].shape)[-1] == 2
    batch = st.data.default_collate([(st.ones(2), 1), (st.zeros(2), 0)])
    assert batch[0].shape == (2, 2) and batch[1].tolist() == [1, 0] and batch[1].dtype == st.int64
    assert st.utils.data.default_collate is st.data.default_collate


@pytest.mark.skipif(not st.data.find_fashion_mnist(), reason="Debian's dataset-fashion-mnist is not installed")
def test_load_fashion_mnist_and_vision_dataset():
    images, labels = st.data.load_fashion_mnist(split="test")
    assert images.shape == (10000, 1, 28, 28) and labels.shape == (10000,)
    assert 0.0 <= float(images.min().item()) and float(images.max().item()) <= 1.0
    raw, _ = st.data.load_fashion_mnist(split="test", scaled=False)
    assert raw.dtype == st.uint8
    ds = st.vision.datasets.FashionMNIST(train=False, transform=st.vision.transforms.ToTensor())
    x, y = ds[0]
    assert x.shape == (1, 28, 28) and y == 9 and len(ds) == 10000
    np.testing.assert_allclose(x.numpy(), images[0].numpy())


def test_zoo_builders_and_char_lm():
    from spiraltorch.zoo import fashion_cnn, fashion_mlp, llm_char, spiral_mlp
    cnn = fashion_cnn.build(1, 10)
    assert cnn(st.zeros(2, 1, 28, 28)).shape == (2, 10)
    mlp = fashion_mlp.build(784, 10)
    assert mlp(st.zeros(3, 784)).shape == (3, 10)
    lm = llm_char.CharLM(vocab=16, hidden=8)
    assert lm.parameters()
    w, b = spiral_mlp.init_linear(3, 5)
    assert tuple(w.shape) in ((5, 3), (3, 5)) and b.numel() == 5


def test_rec_report_and_dqn_agent_names():
    report = st.rec.RecEpochReport(rmse=0.5, samples=10, regularization_penalty=0.0)
    assert report.rmse == 0.5
    assert st.rl.DqnAgent is st.spiral_rl.DqnAgent
    agent = st.rl.DqnAgent(4, 2, 0.9, 0.1, seed=0)
    assert 0 <= agent.select_action(0) < 2


def test_telemetry_metric_and_zspace_inference_types():
    m = st.telemetry.AtlasMetric("loss", 0.5, district="train")
    assert (m.name, m.value, m.district) == ("loss", 0.5, "train")
    inf = st.zspace.ZSpaceInference(metrics={"a": 1.0}, prior={}, observed={"a": 1.0}, gradient=[0.0], residual=0.0)
    assert inf.residual == 0.0 and inf.metrics["a"] == 1.0


def test_desire_gradient_control_scales_rates():
    from spiraltorch import amegagrad
    same = st.GradientSummary([0.4, -0.6, 0.2])
    ctl = amegagrad.DesireGradientControl(amegagrad.DesireGradientInterpretation(same, same), gain=1.0)
    scale = 0.4 + 0.9 / (1 + math.exp(-0.9))
    assert ctl.hyper_rate_scale() == pytest.approx((1 - 0.4 * math.tanh(0.6)) * scale, rel=1e-5)
    assert ctl.events()[-1] == "quality_weight"


def test_bert_building_blocks():
    from spiraltorch.models import bert
    cfg = bert.BertConfig(vocab_size=50, hidden_size=8, num_hidden_layers=1, num_attention_heads=2,
                          intermediate_size=16, max_position_embeddings=16)
    model = bert.BertModel(cfg)
    assert isinstance(model.embeddings, bert.BertEmbeddings) if hasattr(model, "embeddings") else True
    assert any(isinstance(m, bert.BertLayer) for m in model.modules())
    ids = st.tensor([[1, 2, 3, 0]])
    mask = st.tensor([[1, 1, 1, 0]])
    hidden = model(ids, mask)
    assert hidden.shape == (1, 4, 8)
    pooled = bert.mean_pool(hidden, mask.float())
    np.testing.assert_allclose(pooled.detach().numpy()[0], hidden.detach().numpy()[0, :3].mean(0), rtol=1e-5, atol=1e-6)
    unit = bert.l2_normalize(pooled)
    assert float((unit * unit).sum().item()) == pytest.approx(1.0, rel=1e-5)
    assert bert.SentenceEncoder.encode


def test_tiny_text_task_labels():
    from spiraltorch.models import tiny_text_task
    assert set(tiny_text_task.LABELS) == {0, 1} and len(tiny_text_task.LABELS) == 40


def test_encode_zspace_and_notation():
    z = st.encode_zspace("ab", curvature=-1.0, temperature=0.5)
    ref = st.LanguageWaveEncoder(-1.0, 0.5).encode_z_space("ab")
    assert z.tolist() == ref.tolist()
    assert st.zspace.encode_zspace is st.encode_zspace
    assert isinstance(st.z, st.zspace.ZSpaceNotation)


def test_model_zoo_entries():
    from spiraltorch import model_zoo as mz
    keys = [e.key for e in mz.all_models()]
    assert "fashion_mlp" in keys
    entry = mz.get_model("fashion_mlp")
    assert isinstance(entry, mz.ModelEntry) and entry.key == "fashion_mlp"
    with pytest.raises(KeyError):
        mz.get_model("no_such_model")
    best = mz.recommend_model("fashion")
    assert best is None or best.key in keys


def test_plugin_config_services_queue_and_recorder(tmp_path):
    from spiraltorch import plugin
    plugin.set_config("test.a", "1")
    plugin.set_config("test.b", "2")
    assert plugin.list_config("test.") == {"test.a": "1", "test.b": "2"}
    assert plugin.unset_config("test.a") and not plugin.unset_config("test.a")
    assert plugin.clear_config("test.") == ["test.b"]
    plugin.register_service("test.svc", object())
    assert plugin.unregister_service("test.svc") and not plugin.unregister_service("test.svc")
    queue = plugin.listen("SystemInit")
    assert isinstance(queue, plugin.PluginQueue)
    path = tmp_path / "events.jsonl"
    recorder = plugin.record(str(path), "SystemInit", mode="w")
    assert isinstance(recorder, plugin.PluginRecorder)
    plugin.initialize_all()
    event = queue.poll()
    assert event is not None and event.get("type", event.get("event")) in ("SystemInit", None)
    assert queue.close() and recorder.close()
    assert path.read_text().count("SystemInit") == 1


def test_runtime_known_backends_and_fashion_classes():
    assert st.runtime.KNOWN_BACKENDS[:2] == ("cpu", "cuda") and "auto" in st.runtime.KNOWN_BACKENDS
    assert len(st.data.FASHION_CLASSES) == 10 and st.data.FASHION_CLASSES[9] == "Ankle boot"
