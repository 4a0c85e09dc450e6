// spiraltorch._core.canvas: CanvasProjector, the field builders and the PPM/PNG encoders.
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string_view.h>

#include <chrono>

#include "convert.h"
#include "toolkit_args.h"
#include "spiraltorch/canvas/canvas_projector.h"
#include "spiraltorch/canvas/image_io.h"

namespace stpy {
namespace {

namespace cv = st::canvas;

Tensor as_tensor(nb::handle h) {
  if (nb::isinstance<Tensor>(h)) return nb::cast<Tensor>(h);
  return tensor_from_data(h, std::nullopt);
}

nb::dict metrics_dict(const std::vector<std::pair<std::string, double>>& metrics) {
  nb::dict d;
  for (const auto& [k, v] : metrics) d[k.c_str()] = v;
  return d;
}

nb::bytes to_bytes(const std::string& s) { return nb::bytes(s.data(), s.size()); }

}  // namespace

void bind_canvas(nb::module_& root) {
  nb::module_ m = root.def_submodule("canvas", "CanvasProjector: fields rendered into RGBA surfaces (PPM/PNG).");
  using P = cv::CanvasProjector;
  nb::class_<P>(m, "CanvasProjector",
                "CanvasProjector(height=64, width=64, *, colormap='heat', normalization='minmax').\n\n"
                "Renders a real 2-D field into a (height, width, 4) uint8 RGBA surface: the field is resampled\n"
                "(nearest neighbour) to the canvas, normalised to t in [0, 1] ('minmax': (v - min) / (max - min);\n"
                "'symmetric': 1/2 + v / (2 max|v|)) and coloured by the colormap ('heat': r = clamp(3t),\n"
                "g = clamp(3t - 1), b = clamp(3t - 2); 'grayscale': r = g = b = t; 'diverging': blue -> white ->\n"
                "red with white at t = 1/2); channels are round(255 value), non-finite entries transparent black.\n"
                "The C++ class is st::canvas::CanvasProjector (include/spiraltorch/canvas/canvas_projector.h).")
      .def("__init__",
           [](P* self, int64_t height, int64_t width, std::string_view colormap, std::string_view normalization) {
    P::Options o;
    o.colormap = cv::colormap_from_name(colormap);
    o.normalization = cv::normalization_from_name(normalization);
    new (self) P(height, width, o);
  }, nb::arg("height") = 64, nb::arg("width") = 64, nb::kw_only(), nb::arg("colormap") = "heat",
           nb::arg("normalization") = "minmax")
      .def_prop_ro("height", &P::height, "Canvas rows.")
      .def_prop_ro("width", &P::width, "Canvas columns.")
      .def_prop_ro("colormap", [](const P& p) { return cv::colormap_name(p.options().colormap); },
                   "'heat', 'grayscale' or 'diverging'.")
      .def_prop_ro("normalization",
                   [](const P& p) {
    return p.options().normalization == cv::Normalization::MinMax ? "minmax" : "symmetric";
  }, "'minmax' or 'symmetric'.")
      .def_prop_ro("has_surface", &P::has_surface, "True once something was rendered.")
      .def("render", [](P& p, ArrayDataArg field) { return p.render(as_tensor(field)); }, nb::arg("field"),
           "Renders a 2-D field (Tensor, NumPy array or nested lists) and returns the (height, width, 4) uint8 "
           "surface; a refused field changes nothing.")
      .def("render_radial", &P::render_radial, nb::arg("frequency") = 3.0, nb::arg("decay") = 2.0,
           "Renders radial_energy_field(height, width, frequency, decay); returns the surface.")
      .def(
          "render_trajectory",
          [](P& p, ArrayDataArg points, double sigma) { return p.render_trajectory(as_tensor(points), sigma); },
          nb::arg("points"), nb::arg("sigma") = 1.5,
          "Renders trajectory_field(points, height, width, sigma) (an (N, D) Z-space trajectory); returns the surface.")
      .def("surface", &P::surface, "The last surface, a (height, width, 4) uint8 tensor (a copy).")
      .def("field", &P::field, "The last resampled field, (height, width) float64.")
      .def("intensity", &P::intensity, "The normalised intensity t of the last render (NaN where not finite).")
      .def("fft_power_spectrum", &P::fft_power_spectrum,
           "|rfft(row)|^2 of the field per row: (height, width // 2 + 1) float64, equal to "
           "numpy.abs(numpy.fft.rfft(field, axis=1)) ** 2 (non-finite entries as 0).")
      .def("loopback_patch", &P::loopback_patch, nb::arg("rows"), nb::arg("cols"), nb::arg("gain") = 1.0,
           "The intensity block-averaged onto a (rows, cols) grid, minus its mean, times gain (float64): a "
           "zero-mean wave a weights session absorbs (AmegagradSession.step_wave / accumulate_wave).")
      .def("metrics", [](const P& p) -> FloatDict { return metrics_dict(p.metrics()); },
           "canvas.mean_intensity, intensity_std, energy, field_min, field_max, finite_fraction, spectral_power, "
           "spectral_centroid, dc_fraction of the last render (see the C++ header for the formulas).")
      .def("emit_atlas_frame",
           [](const P& p, AtlasRouteArg route, std::optional<double> timestamp,
              int64_t bound) -> nb::typed<nb::object, stub::AtlasFrame> {
    using clock = std::chrono::system_clock;
    const double ts = timestamp ? *timestamp : std::chrono::duration<double>(clock::now().time_since_epoch()).count();
    const st::zspace::AtlasFrame f = p.atlas_frame(ts);  // checks before touching the route
    nb::module_ tel = nb::module_::import_("spiraltorch.telemetry");
    nb::list metrics;
    for (const auto& [k, v] : f.metrics) metrics.append(tel.attr("AtlasMetric")(k, v));
    nb::list notes;
    for (const auto& n : f.notes) notes.append(n);
    nb::object frame = tel.attr("AtlasFrame")(f.timestamp, metrics, notes);
    if (!route.is_none()) route.attr("push_bounded")(frame, bound);
    return frame;
  },
           nb::arg("route").none(), nb::kw_only(), nb::arg("timestamp").none() = nb::none(), nb::arg("bound") = 0,
           "Builds a telemetry.AtlasFrame of metrics() at timestamp (seconds, default now; finite and >= 0), with a "
           "note naming the canvas, pushes it into route (a telemetry.AtlasRoute, keeping the last bound frames; "
           "0 keeps all; None pushes nowhere) and returns it.")
      .def("write_ppm", [](const P& p, PathLikeArg path) { cv::write_ppm(fs_path(path), p.surface()); },
           nb::arg("path"), "Writes the surface as binary PPM (P6; colours composited over black), atomically.")
      .def("write_png", [](const P& p, PathLikeArg path) { cv::write_png(fs_path(path), p.surface()); },
           nb::arg("path"), "Writes the surface as an RGBA PNG, atomically.")
      .def("__repr__", [](const P& p) {
    return "CanvasProjector(height=" + std::to_string(p.height()) + ", width=" + std::to_string(p.width()) +
           ", colormap='" + cv::colormap_name(p.options().colormap) + "')";
  });
  m.def("radial_energy_field", &cv::radial_energy_field, nb::arg("height"), nb::arg("width"),
        nb::arg("frequency") = 3.0, nb::arg("decay") = 2.0,
        "exp(-decay r^2) (1 + cos(2 pi frequency r)) / 2 on a (height, width) grid, float64; r is the distance "
        "from the centre over half the shorter side.");
  m.def("trajectory_field",
        [](ArrayDataArg points, int64_t h, int64_t w, double sigma) {
    return cv::trajectory_field(as_tensor(points), h, w, sigma);
  }, nb::arg("points"), nb::arg("height"), nb::arg("width"), nb::arg("sigma") = 1.5,
        "Gaussian splats (sigma pixels, weight (i + 1) / N) of the first two coordinates of an (N, D) trajectory, "
        "the square [-1, 1]^2 filling the (height, width) canvas, y up; float64.");
  m.def("encode_ppm", [](const Tensor& s) { return to_bytes(cv::encode_ppm(s)); }, nb::arg("surface"),
        "P6 bytes of a (height, width, 4) uint8 surface (colours composited over black).");
  m.def("encode_png", [](const Tensor& s) { return to_bytes(cv::encode_png(s)); }, nb::arg("surface"),
        "PNG bytes (RGBA, 8 bits) of a (height, width, 4) uint8 surface.");
  m.def("write_ppm", [](PathLikeArg path, const Tensor& s) { cv::write_ppm(fs_path(path), s); }, nb::arg("path"),
        nb::arg("surface"),
        "Writes a (height, width, 4) uint8 surface to path as binary PPM (P6; colours composited over black), "
        "atomically (temporary file, then rename).");
  m.def("write_png", [](PathLikeArg path, const Tensor& s) { cv::write_png(fs_path(path), s); }, nb::arg("path"),
        nb::arg("surface"), "Writes a (height, width, 4) uint8 surface to path as an RGBA PNG, atomically.");
  m.def("png_uses_zlib", &cv::png_uses_zlib,
        "True when PNGs are deflate-compressed with the system zlib "
        "(else stored blocks).");
}

}  // namespace stpy
