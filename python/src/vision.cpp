// spiraltorch._core.vision: vision streams of src/vision (chrono summaries, slice profiles, the
// bounded frame ring, the EMA volume and the online step). spiraltorch.vision wraps these.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cmath>

#include "convert.h"
#include "toolkit_args.h"
#include "spiraltorch/vision/stream.h"

namespace stpy {

namespace v = st::vision;

namespace {

nb::dict summary_dict(const v::ChronoSummary& s) {
  nb::dict d;
  d["frames"] = s.frames;
  d["duration"] = s.duration;
  d["latest_timestamp"] = s.latest_timestamp;
  d["mean_drift"] = s.mean_drift;
  d["mean_abs_drift"] = s.mean_abs_drift;
  d["drift_std"] = s.drift_std;
  d["mean_energy"] = s.mean_energy;
  d["energy_std"] = s.energy_std;
  d["mean_decay"] = s.mean_decay;
  d["min_energy"] = s.min_energy;
  d["max_energy"] = s.max_energy;
  return d;
}

v::ChronoSummary summary_from(nb::handle src) {
  v::ChronoSummary s;
  auto get = [&](const char* key, double fallback) -> double {
    if (nb::isinstance<nb::dict>(src)) {
      nb::dict d = nb::borrow<nb::dict>(src);
      return d.contains(key) ? nb::cast<double>(nb::float_(d[key])) : fallback;
    }
    return nb::hasattr(src, key) ? nb::cast<double>(nb::float_(src.attr(key))) : fallback;
  };
  s.frames = static_cast<int64_t>(get("frames", 0));
  s.duration = get("duration", 0);
  s.latest_timestamp = get("latest_timestamp", 0);
  s.mean_drift = get("mean_drift", 0);
  s.mean_abs_drift = get("mean_abs_drift", 0);
  s.drift_std = get("drift_std", 0);
  s.mean_energy = get("mean_energy", 0);
  s.energy_std = get("energy_std", 0);
  s.mean_decay = get("mean_decay", 0);
  s.min_energy = get("min_energy", 0);
  s.max_energy = get("max_energy", 0);
  return s;
}

// ChronoSnapshot's summary argument: a dict of the summary keys (or an object with them as attributes).
using SummaryArg = nb::typed<nb::handle, std::variant<nb::typed<nb::dict, std::string, double>, stub::Any>>;

double clean_dt(double dt) { return std::isfinite(dt) && dt > 0 ? dt : 0.0; }

nb::dict profile_dict(const v::SliceProfile& p) {
  nb::dict d;
  d["depth"] = p.depth;
  d["means"] = p.means;
  d["stds"] = p.stds;
  d["energies"] = p.energies;
  d["average_mean"] = p.average_mean;
  d["average_std"] = p.average_std;
  d["average_energy"] = p.average_energy;
  d["total_energy"] = p.total_energy;
  d["max_energy"] = p.max_energy;
  d["energy_entropy"] = p.energy_entropy;
  return d;
}

}  // namespace

void bind_vision(nb::module_& root) {
  nb::module_ m = root.def_submodule("vision", "Vision streams: chrono summaries, slice profiles, frame rings.");

  nb::class_<v::ChronoSnapshot>(
      m, "ChronoSnapshot", "A chrono summary of a frame stream (timestamps float64) and its mean frame interval dt.")
      .def("__init__",
           [](v::ChronoSnapshot* self, SummaryArg summary, double dt) {
    new (self) v::ChronoSnapshot{summary_from(summary), clean_dt(dt)};
  }, nb::arg("summary"), nb::kw_only(), nb::arg("dt") = 0.0,
           "From a dict (or object) with the summary keys; missing keys are 0, a negative or non-finite dt is 0.")
      .def_static("from_values",
                  [](int64_t frames, double duration, double latest_timestamp, double mean_drift, double mean_abs_drift,
                     double drift_std, double mean_energy, double energy_std, double mean_decay, double min_energy,
                     double max_energy, double dt) {
    return v::ChronoSnapshot{{frames, duration, latest_timestamp, mean_drift, mean_abs_drift, drift_std, mean_energy,
                              energy_std, mean_decay, min_energy, max_energy},
                             clean_dt(dt)};
  },
                  nb::kw_only(), nb::arg("frames"), nb::arg("duration"), nb::arg("latest_timestamp"),
                  nb::arg("mean_drift") = 0.0, nb::arg("mean_abs_drift") = 0.0, nb::arg("drift_std") = 0.0,
                  nb::arg("mean_energy") = 0.0, nb::arg("energy_std") = 0.0, nb::arg("mean_decay") = 0.0,
                  nb::arg("min_energy") = 0.0, nb::arg("max_energy") = 0.0, nb::arg("dt") = 0.0,
                  "A snapshot from the summary fields given one by one (a negative or non-finite dt becomes 0).")
      .def_static("from_stream",
                  [](std::vector<double> timestamps, std::vector<double> energies) {
    return v::chrono_summary(timestamps, energies);
  }, nb::arg("timestamps"), nb::arg("energies"),
                  "The summary of frames with these timestamps (non-decreasing) and energies (mean of squares).")
      .def_prop_ro("timestamp", &v::ChronoSnapshot::timestamp,
                   "summary['latest_timestamp'], or 0 when it is not finite.")
      .def_prop_ro("dt", [](const v::ChronoSnapshot& s) { return s.dt; }, "The mean frame interval (>= 0).")
      .def_prop_ro("frames", [](const v::ChronoSnapshot& s) { return s.summary.frames; },
                   "The number of frames summarised.")
      .def("summary", [](const v::ChronoSnapshot& s) { return summary_dict(s.summary); },
           nb::sig("def summary(self) -> dict[str, float]"),
           "{'frames', 'duration', 'latest_timestamp', 'mean_drift', 'mean_abs_drift', 'drift_std', "
           "'mean_energy', 'energy_std', 'mean_decay', 'min_energy', 'max_energy'}.")
      .def("merge", &v::ChronoSnapshot::merge, nb::arg("other"),
           "Both snapshots pooled as one stream (frame-weighted means, pooled stds).")
      .def("to_dict",
           [](const v::ChronoSnapshot& s) {
    nb::dict d;
    d["timestamp"] = s.timestamp();
    d["dt"] = s.dt;
    d["summary"] = summary_dict(s.summary);
    return d;
  }, nb::sig("def to_dict(self) -> dict[str, float | dict[str, float]]"), "{'timestamp', 'dt', 'summary': summary()}.")
      .def("__repr__", [](const v::ChronoSnapshot& s) {
    return "ChronoSnapshot(frames=" + std::to_string(s.summary.frames) +
           ", timestamp=" + std::to_string(s.timestamp()) + ", dt=" + std::to_string(s.dt) + ")";
  });

  m.def("slice_profile", [](const Tensor& volume) -> AnyDict { return profile_dict(v::slice_profile(volume)); },
        nb::arg("volume"),
        "Per-slice means, stds and energies of a (depth, ...) volume and their aggregates (entropy in bits).");

  nb::class_<v::FrameAggregator>(m, "FrameAggregator",
                                 "The newest max_depth slices of a stream and their chrono summary.")
      .def(nb::init<std::optional<int64_t>>(), nb::arg("max_depth") = nb::none())
      .def_prop_rw("max_depth", &v::FrameAggregator::max_depth, &v::FrameAggregator::set_max_depth,
                   "The most slices kept (None: unbounded); setting it trims the oldest. ValueError unless > 0.")
      .def("extend",
           [](v::FrameAggregator& a, const Tensor& volume, double timestamp, std::optional<v::ChronoSnapshot> chrono) {
    a.extend(volume, timestamp, chrono);
  }, nb::arg("volume"), nb::arg("timestamp"), nb::arg("chrono") = nb::none(),
           "Appends the slices of a (D, H, W) volume taken at timestamp (with the frame's own chrono snapshot "
           "when given), then drops the oldest beyond max_depth. ShapeError when the slice shape differs from the "
           "slices held.")
      .def("prune_oldest", &v::FrameAggregator::prune_oldest, nb::arg("keep"),
           "Keeps the newest keep slices (0 clears).")
      .def("clear", &v::FrameAggregator::clear, "Drops every slice (frames_seen is kept).")
      .def_prop_ro("depth", &v::FrameAggregator::depth, "The number of slices held.")
      .def_prop_ro("frames_seen", &v::FrameAggregator::frames_seen, "Frames passed to extend() so far.")
      .def_prop_ro("slice_shape",
                   [](const v::FrameAggregator& a) {
    if (a.empty()) return nb::object(nb::none());
    return make_size(a.slice_shape());
  }, nb::sig("def slice_shape(self) -> tuple[int, ...] | None"), "(H, W) of the slices held, or None when empty.")
      .def("volume", &v::FrameAggregator::volume,
           "The held slices stacked (depth, H, W) float32; ValueError when empty.")
      .def("chrono", &v::FrameAggregator::chrono,
           "The chrono snapshot of the frames whose slices are held (None when empty).");

  nb::class_<v::VisionVolume>(m, "VisionVolume",
                              "An EMA (depth, height, width) volume with window-weighted projection.")
      .def(nb::init<int64_t, int64_t, int64_t, double, std::string, int64_t>(), nb::arg("depth"), nb::arg("height"),
           nb::arg("width"), nb::arg("alpha") = 0.2, nb::arg("window") = "hann", nb::arg("temporal") = 4)
      .def_prop_ro("depth", &v::VisionVolume::depth, "Slices of the volume.")
      .def_prop_ro("height", &v::VisionVolume::height, "Rows of each slice.")
      .def_prop_ro("width", &v::VisionVolume::width, "Columns of each slice.")
      .def_prop_ro("alpha", &v::VisionVolume::alpha, "The EMA rate.")
      .def_prop_ro("window", &v::VisionVolume::window,
                   "The slice window of project(): 'hann', 'hamming', 'blackman', 'gaussian' or 'none'.")
      .def_prop_ro("temporal", &v::VisionVolume::temporal, "How many past energies energy_history() keeps.")
      .def_prop_ro("updates", &v::VisionVolume::updates, "The number of accumulate() updates so far (load() sets it).")
      .def_prop_ro("volume", [](const v::VisionVolume& s) { return s.volume().clone(); },
                   "A copy of the (depth, height, width) float32 volume.")
      .def("accumulate", &v::VisionVolume::accumulate, nb::arg("volume"), nb::arg("weight") = 1.0,
           "EMA update v <- (1 - a) v + a x with a = alpha * weight (the first update copies x; x may be (k, "
           "height, width) with k <= depth, updating the newest k slices). Returns the mean absolute voxel "
           "change. ShapeError for another shape, ValueError for weight < 0 or a > 1.")
      .def("project", &v::VisionVolume::project, nb::kw_only(), nb::arg("normalise") = true,
           "The window-weighted sum over slices, (height, width) float32; normalise divides by the max |value|.")
      .def("energy", &v::VisionVolume::energy, "The sum of squares of the volume.")
      .def("energy_history",
           [](const v::VisionVolume& s) {
    return std::vector<double>(s.energy_history().begin(), s.energy_history().end());
  }, "energy() after each of the last `temporal` updates, oldest first.")
      .def("window_weights", &v::VisionVolume::window_weights,
           "The per-slice weights of project() (floored at 1e-3; all 1 for 'none' or depth 1).")
      .def("reset", &v::VisionVolume::reset, "Zeroes the volume, the update count and the energy history.")
      .def("load", &v::VisionVolume::load, nb::arg("volume"), nb::arg("updates"),
           "Restores a checkpoint: the (depth, height, width) volume and the update count.");

  m.def("online_step",
        [](v::VisionVolume& vision, const Tensor& payload, double weight, st::zspace::ZSpaceTrainer* trainer) {
    const v::OnlineStep s = v::online_step(vision, payload, weight, trainer);
    nb::dict d;
    d["energy"] = s.energy;
    d["change"] = s.change;
    if (s.loss)
      d["loss"] = *s.loss;
    else
      d["loss"] = nb::none();
    nb::dict metrics;
    for (const auto& [k, val] : s.metrics.values()) metrics[k.c_str()] = val;
    if (s.metrics.gradient()) metrics["gradient"] = *s.metrics.gradient();
    d["metrics"] = metrics;
    d["z_state"] = s.z;
    return d;
  },
        nb::sig("def online_step(vision: VisionVolume, payload: spiraltorch._core.Tensor, weight: float = 1.0, "
                "trainer: spiraltorch._core.zspace.ZSpaceTrainer | None = None) -> dict[str, typing.Any]"),
        nb::arg("vision"), nb::arg("payload"), nb::arg("weight") = 1.0, nb::arg("trainer").none() = nb::none(),
        "Accumulates payload into vision and, with a trainer, steps it on the default metrics (a heuristic: speed = "
        "mean |voxel change|, memory = mean slice energy, stability = mean slice std, drs = max |projection|, "
        "gradient = row means of the normalised projection pooled into z_dim bands, centred). Returns {energy, change, "
        "loss, metrics, z_state}.");
}

}  // namespace stpy
