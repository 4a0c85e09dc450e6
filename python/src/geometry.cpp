// spiraltorch._core.geometry: the Poincare-ball operations of src/geometry (row-wise; each row
// of a 2-d tensor, or each vector along the last dim, is a point of the ball of curvature c < 0).
#include "convert.h"
#include "spiraltorch/geometry/poincare.h"

namespace stpy {

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
  m.def("logmap", &g::logmap, nb::arg("x"), nb::arg("y"), nb::arg("curvature"), "log_x(y), the inverse of expmap at x.");
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
}

}  // namespace stpy
