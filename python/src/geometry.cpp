// spiraltorch._core.geometry: the Poincare-ball operations of src/geometry (row-wise; each row
// of a 2-d tensor, or each vector along the last dim, is a point of the ball of curvature c < 0).
#include "convert.h"
#include "toolkit_args.h"
#include "spiraltorch/geometry/poincare.h"
#include "spiraltorch/geometry/poincare_embedding.h"

#include <nanobind/stl/function.h>
#include <nanobind/stl/string.h>

namespace stpy {

namespace {

// Edges as given (a Tensor) or converted from nested lists / NumPy (int64).
Tensor as_edges(nb::handle edges) {
  if (nb::isinstance<Tensor>(edges)) return nb::cast<Tensor>(edges);
  return tensor_from_data(edges, Dtype::Int64);
}

namespace g = st::geometry;

// fit's callback(epoch, loss, seconds), or None (a plain object at run time).
using EpochCallbackArg = nb::typed<nb::object, nb::typed<nb::callable, void(int64_t, double, double)>>;

g::NegativeSampling sampling_of(const std::string& s, const char* arg) {
  if (s == "uniform") return g::NegativeSampling::Uniform;
  if (s == "degree") return g::NegativeSampling::Degree;
  throw st::ValueError(std::string("PoincareEmbedding.fit: ") + arg + " must be 'uniform' or 'degree', got '" + s +
                       "'");
}

g::EmbeddingGeometry geometry_of(const std::string& s, const char* op) {
  if (s == "poincare") return g::EmbeddingGeometry::Poincare;
  if (s == "euclidean") return g::EmbeddingGeometry::Euclidean;
  throw st::ValueError(std::string(op) + ": geometry must be 'poincare' or 'euclidean', got '" + s + "'");
}

void bind_embedding(nb::module_& m) {
  nb::class_<g::PoincareEmbedding>(
      m, "PoincareEmbedding",
      "Poincare embeddings of a hierarchy (Nickel & Kiela 2017): num_nodes points of the ball of curvature c,\n"
      "trained so each node lies close to its ancestors and far from nodes it is not connected to.")
      .def(
          "__init__",
          [](g::PoincareEmbedding* self, int64_t n, int64_t dim, double c, uint64_t seed, const std::string& geometry) {
    new (self) g::PoincareEmbedding(n, dim, c, seed, geometry_of(geometry, "PoincareEmbedding"));
  }, nb::arg("num_nodes"), nb::arg("dim"), nb::arg("curvature") = -1.0, nb::arg("seed") = 0, nb::kw_only(),
          nb::arg("geometry") = "poincare",
          "Rows start uniform in [-1e-3, 1e-3]^dim, drawn from `seed`. geometry='euclidean' is the paper's\n"
          "baseline: d(u, v) = |u - v|^2 and plain SGD in R^dim, everything else the same.")
      .def("fit",
           [](g::PoincareEmbedding& self, ArrayDataArg edges, int64_t epochs, double lr, int64_t negatives,
              int64_t burn_in, int64_t batch_size, int threads, EpochCallbackArg callback, bool verbose,
              const std::string& burn_in_sampling, const std::string& sampling, const std::string& schedule,
              double final_lr_fraction, std::optional<double> max_seconds) -> nb::typed<nb::list, FloatDict> {
    const Tensor e = as_edges(edges);
    if (schedule != "constant" && schedule != "linear") {
      throw st::ValueError("PoincareEmbedding.fit: schedule must be 'constant' or 'linear', got '" + schedule + "'");
    }
    g::EmbeddingFitOptions opt;
    opt.epochs = epochs;
    opt.lr = lr;
    opt.negatives = negatives;
    opt.burn_in = burn_in;
    opt.batch_size = batch_size;
    opt.threads = threads;
    opt.burn_in_sampling = sampling_of(burn_in_sampling, "burn_in_sampling");
    opt.sampling = sampling_of(sampling, "sampling");
    opt.schedule = schedule == "linear" ? g::LrSchedule::Linear : g::LrSchedule::Constant;
    opt.final_lr_fraction = final_lr_fraction;
    opt.max_seconds = max_seconds.value_or(0.0);
    const std::shared_ptr<nb::object> fn =
        callback.is_none() ? nullptr : shared_callable(nb::cast<nb::callable>(callback));
    // Each epoch re-enters Python: the callback, the printed line, and Ctrl-C.
    const auto report = [fn, verbose, epochs](const g::EmbeddingEpoch& r) {
      nb::gil_scoped_acquire gil;
      if (PyErr_CheckSignals() != 0) throw nb::python_error();
      if (fn) (*fn)(r.epoch, r.loss, r.seconds);
      if (verbose) {
        nb::print(
            nb::str("epoch {}/{}  loss {:.5f}  lr {}  {:.3f} s").format(r.epoch, epochs, r.loss, r.lr, r.seconds));
      }
    };
    std::vector<g::EmbeddingEpoch> reports;
    {
      nb::gil_scoped_release nogil;
      reports = self.fit(e, opt, report);
    }
    nb::list out;
    for (const auto& r : reports) {
      nb::dict d;
      d["epoch"] = r.epoch;
      d["loss"] = r.loss;
      d["seconds"] = r.seconds;
      d["lr"] = r.lr;
      d["skipped_batches"] = r.skipped_batches;
      out.append(d);
    }
    return out;
  },
           nb::arg("edges"), nb::arg("epochs") = 50, nb::arg("lr") = 0.3, nb::arg("negatives") = 50,
           nb::arg("burn_in") = 10, nb::arg("batch_size") = 10, nb::arg("threads") = 0,
           nb::arg("callback") = nb::none(), nb::arg("verbose") = false, nb::kw_only(),
           nb::arg("burn_in_sampling") = "degree", nb::arg("sampling") = "uniform", nb::arg("schedule") = "constant",
           nb::arg("final_lr_fraction") = 0.0, nb::arg("max_seconds") = nb::none(),
           "Trains on edges, an (E, 2) int64 tensor of (node, ancestor) pairs of the transitive closure: softmax\n"
           "loss of the true ancestor against `negatives` sampled non-ancestors, Riemannian SGD on mini-batches\n"
           "(lr / 10 for the first `burn_in` epochs), multi-threaded with the GIL released.\n"
           "Negatives are drawn uniformly, or ('degree') in proportion to degree^0.75 as the paper does during\n"
           "burn-in (burn_in_sampling='degree', the default). schedule='linear' decays the lr after burn-in to\n"
           "lr * final_lr_fraction at the end of the run; 'constant' (default) keeps it. max_seconds bounds the\n"
           "wall time: training stops after the epoch that reaches it (the linear decay then follows the budget).\n"
           "callback(epoch, loss, seconds) runs after each epoch; verbose prints a line per epoch. Deterministic\n"
           "given the seed at any thread count (for a fixed number of epochs); on error (or an exception in the\n"
           "callback) the weights are unchanged. Returns one dict per epoch (epoch, loss, seconds, lr,\n"
           "skipped_batches).")
      .def("load_weight", &g::PoincareEmbedding::load_weight, nb::arg("weight"),
           "Replaces the weights (e.g. a checkpoint): (num_nodes, dim), finite, rows inside the ball for the\n"
           "Poincare geometry; checked before anything changes.")
      .def_prop_ro("geometry",
                   [](const g::PoincareEmbedding& self) {
    return self.geometry() == g::EmbeddingGeometry::Euclidean ? "euclidean" : "poincare";
  }, "'poincare' or 'euclidean' (the paper's baseline).")
      .def_prop_ro("weight", &g::PoincareEmbedding::weight, "(num_nodes, dim) float64 tensor, rows = nodes.")
      .def_prop_ro("num_nodes", &g::PoincareEmbedding::num_nodes, "The number of embedded nodes (rows of weight).")
      .def_prop_ro("dim", &g::PoincareEmbedding::dim, "The embedding dimension (columns of weight).")
      .def_prop_ro("curvature", &g::PoincareEmbedding::curvature, "The ball's curvature c < 0.")
      .def_prop_ro("seed", &g::PoincareEmbedding::seed, "The seed of the initial weights and of the sampling.")
      .def("__repr__", [](const g::PoincareEmbedding& self) {
    return "PoincareEmbedding(num_nodes=" + std::to_string(self.num_nodes()) + ", dim=" + std::to_string(self.dim()) +
           ", curvature=" + std::to_string(self.curvature()) + ")";
  });
  m.def(
      "reconstruction_metrics",
      [](const Tensor& weight, ArrayDataArg edges, double curvature, const std::string& geometry) -> FloatDict {
    const Tensor e = as_edges(edges);
    const auto geo = geometry_of(geometry, "reconstruction_metrics");
    g::ReconstructionMetrics r;
    {
      nb::gil_scoped_release nogil;
      r = g::reconstruction_metrics(weight, e, curvature, geo);
    }
    nb::dict d;
    d["mean_rank"] = r.mean_rank;
    d["map"] = r.map;
    d["nodes"] = r.nodes;
    d["pairs"] = r.pairs;
    return d;
  }, nb::arg("weight"), nb::arg("edges"), nb::arg("curvature") = -1.0, nb::kw_only(), nb::arg("geometry") = "poincare",
      "The authors' reconstruction protocol: each node's ancestors ranked by Poincare (or, with\n"
      "geometry='euclidean', Euclidean) distance among the nodes\n"
      "that are not its ancestors. Returns dict(mean_rank= (over all pairs), map= (mean over nodes), nodes=, pairs=).");
}

}  // namespace

void bind_geometry(nb::module_& root) {
  namespace g = st::geometry;
  nb::module_ m = root.def_submodule("geometry", "Poincare-ball geometry of curvature c < 0 (k = -c), row-wise.");
  m.def("mobius_add", &g::mobius_add, nb::arg("x"), nb::arg("y"), nb::arg("curvature"),
        "x (+) y, Mobius addition in the ball of curvature c.");
  m.def("expmap0", &g::expmap0, nb::arg("v"), nb::arg("curvature"),
        "exp_0(v) = tanh(sqrt(k)|v|) v / (sqrt(k)|v|): tangent vectors at the origin into the ball.");
  m.def("logmap0", &g::logmap0, nb::arg("y"), nb::arg("curvature"), "log_0(y), the inverse of expmap0.");
  m.def("expmap", &g::expmap, nb::arg("x"), nb::arg("v"), nb::arg("curvature"),
        "exp_x(v): the point reached from x along the geodesic with initial velocity v.");
  m.def("logmap", &g::logmap, nb::arg("x"), nb::arg("y"), nb::arg("curvature"),
        "log_x(y), the inverse of expmap at x.");
  m.def("poincare_distance", &g::poincare_distance, nb::arg("x"), nb::arg("y"), nb::arg("curvature"),
        "Geodesic distance per row: (2/sqrt(k)) artanh(sqrt(k) |(-x) (+) y|).");
  m.def("clip_to_ball", &g::clip_to_ball, nb::arg("x"), nb::arg("curvature"), nb::arg("eps") = 1e-5,
        "Rows with norm above (1 - eps)/sqrt(k) scaled back onto that radius (idempotent).");
  m.def("conformal_factor", &g::conformal_factor, nb::arg("x"), nb::arg("curvature"),
        "lambda_x = 2 / (1 - k|x|^2) per row (kept as a trailing dim of size 1).");
  m.def("egrad2rgrad", &g::egrad2rgrad, nb::arg("x"), nb::arg("grad"), nb::arg("curvature"),
        "The Riemannian gradient g / lambda_x^2 of a Euclidean gradient g at x.");
  m.def("gyration", &g::gyration, nb::arg("a"), nb::arg("b"), nb::arg("w"), nb::arg("curvature"),
        "gyr[a, b] w: a (+) (b (+) w) = (a (+) b) (+) gyr[a, b] w.");
  m.def("parallel_transport", &g::parallel_transport, nb::arg("x"), nb::arg("y"), nb::arg("v"), nb::arg("curvature"),
        "Transports the tangent vector v at x to y along the geodesic (keeps its Riemannian norm).");
  m.def("rsgd_step", &g::rsgd_step, nb::arg("x"), nb::arg("euclidean_grad"), nb::arg("curvature"), nb::arg("lr"),
        "One Riemannian SGD step x <- clip(exp_x(-lr (1 - k|x|^2)^2 g)); from the origin it is exp_0(-lr g).");
  bind_embedding(m);
}

}  // namespace stpy
