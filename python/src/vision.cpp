// spiraltorch._core.vision: vision streams of src/vision (chrono summaries, slice profiles, the
// bounded frame ring, the EMA volume and the online step). spiraltorch.vision wraps these.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cmath>

#include "convert.h"
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

  nb::class_<v::ChronoSnapshot>(m, "ChronoSnapshot",
                                "A chrono summary of a frame stream (timestamps float64) and its mean frame interval dt.")
      .def("__init__", [](v::ChronoSnapshot* self, nb::handle summary, double dt) {
        new (self) v::ChronoSnapshot{summary_from(summary), clean_dt(dt)};
      }, nb::arg("summary"), nb::kw_only(), nb::arg("dt") = 0.0,
         "From a dict (or object) with the summary keys; missing keys are 0, a negative or non-finite dt is 0.")
      .def_static("from_values", [](int64_t frames, double duration, double latest_timestamp, double mean_drift,
                                    double mean_abs_drift, double drift_std, double mean_energy, double energy_std,
                                    double mean_decay, double min_energy, double max_energy, double dt) {
        return v::ChronoSnapshot{{frames, duration, latest_timestamp, mean_drift, mean_abs_drift, drift_std, mean_energy,
                                  energy_std, mean_decay, min_energy, max_energy}, clean_dt(dt)};
      }, nb::kw_only(), nb::arg("frames"), nb::arg("duration"), nb::arg("latest_timestamp"), nb::arg("mean_drift") = 0.0,
         nb::arg("mean_abs_drift") = 0.0, nb::arg("drift_std") = 0.0, nb::arg("mean_energy") = 0.0,
         nb::arg("energy_std") = 0.0, nb::arg("mean_decay") = 0.0, nb::arg("min_energy") = 0.0,
         nb::arg("max_energy") = 0.0, nb::arg("dt") = 0.0)
      .def_static("from_stream", [](std::vector<double> timestamps, std::vector<double> energies) {
        return v::chrono_summary(timestamps, energies);
      }, nb::arg("timestamps"), nb::arg("energies"),
         "The summary of frames with these timestamps (non-decreasing) and energies (mean of squares).")
      .def_prop_ro("timestamp", &v::ChronoSnapshot::timestamp)
      .def_prop_ro("dt", [](const v::ChronoSnapshot& s) { return s.dt; })
      .def_prop_ro("frames", [](const v::ChronoSnapshot& s) { return s.summary.frames; })
      .def("summary", [](const v::ChronoSnapshot& s) { return summary_dict(s.summary); })
      .def("merge", &v::ChronoSnapshot::merge, nb::arg("other"),
           "Both snapshots pooled as one stream (frame-weighted means, pooled stds).")
      .def("to_dict", [](const v::ChronoSnapshot& s) {
        nb::dict d;
        d["timestamp"] = s.timestamp();
        d["dt"] = s.dt;
        d["summary"] = summary_dict(s.summary);
        return d;
      })
      .def("__repr__", [](const v::ChronoSnapshot& s) {
        return "ChronoSnapshot(frames=" + std::to_string(s.summary.frames) + ", timestamp=" +
               std::to_string(s.timestamp()) + ", dt=" + std::to_string(s.dt) + ")";
      });

  m.def("slice_profile", [](const Tensor& volume) { return profile_dict(v::slice_profile(volume)); }, nb::arg("volume"),
        "Per-slice means, stds and energies of a (depth, ...) volume and their aggregates (entropy in bits).");

  nb::class_<v::FrameAggregator>(m, "FrameAggregator", "The newest max_depth slices of a stream and their chrono summary.")
      .def(nb::init<std::optional<int64_t>>(), nb::arg("max_depth") = nb::none())
      .def_prop_rw("max_depth", &v::FrameAggregator::max_depth, &v::FrameAggregator::set_max_depth)
      .def("extend", [](v::FrameAggregator& a, const Tensor& volume, double timestamp,
                        std::optional<v::ChronoSnapshot> chrono) { a.extend(volume, timestamp, chrono); },
           nb::arg("volume"), nb::arg("timestamp"), nb::arg("chrono") = nb::none())
      .def("prune_oldest", &v::FrameAggregator::prune_oldest, nb::arg("keep"))
      .def("clear", &v::FrameAggregator::clear)
      .def_prop_ro("depth", &v::FrameAggregator::depth)
      .def_prop_ro("frames_seen", &v::FrameAggregator::frames_seen)
      .def_prop_ro("slice_shape", [](const v::FrameAggregator& a) {
        if (a.empty()) return nb::object(nb::none());
        return make_size(a.slice_shape());
      })
      .def("volume", &v::FrameAggregator::volume)
      .def("chrono", &v::FrameAggregator::chrono);

  nb::class_<v::VisionVolume>(m, "VisionVolume", "An EMA (depth, height, width) volume with window-weighted projection.")
      .def(nb::init<int64_t, int64_t, int64_t, double, std::string, int64_t>(), nb::arg("depth"), nb::arg("height"),
           nb::arg("width"), nb::arg("alpha") = 0.2, nb::arg("window") = "hann", nb::arg("temporal") = 4)
      .def_prop_ro("depth", &v::VisionVolume::depth)
      .def_prop_ro("height", &v::VisionVolume::height)
      .def_prop_ro("width", &v::VisionVolume::width)
      .def_prop_ro("alpha", &v::VisionVolume::alpha)
      .def_prop_ro("window", &v::VisionVolume::window)
      .def_prop_ro("temporal", &v::VisionVolume::temporal)
      .def_prop_ro("updates", &v::VisionVolume::updates)
      .def_prop_ro("volume", [](const v::VisionVolume& s) { return s.volume().clone(); })
      .def("accumulate", &v::VisionVolume::accumulate, nb::arg("volume"), nb::arg("weight") = 1.0,
           "EMA update; returns the mean absolute voxel change.")
      .def("project", &v::VisionVolume::project, nb::kw_only(), nb::arg("normalise") = true)
      .def("energy", &v::VisionVolume::energy)
      .def("energy_history", [](const v::VisionVolume& s) {
        return std::vector<double>(s.energy_history().begin(), s.energy_history().end());
      })
      .def("window_weights", &v::VisionVolume::window_weights)
      .def("reset", &v::VisionVolume::reset)
      .def("load", &v::VisionVolume::load, nb::arg("volume"), nb::arg("updates"));

  m.def("online_step", [](v::VisionVolume& vision, const Tensor& payload, double weight, st::zspace::ZSpaceTrainer* trainer) {
    const v::OnlineStep s = v::online_step(vision, payload, weight, trainer);
    nb::dict d;
    d["energy"] = s.energy;
    d["change"] = s.change;
    if (s.loss) d["loss"] = *s.loss;
    else d["loss"] = nb::none();
    nb::dict metrics;
    for (const auto& [k, val] : s.metrics.values()) metrics[k.c_str()] = val;
    if (s.metrics.gradient()) metrics["gradient"] = *s.metrics.gradient();
    d["metrics"] = metrics;
    d["z_state"] = s.z;
    return d;
  }, nb::arg("vision"), nb::arg("payload"), nb::arg("weight") = 1.0, nb::arg("trainer").none() = nb::none(),
     "Accumulates payload into vision and, with a trainer, steps it on the default metrics (a heuristic: speed = "
     "mean |voxel change|, memory = mean slice energy, stability = mean slice std, drs = max |projection|, "
     "gradient = row means of the normalised projection pooled into z_dim bands, centred). Returns {energy, change, "
     "loss, metrics, z_state}.");
}

}  // namespace stpy
