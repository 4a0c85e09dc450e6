"""``SummaryWriter`` with ``torch.utils.tensorboard``'s method names, writing TensorBoard's event
files (TFRecords of ``Event`` protobufs, see ``_records``) without TensorFlow, TensorBoard or the
protobuf package: ``tensorboard --logdir runs`` shows them, and TensorBoard's ``EventAccumulator``
reads them back.

    from spiraltorch.utils.tensorboard import SummaryWriter

    with SummaryWriter("runs/mlp") as w:
        history = nn.fit(model, loss, opt, loader, epochs=3, writer=w)
        w.add_images("inputs", x[:16])            # (N, C, H, W) in [0, 1]
        w.add_histogram("head.weight", model.head.weight, global_step=3)

Tensors may be SpiralTorch tensors, NumPy arrays, PyTorch tensors or nested lists. Images are
PNG-encoded by the C++ canvas encoder (``spiraltorch._core.canvas.encode_png``, always RGBA);
histograms use PyTorch's default bucket limits (``bins="tensorflow"``: 0 and +-1e-12 * 1.1**k
below 1e20) and its trimming to the occupied range, computed with SpiralTorch tensor ops.
``add_embedding`` writes the projector's ``tensors.tsv``, ``metadata.tsv`` (and ``sprite.png``)
under ``<log_dir>/<step:05d>/<tag>/`` and lists them in ``<log_dir>/projector_config.pbtxt``;
Poincare-ball or Z-space points (a tensor, or an object with a ``weight`` such as
``st.geometry.PoincareEmbedding``) are written as their ball coordinates.

``nn.fit``, ``nn.ModuleTrainer`` and ``ZSpaceTrainer`` take ``writer=`` and log to it.
"""

from __future__ import annotations

import itertools
import math
import os
import socket
import threading
import time
from datetime import datetime
from typing import Any, Dict, List, Optional, Sequence, Union

from ... import _core
from . import _records as rec

__all__ = ["SummaryWriter", "default_bins", "histogram_proto"]

_D = _core.dtype

_FILE_IDS = itertools.count()


def default_bins() -> List[float]:
    """PyTorch's default histogram edges (``bins="tensorflow"``): -b[::-1] + [0] + b with
    b = 1e-12, 1.1e-12, ... (times 1.1) below 1e20."""
    v, pos = 1e-12, []
    while v < 1e20:
        pos.append(v)
        v *= 1.1
    return [-b for b in reversed(pos)] + [0.0] + pos


_DEFAULT_BINS = default_bins()
_DEFAULT_K = (len(_DEFAULT_BINS) - 1) // 2  # how many positive edges


# ---------------------------------------------------------------- conversions


def _tensor(x: Any, who: str) -> Any:
    """``x`` as a detached CPU SpiralTorch tensor (SpiralTorch, NumPy, PyTorch, DLPack, lists)."""
    if isinstance(x, _core.Tensor):
        t = x.detach()
    else:
        if hasattr(x, "detach") and callable(x.detach):  # a PyTorch tensor
            x = x.detach()
            if hasattr(x, "cpu"):
                x = x.cpu()
        t = None
        if hasattr(x, "__dlpack__"):
            try:
                t = _core.from_dlpack(x)
            except Exception:  # noqa: BLE001 - an exporter we cannot share: copy below
                t = None
        if t is None:
            try:
                t = _core.tensor(x)
            except Exception as e:  # noqa: BLE001
                raise TypeError(f"SummaryWriter.{who}: cannot convert {type(x).__name__} to a tensor ({e})") from e
    if str(t.device) != "cpu":
        t = t.to("cpu")
    return t


def _scalar(v: Any, who: str) -> float:
    if hasattr(v, "item") and callable(v.item):
        v = v.item()
    try:
        return float(v)
    except (TypeError, ValueError) as e:
        raise TypeError(f"SummaryWriter.{who}: expected a number, got {type(v).__name__}") from e


def _step(global_step: Any) -> int:
    return 0 if global_step is None else int(_scalar(global_step, "global_step"))


# ---------------------------------------------------------------- histograms


def _bucket_indices(x: Any, edges: Any, first_guess: Any) -> Any:
    """np.histogram's bucket of each x given sorted ``edges`` (B + 1, float64) and a guess at most
    one bucket off: bucket i holds edges[i] <= x < edges[i + 1], the last one also x == edges[B]."""
    nb = edges.shape[0] - 1
    b = first_guess.clamp(0, nb - 1)
    for _ in range(2):
        b = (b - (edges[b] > x).to(_D.int64)).clamp(0, nb - 1)
        up = (edges[b + 1] <= x) & (b < nb - 1)
        b = b + up.to(_D.int64)
    return b


def _histogram_counts(x: Any, bins: Any) -> tuple:
    """(counts, edges) as np.histogram(x, bins) for a 1-D float64 tensor of finite values; bins is
    "tensorflow" (PyTorch's default edges), a bucket count or a sequence of increasing edges."""
    f64, i64 = _D.float64, _D.int64
    if isinstance(bins, str):
        if bins != "tensorflow":
            raise ValueError(f"SummaryWriter.add_histogram: bins must be 'tensorflow', an int or a sequence of "
                             f"edges, got {bins!r}")
        edges_list = _DEFAULT_BINS
        edges = _core.tensor(edges_list, dtype=f64)
        a = x.abs()
        k = ((a / 1e-12).clamp(1.0, math.inf).log() / math.log(1.1)).floor().to(i64)
        tiny = a < 1e-12
        pos = _core.where(tiny, _core.full_like(k, _DEFAULT_K), k + (_DEFAULT_K + 1))
        neg = _core.where(tiny, _core.full_like(k, _DEFAULT_K - 1), (_DEFAULT_K - 2) - k)
        guess = _core.where(x >= 0, pos, neg)
        b = _bucket_indices(x, edges, guess)
    elif isinstance(bins, int) and not isinstance(bins, bool):
        if bins < 1:
            raise ValueError(f"SummaryWriter.add_histogram: bins must be positive, got {bins}")
        lo, hi = float(x.min().item()), float(x.max().item())
        if lo == hi:
            lo, hi = lo - 0.5, hi + 0.5
        step = (hi - lo) / bins
        edges_list = [i * step + lo for i in range(bins)] + [hi]
        edges = _core.tensor(edges_list, dtype=f64)
        guess = ((x - lo) * (bins / (hi - lo))).floor().to(i64)
        b = _bucket_indices(x, edges, guess)
    else:
        edges_list = [float(e) for e in _tensor(bins, "add_histogram").reshape(-1).to(f64).tolist()]
        if len(edges_list) < 2 or any(b2 < b1 for b1, b2 in zip(edges_list, edges_list[1:])):
            raise ValueError("SummaryWriter.add_histogram: bin edges must be at least two increasing values")
        edges = _core.tensor(edges_list, dtype=f64)
        n = x.shape[0]
        chunk = max(1, (1 << 22) // len(edges_list))
        parts = []
        for s in range(0, n, chunk):
            xc = x[s:s + chunk]
            parts.append((edges.unsqueeze(0) <= xc.unsqueeze(1)).to(i64).sum(1) - 1)
        b = _core.cat(parts, 0).clamp(0, len(edges_list) - 2) if parts else _core.zeros((0,), dtype=i64)
    inside = (x >= edges_list[0]) & (x <= edges_list[-1])
    b = b[inside]
    counts = _core.scatter_add(_core.zeros((len(edges_list) - 1,), dtype=f64), 0, b,
                               _core.ones((b.shape[0],), dtype=f64))
    return [float(c) for c in counts.tolist()], edges_list


def histogram_proto(values: Any, bins: Any = "tensorflow", max_bins: Optional[int] = None) -> bytes:
    """A serialized ``HistogramProto`` of ``values`` as PyTorch's ``make_histogram`` builds it:
    np.histogram's counts, optionally merged down to ``max_bins``, trimmed to the occupied buckets
    plus one empty bucket on the left, ``bucket_limit`` the right edges. Non-finite values are left
    out (``num`` counts the finite ones); ValueError when none is left."""
    x = _tensor(values, "add_histogram").reshape(-1).to(_D.float64)
    if x.shape[0]:
        x = x[x.isfinite()]
    if x.shape[0] == 0:
        raise ValueError("SummaryWriter.add_histogram: no finite values to histogram")
    counts, limits = _histogram_counts(x, bins)
    if max_bins is not None and len(counts) > max_bins:
        sub = len(counts) // max_bins
        rem = len(counts) % sub
        if rem:
            counts = counts + [0.0] * (sub - rem)
        counts = [sum(counts[i:i + sub]) for i in range(0, len(counts), sub)]
        limits = limits[:-1:sub] + [limits[-1]]
    occupied = [i for i, c in enumerate(counts) if c > 0]
    start, end = occupied[0], occupied[-1] + 1
    kept = counts[start - 1:end] if start > 0 else [0.0] + counts[:end]
    limits = limits[start:end + 1]
    return rec.histogram(float(x.min().item()), float(x.max().item()), float(x.shape[0]), float(x.sum().item()),
                         float((x * x).sum().item()), limits, kept)


# ---------------------------------------------------------------- images


def _grid(t: Any, ncols: int = 8) -> Any:
    """(N, C, H, W) images side by side, ``ncols`` to a row (fewer when N is smaller), zero-padded
    on the last row: (C, rows * H, cols * W), as PyTorch's make_grid for TensorBoard."""
    n, c, h, w = (int(s) for s in t.shape)
    if n == 0:
        raise ValueError("SummaryWriter.add_images: no images")
    cols = min(n, ncols)
    rows = -(-n // cols)
    if rows * cols > n:
        t = _core.cat([t, _core.zeros((rows * cols - n, c, h, w), dtype=t.dtype)], 0)
    return t.reshape(rows, cols, c, h, w).permute(2, 0, 3, 1, 4).reshape(c, rows * h, cols * w)


def _to_uint8(t: Any) -> Any:
    """PyTorch's scaling: uint8 as is, anything else times 255, clipped to [0, 255], truncated."""
    if t.dtype == _D.uint8:
        return t
    return (t.to(_D.float32) * 255.0).clamp(0.0, 255.0).to(_D.uint8)


def _rgba(hwc: Any) -> Any:
    """(H, W, C) uint8 with C = 1 (grey), 3 (RGB) or 4 (RGBA) as (H, W, 4) RGBA."""
    c = int(hwc.shape[2])
    if c not in (1, 3, 4):
        raise ValueError(f"SummaryWriter.add_image: images need 1, 3 or 4 channels, got {c}")
    if c == 4:
        return hwc.contiguous()
    alpha = _core.full((int(hwc.shape[0]), int(hwc.shape[1]), 1), 255, dtype=_D.uint8)
    rgb = _core.cat([hwc, hwc, hwc], 2) if c == 1 else hwc
    return _core.cat([rgb, alpha], 2).contiguous()


def _image_value(tag: str, img: Any, dataformats: str, who: str) -> bytes:
    t = _tensor(img, who)
    fmt = str(dataformats).upper()
    if len(set(fmt)) != len(fmt) or not set(fmt) <= set("NCHW") or not 2 <= len(fmt) <= 4 or \
            not set("HW") <= set(fmt) or (len(fmt) == 4) != ("N" in fmt) or (len(fmt) == 3 and "C" not in fmt):
        raise ValueError(f"SummaryWriter.{who}: dataformats must be a permutation of NCHW, CHW/HWC or HW, "
                         f"got {dataformats!r}")
    if t.ndim != len(fmt):
        raise ValueError(f"SummaryWriter.{who}: a tensor of shape {tuple(t.shape)} does not match "
                         f"dataformats {dataformats!r}")
    if len(fmt) == 4:
        hwc = _grid(t.permute(*[fmt.index(c) for c in "NCHW"])).permute(1, 2, 0)
    elif len(fmt) == 3:
        hwc = t.permute(*[fmt.index(c) for c in "HWC"])
    else:
        hwc = t.permute(*[fmt.index(c) for c in "HW"]).unsqueeze(2)
    rgba = _rgba(_to_uint8(hwc))
    h, w = int(rgba.shape[0]), int(rgba.shape[1])
    png = bytes(_core.canvas.encode_png(rgba))
    return rec.value(tag, image=rec.image(h, w, 4, png))


# ---------------------------------------------------------------- files


class _EventFile:
    """One events.out.tfevents.* file; records are buffered and flushed every ``max_queue``
    records, after ``flush_secs`` seconds (checked at each write), on flush() and close()."""

    def __init__(self, logdir: str, max_queue: int, flush_secs: float, filename_suffix: str = "") -> None:
        os.makedirs(logdir, exist_ok=True)
        name = (f"events.out.tfevents.{int(time.time()):010d}.{socket.gethostname()}.{os.getpid()}."
                f"{next(_FILE_IDS)}{filename_suffix}")
        self.path = os.path.join(logdir, name)
        self._file: Any = open(self.path, "wb")
        self._lock = threading.Lock()
        self._max_queue, self._flush_secs = max(1, int(max_queue)), float(flush_secs)
        self._pending, self._last_flush = 0, time.monotonic()
        self.write(rec.event(time.time(), file_version="brain.Event:2"))
        self.flush()

    def write(self, event: bytes) -> None:
        with self._lock:
            if self._file is None:
                raise ValueError(f"SummaryWriter: {self.path} is closed")
            self._file.write(rec.frame_record(event))
            self._pending += 1
            if self._pending >= self._max_queue or time.monotonic() - self._last_flush >= self._flush_secs:
                self._flush_locked()

    def _flush_locked(self) -> None:
        if self._file is not None:
            self._file.flush()
        self._pending, self._last_flush = 0, time.monotonic()

    def flush(self) -> None:
        with self._lock:
            self._flush_locked()

    def close(self) -> None:
        with self._lock:
            if self._file is not None:
                self._file.flush()
                self._file.close()
                self._file = None


def _pbtxt_str(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _encode_tag(tag: str) -> str:
    """PyTorch's directory name for an embedding tag: %, / and \\ escaped as %xx."""
    out = tag.replace("%", "%25").replace("/", "%2f").replace("\\", "%5c")
    if out in ("", ".", ".."):
        raise ValueError(f"SummaryWriter.add_embedding: tag {tag!r} cannot name a directory")
    return out


def _tsv_field(v: Any) -> str:
    return str(v).replace("\t", " ").replace("\r", " ").replace("\n", " ")


class SummaryWriter:
    """Writes TensorBoard event files to ``log_dir`` (default ``runs/<Mon DD_HH-MM-SS>_<host><comment>``,
    as PyTorch). ``purge_step`` marks a restart: TensorBoard drops the events of earlier files at
    or after that step. Records are flushed every ``max_queue`` records, when ``flush_secs`` have
    passed at a write, and on ``flush()``/``close()``; the writer is a context manager."""

    def __init__(self, log_dir: Optional[Union[str, os.PathLike]] = None, comment: str = "",
                 purge_step: Optional[int] = None, max_queue: int = 10, flush_secs: float = 120,
                 filename_suffix: str = "") -> None:
        if not log_dir:
            stamp = datetime.now().strftime("%b%d_%H-%M-%S")
            log_dir = os.path.join("runs", f"{stamp}_{socket.gethostname()}{comment}")
        self.log_dir = os.fspath(log_dir)
        self.purge_step = purge_step
        self.max_queue, self.flush_secs, self.filename_suffix = max_queue, flush_secs, filename_suffix
        self.default_bins = list(_DEFAULT_BINS)
        self._file: Optional[_EventFile] = None
        self._scalar_files: Dict[str, _EventFile] = {}
        self._embeddings: List[str] = []
        self._lock = threading.Lock()
        self._open()

    def _open(self) -> _EventFile:
        if self._file is None:
            self._file = _EventFile(self.log_dir, self.max_queue, self.flush_secs, self.filename_suffix)
            if self.purge_step is not None:
                self._file.write(rec.event(time.time(), int(self.purge_step), session_log_start=True))
                self.purge_step = None
        return self._file

    def get_logdir(self) -> str:
        """The directory the event file is in."""
        return self.log_dir

    @property
    def file_path(self) -> Optional[str]:
        """The current event file (None after close)."""
        return self._file.path if self._file is not None else None

    def _add(self, values: Sequence[bytes], global_step: Any = None, walltime: Optional[float] = None,
             file: Optional[_EventFile] = None) -> None:
        wall = time.time() if walltime is None else float(walltime)
        target = file if file is not None else self._open()
        target.write(rec.event(wall, _step(global_step), summary=rec.summary(values)))

    # ------------------------------------------------------------ scalars

    def add_scalar(self, tag: str, scalar_value: Any, global_step: Any = None, walltime: Optional[float] = None,
                   new_style: bool = False, double_precision: bool = False) -> None:
        """One scalar (``simple_value``; with ``new_style`` a scalar tensor of the 'scalars' plugin,
        float64 with ``double_precision``)."""
        v = _scalar(scalar_value, "add_scalar")
        if new_style:
            tensor = (rec.f_int(1, 2) + rec.f_bytes(2, b"") + rec.f_double(6, v)) if double_precision else \
                (rec.f_int(1, rec.DT_FLOAT) + rec.f_bytes(2, b"") + rec.f_float(5, v))
            self._add([rec.value(tag, tensor=tensor, metadata=rec.plugin_metadata("scalars"))], global_step, walltime)
        else:
            self._add([rec.value(tag, simple_value=v)], global_step, walltime)

    def add_scalars(self, main_tag: str, tag_scalar_dict: Dict[str, Any], global_step: Any = None,
                    walltime: Optional[float] = None) -> None:
        """Several scalars on one chart: each goes to the run ``<log_dir>/<main_tag>_<tag>`` under
        the tag ``main_tag`` (``/`` in main_tag written as ``_``), as PyTorch does."""
        wall = time.time() if walltime is None else float(walltime)
        for tag, v in tag_scalar_dict.items():
            path = os.path.join(self.log_dir, main_tag.replace("/", "_") + "_" + tag)
            with self._lock:
                f = self._scalar_files.get(path)
                if f is None:
                    f = self._scalar_files[path] = _EventFile(path, self.max_queue, self.flush_secs,
                                                              self.filename_suffix)
            self._add([rec.value(main_tag, simple_value=_scalar(v, "add_scalars"))], global_step, wall, file=f)

    # ------------------------------------------------------------ histograms

    def add_histogram(self, tag: str, values: Any, global_step: Any = None, bins: Any = "tensorflow",
                      walltime: Optional[float] = None, max_bins: Optional[int] = None) -> None:
        """A histogram of ``values`` (any shape): see ``histogram_proto``."""
        self._add([rec.value(tag, histo=histogram_proto(values, bins, max_bins))], global_step, walltime)

    def add_histogram_raw(self, tag: str, min: float, max: float, num: float, sum: float, sum_squares: float,
                          bucket_limits: Sequence[float], bucket_counts: Sequence[float], global_step: Any = None,
                          walltime: Optional[float] = None) -> None:
        """A histogram from its statistics and buckets (``bucket_limits`` the right edges)."""
        if len(bucket_limits) != len(bucket_counts):
            raise ValueError("SummaryWriter.add_histogram_raw: bucket_limits and bucket_counts differ in length")
        h = rec.histogram(min, max, num, sum, sum_squares, [float(v) for v in bucket_limits],
                          [float(v) for v in bucket_counts])
        self._add([rec.value(tag, histo=h)], global_step, walltime)

    # ------------------------------------------------------------ images and text

    def add_image(self, tag: str, img_tensor: Any, global_step: Any = None, walltime: Optional[float] = None,
                  dataformats: str = "CHW") -> None:
        """One image: float values in [0, 1] (scaled by 255) or uint8; 1 (grey), 3 (RGB) or 4 (RGBA)
        channels; ``dataformats`` CHW, HWC or HW."""
        self._add([_image_value(tag, img_tensor, dataformats, "add_image")], global_step, walltime)

    def add_images(self, tag: str, img_tensor: Any, global_step: Any = None, walltime: Optional[float] = None,
                   dataformats: str = "NCHW") -> None:
        """A batch of images as one grid, 8 to a row (``dataformats`` NCHW or NHWC)."""
        self._add([_image_value(tag, img_tensor, dataformats, "add_images")], global_step, walltime)

    def add_text(self, tag: str, text_string: str, global_step: Any = None, walltime: Optional[float] = None) -> None:
        """Text (Markdown in TensorBoard), under ``<tag>/text_summary`` as PyTorch writes it."""
        tensor = rec.string_tensor([str(text_string).encode("utf-8")])
        self._add([rec.value(tag + "/text_summary", tensor=tensor, metadata=rec.plugin_metadata("text"))],
                  global_step, walltime)

    # ------------------------------------------------------------ hparams

    def add_hparams(self, hparam_dict: Dict[str, Any], metric_dict: Dict[str, Any],
                    hparam_domain_discrete: Optional[Dict[str, List[Any]]] = None, run_name: Optional[str] = None,
                    global_step: Any = None) -> None:
        """One hyperparameter session for TensorBoard's HParams tab, in the run
        ``<log_dir>/<run_name>`` (default: the current time): the experiment (hparam and metric
        names), the session start (the values) and end (success), then each metric as a scalar.
        Values are bool, int, float, str or one-element tensors; None values are left out."""
        if not isinstance(hparam_dict, dict) or not isinstance(metric_dict, dict):
            raise TypeError("SummaryWriter.add_hparams: hparam_dict and metric_dict must be dicts")
        domains = hparam_domain_discrete or {}
        if not isinstance(domains, dict):
            raise TypeError("SummaryWriter.add_hparams: hparam_domain_discrete must be a dict")
        infos, values = [], []
        for k, v in hparam_dict.items():
            if v is None:
                continue
            if isinstance(v, bool):
                kind = rec.DATA_TYPE_BOOL
            elif isinstance(v, (int, float)):
                kind, v = rec.DATA_TYPE_FLOAT64, float(v)
            elif isinstance(v, str):
                kind = rec.DATA_TYPE_STRING
            elif hasattr(v, "item"):
                kind, v = rec.DATA_TYPE_FLOAT64, _scalar(v, "add_hparams")
            else:
                raise ValueError(f"SummaryWriter.add_hparams: {k!r} must be a bool, number, str or tensor, "
                                 f"got {type(v).__name__}")
            domain = domains.get(k)
            if domain is not None and (not isinstance(domain, list) or
                                       not all(isinstance(d, type(hparam_dict[k])) for d in domain)):
                raise TypeError(f"SummaryWriter.add_hparams: hparam_domain_discrete[{k!r}] must be a list of "
                                f"values of the type of hparam_dict[{k!r}]")
            infos.append(rec.hparam_info(k, kind, domain))
            values.append((k, v))
        meta = lambda data: rec.plugin_metadata("hparams", data)  # noqa: E731
        exp = rec.hparams_plugin_data(experiment=rec.experiment(infos, [rec.metric_info(k) for k in metric_dict]))
        ssi = rec.hparams_plugin_data(session_start_info=rec.session_start_info(values))
        sei = rec.hparams_plugin_data(session_end_info=rec.session_end_info(rec.STATUS_SUCCESS))
        run = os.path.join(self.log_dir, run_name or str(time.time()))
        f = _EventFile(run, self.max_queue, self.flush_secs, self.filename_suffix)
        try:
            for tag, content in (("_hparams_/experiment", exp), ("_hparams_/session_start_info", ssi),
                                 ("_hparams_/session_end_info", sei)):
                self._add([rec.value(tag, tensor=rec.NULL_TENSOR, metadata=meta(content))], global_step, file=f)
            for k, v in metric_dict.items():
                self._add([rec.value(k, simple_value=_scalar(v, "add_hparams"))], global_step, file=f)
        finally:
            f.close()

    # ------------------------------------------------------------ embeddings

    def add_embedding(self, mat: Any, metadata: Optional[Sequence[Any]] = None, label_img: Any = None,
                      global_step: Any = None, tag: str = "default",
                      metadata_header: Optional[Sequence[str]] = None) -> None:
        """Points for TensorBoard's projector: ``mat`` (N, D) (a tensor or an object with a
        ``weight``, such as a PoincareEmbedding) to ``tensors.tsv``, ``metadata`` (N labels, or N
        rows under ``metadata_header``) to ``metadata.tsv``, ``label_img`` (N, C, H, W) to a square
        ``sprite.png``, in ``<log_dir>/<step:05d>/<tag>/``; the embedding is added to
        ``<log_dir>/projector_config.pbtxt``."""
        if not isinstance(mat, _core.Tensor) and hasattr(mat, "weight") and not hasattr(mat, "__dlpack__"):
            mat = mat.weight
        t = _tensor(mat, "add_embedding")
        if t.ndim != 2:
            raise ValueError(f"SummaryWriter.add_embedding: mat must be 2-D (N, D), got shape {tuple(t.shape)}")
        n = int(t.shape[0])
        step = _step(global_step)
        subdir = f"{step:05d}/{_encode_tag(tag)}"
        path = os.path.join(self.log_dir, *subdir.split("/"))
        os.makedirs(path, exist_ok=True)
        lines = ["\t".join(repr(float(v)) for v in row) for row in t.to(_D.float64).tolist()]
        _write_text(os.path.join(path, "tensors.tsv"), "\n".join(lines) + "\n")
        entry = [f"  tensor_name: {_pbtxt_str(f'{tag}:{step:05d}')}", f"  tensor_path: {_pbtxt_str(subdir + '/tensors.tsv')}"]
        if metadata is not None:
            rows = list(metadata)
            if len(rows) != n:
                raise ValueError(f"SummaryWriter.add_embedding: {len(rows)} metadata rows for {n} points")
            if metadata_header:
                if any(len(r) != len(metadata_header) for r in rows):
                    raise ValueError("SummaryWriter.add_embedding: each metadata row needs one field per header column")
                text = ["\t".join(_tsv_field(e) for e in r) for r in [list(metadata_header)] + rows]
            else:
                text = [_tsv_field(r) for r in rows]
            _write_text(os.path.join(path, "metadata.tsv"), "\n".join(text) + "\n")
            entry.append(f"  metadata_path: {_pbtxt_str(subdir + '/metadata.tsv')}")
        if label_img is not None:
            imgs = _tensor(label_img, "add_embedding")
            if imgs.ndim != 4 or int(imgs.shape[0]) != n:
                raise ValueError(f"SummaryWriter.add_embedding: label_img must be (N, C, H, W) with N = {n}, "
                                 f"got {tuple(imgs.shape)}")
            h, w = int(imgs.shape[2]), int(imgs.shape[3])
            side = math.ceil(math.sqrt(n))
            grid = _grid(imgs, ncols=side)  # (C, rows * H, side * W)
            c, gh, gw = (int(s) for s in grid.shape)
            if gh < gw:  # a square sprite: empty rows at the bottom
                grid = _core.cat([grid, _core.zeros((c, gw - gh, gw), dtype=grid.dtype)], 1)
            rgba = _rgba(_to_uint8(grid.permute(1, 2, 0)))
            _write_bytes(os.path.join(path, "sprite.png"), bytes(_core.canvas.encode_png(rgba)))
            entry.append(f"  sprite {{\n    image_path: {_pbtxt_str(subdir + '/sprite.png')}\n"
                         f"    single_image_dim: {w}\n    single_image_dim: {h}\n  }}")
        with self._lock:
            self._embeddings.append("embeddings {\n" + "\n".join(entry) + "\n}\n")
            _write_text(os.path.join(self.log_dir, "projector_config.pbtxt"), "".join(self._embeddings))

    # ------------------------------------------------------------ lifetime

    def flush(self) -> None:
        """Writes everything buffered to disk."""
        for f in [self._file, *self._scalar_files.values()]:
            if f is not None:
                f.flush()

    def close(self) -> None:
        """Flushes and closes the files; a later add_* opens a new event file in the same log_dir."""
        with self._lock:
            files = [self._file, *self._scalar_files.values()]
            self._file, self._scalar_files = None, {}
        for f in files:
            if f is not None:
                f.close()

    def __enter__(self) -> "SummaryWriter":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"SummaryWriter(log_dir={self.log_dir!r})"


def _write_bytes(path: str, data: bytes) -> None:
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, path)


def _write_text(path: str, text: str) -> None:
    _write_bytes(path, text.encode("utf-8"))
