// spiraltorch._core.rec: biased matrix factorisation (SGD, ALS) and implicit ALS (src/rec).
#include <nanobind/stl/pair.h>

#include <nanobind/stl/vector.h>

#include "convert.h"
#include "toolkit_args.h"
#include "spiraltorch/rec/matrix_factorization.h"

namespace stpy {

namespace {

// Column copies of (user, item, value) triples.
struct Columns {
  std::vector<int64_t> users, items;
  std::vector<float> values;
  st::rec::Ratings view() const { return {users, items, values}; }
};

Columns columns(nb::handle users, nb::handle items, nb::handle values) {
  return {tensor_from_data(users, Dtype::Int64).contiguous().to_vector<int64_t>(),
          tensor_from_data(items, Dtype::Int64).contiguous().to_vector<int64_t>(),
          tensor_from_data(values, Dtype::Float32).contiguous().to_vector<float>()};
}

std::vector<int64_t> int_list(nb::handle h) {
  if (h.is_none()) return {};
  return tensor_from_data(h, Dtype::Int64).contiguous().to_vector<int64_t>();
}

Tensor mat(const std::vector<float>& v, int64_t rows, int64_t cols) {
  return Tensor::from_vector(v, Shape{rows, cols});
}

}  // namespace

void bind_rec(nb::module_& root) {
  nb::module_ m = root.def_submodule("rec", "Matrix factorisation recommenders: biased MF (SGD, ALS), implicit ALS.");
  namespace rec = st::rec;

  nb::class_<rec::BiasedMF>(m, "BiasedMF", "r_hat(u, i) = mu + b_u + b_i + p_u . q_i, trained by SGD or ALS.")
      .def(nb::init<int64_t, int64_t, int64_t, uint64_t, float>(), nb::arg("users"), nb::arg("items"),
           nb::arg("factors"), nb::arg("seed") = 0, nb::arg("init_std").sig("0.1") = 0.1f)
      .def("fit_global_mean",
           [](rec::BiasedMF& m, ArrayDataArg u, ArrayDataArg i, ArrayDataArg v) {
    const Columns c = columns(u, i, v);
    m.fit_global_mean(c.view());
  }, nb::arg("users"), nb::arg("items"), nb::arg("values"),
           "Sets global_mean (mu) to the mean of values; users/items are int64 indices, one per rating.")
      .def("sgd_epoch",
           [](rec::BiasedMF& m, ArrayDataArg u, ArrayDataArg i, ArrayDataArg v, float lr, float reg, float reg_bias,
              OptArrayDataArg order) {
    const Columns c = columns(u, i, v);
    const std::vector<int64_t> ord = int_list(order);
    rec::MFEpoch e;
    {
      nb::gil_scoped_release release;
      e = m.sgd_epoch(c.view(), lr, reg, reg_bias, ord);
    }
    return e.rmse;
  },
           nb::arg("users"), nb::arg("items"), nb::arg("values"), nb::arg("lr"), nb::arg("reg"), nb::arg("reg_bias"),
           nb::arg("order") = nb::none(),
           "One SGD pass over the ratings (users, items, values: equal-length 1-d arrays), in `order` (a "
           "permutation of their indices) when given: e = r - r_hat; b_u += lr (e - reg_bias b_u); b_i likewise; "
           "p_u += lr (e q_i - reg p_u); q_i += lr (e p_u - reg q_i). Sets global_mean first if it was never set. "
           "Returns the RMSE of the errors seen (each before its own update).")
      .def("als_sweep",
           [](rec::BiasedMF& m, ArrayDataArg u, ArrayDataArg i, ArrayDataArg v, float reg, float reg_bias) {
    const Columns c = columns(u, i, v);
    rec::MFEpoch e;
    {
      nb::gil_scoped_release release;
      e = m.als_sweep(c.view(), reg, reg_bias);
    }
    return e.rmse;
  }, nb::arg("users"), nb::arg("items"), nb::arg("values"), nb::arg("reg"), nb::arg("reg_bias"),
           "One ALS sweep: each user's (b_u, p_u) is the exact ridge solution given the items, then each item's "
           "given the users (penalties scaled by the rating counts). Returns the training RMSE after it.")
      .def("predict", [](const rec::BiasedMF& m, int64_t u, int64_t i) { return m.predict(u, i); }, nb::arg("user"),
           nb::arg("item"), "r_hat(user, item) = mu + b_u + b_i + p_u . q_i.")
      .def("predict_many",
           [](const rec::BiasedMF& m, ArrayDataArg u, ArrayDataArg i) {
    const std::vector<int64_t> us = int_list(u), is = int_list(i);
    const std::vector<float> out = m.predict(us, is);
    return Tensor::from_vector(out, Shape{static_cast<int64_t>(out.size())});
  }, nb::arg("users"), nb::arg("items"), "r_hat for each (users[k], items[k]) pair, a float32 tensor.")
      .def("rmse",
           [](const rec::BiasedMF& m, ArrayDataArg u, ArrayDataArg i, ArrayDataArg v) {
    const Columns c = columns(u, i, v);
    return m.rmse(c.view());
  }, nb::arg("users"), nb::arg("items"), nb::arg("values"), "The root mean squared error of r_hat on these ratings.")
      .def("top_k",
           [](const rec::BiasedMF& m, int64_t user, int64_t k, OptArrayDataArg exclude) {
    return m.top_k(user, k, int_list(exclude));
  }, nb::arg("user"), nb::arg("k"), nb::arg("exclude") = nb::none(),
           "The k best items for user as [(item, predicted rating)], best first, skipping the items in exclude "
           "(ties: lower item first).")
      .def_prop_ro("users", &rec::BiasedMF::users, "The number of users.")
      .def_prop_ro("items", &rec::BiasedMF::items, "The number of items.")
      .def_prop_ro("factors", &rec::BiasedMF::factors, "The latent dimension.")
      .def_prop_rw("global_mean", &rec::BiasedMF::global_mean, &rec::BiasedMF::set_global_mean,
                   "mu, the global rating offset.")
      .def_prop_ro("user_factors", [](const rec::BiasedMF& m) { return mat(m.user_factors(), m.users(), m.factors()); },
                   "P, a (users, factors) float32 copy.")
      .def_prop_ro("item_factors", [](const rec::BiasedMF& m) { return mat(m.item_factors(), m.items(), m.factors()); },
                   "Q, an (items, factors) float32 copy.")
      .def_prop_ro("user_bias",
                   [](const rec::BiasedMF& m) { return Tensor::from_vector(m.user_bias(), Shape{m.users()}); },
                   "b_u per user, a float32 copy.")
      .def_prop_ro("item_bias", [](const rec::BiasedMF& m) {
    return Tensor::from_vector(m.item_bias(), Shape{m.items()});
  }, "b_i per item, a float32 copy.");

  nb::class_<rec::ImplicitALS>(m, "ImplicitALS", "Implicit-feedback MF by weighted ALS (Hu, Koren, Volinsky 2008).")
      .def(nb::init<int64_t, int64_t, int64_t, float, float, uint64_t>(), nb::arg("users"), nb::arg("items"),
           nb::arg("factors"), nb::arg("reg").sig("0.01") = 0.01f, nb::arg("alpha").sig("40.0") = 40.0f,
           nb::arg("seed") = 0)
      .def("sweep",
           [](rec::ImplicitALS& m, ArrayDataArg u, ArrayDataArg i, ArrayDataArg v) {
    const Columns c = columns(u, i, v);
    double loss;
    {
      nb::gil_scoped_release release;
      loss = m.sweep(c.view());
    }
    return loss;
  }, nb::arg("users"), nb::arg("items"), nb::arg("values"),
           "One weighted-ALS sweep (users, then items) over the observed (user, item, count) triples; returns "
           "the weighted loss over all user-item pairs after it.")
      .def("score", &rec::ImplicitALS::score, nb::arg("user"), nb::arg("item"), "The preference x_u . y_i.")
      .def("top_k",
           [](const rec::ImplicitALS& m, int64_t user, int64_t k, OptArrayDataArg exclude) {
    return m.top_k(user, k, int_list(exclude));
  }, nb::arg("user"), nb::arg("k"), nb::arg("exclude") = nb::none(),
           "The k best items for user as [(item, score)], best first, skipping the items in exclude.")
      .def_prop_ro("users", &rec::ImplicitALS::users, "The number of users.")
      .def_prop_ro("items", &rec::ImplicitALS::items, "The number of items.")
      .def_prop_ro("factors", &rec::ImplicitALS::factors, "The latent dimension.")
      .def_prop_ro("user_factors",
                   [](const rec::ImplicitALS& m) { return mat(m.user_factors(), m.users(), m.factors()); },
                   "X, a (users, factors) float32 copy.")
      .def_prop_ro("item_factors", [](const rec::ImplicitALS& m) {
    return mat(m.item_factors(), m.items(), m.factors());
  }, "Y, an (items, factors) float32 copy.");
}

}  // namespace stpy
