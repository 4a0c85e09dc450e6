// spiraltorch._core.rec: biased matrix factorisation (SGD, ALS) and implicit ALS (src/rec).
#include <nanobind/stl/pair.h>

#include "convert.h"
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

Tensor mat(const std::vector<float>& v, int64_t rows, int64_t cols) { return Tensor::from_vector(v, Shape{rows, cols}); }

}  // namespace

void bind_rec(nb::module_& root) {
  nb::module_ m = root.def_submodule("rec", "Matrix factorisation recommenders: biased MF (SGD, ALS), implicit ALS.");
  namespace rec = st::rec;

  nb::class_<rec::BiasedMF>(m, "BiasedMF", "r_hat(u, i) = mu + b_u + b_i + p_u . q_i, trained by SGD or ALS.")
      .def(nb::init<int64_t, int64_t, int64_t, uint64_t, float>(), nb::arg("users"), nb::arg("items"),
           nb::arg("factors"), nb::arg("seed") = 0, nb::arg("init_std") = 0.1f)
      .def("fit_global_mean", [](rec::BiasedMF& m, nb::handle u, nb::handle i, nb::handle v) {
        const Columns c = columns(u, i, v);
        m.fit_global_mean(c.view());
      }, nb::arg("users"), nb::arg("items"), nb::arg("values"))
      .def("sgd_epoch", [](rec::BiasedMF& m, nb::handle u, nb::handle i, nb::handle v, float lr, float reg,
                           float reg_bias, nb::handle order) {
        const Columns c = columns(u, i, v);
        const std::vector<int64_t> ord = int_list(order);
        rec::MFEpoch e;
        {
          nb::gil_scoped_release release;
          e = m.sgd_epoch(c.view(), lr, reg, reg_bias, ord);
        }
        return e.rmse;
      }, nb::arg("users"), nb::arg("items"), nb::arg("values"), nb::arg("lr"), nb::arg("reg"), nb::arg("reg_bias"),
         nb::arg("order") = nb::none(), "One SGD pass (in `order` when given); returns the RMSE of the errors seen.")
      .def("als_sweep", [](rec::BiasedMF& m, nb::handle u, nb::handle i, nb::handle v, float reg, float reg_bias) {
        const Columns c = columns(u, i, v);
        rec::MFEpoch e;
        {
          nb::gil_scoped_release release;
          e = m.als_sweep(c.view(), reg, reg_bias);
        }
        return e.rmse;
      }, nb::arg("users"), nb::arg("items"), nb::arg("values"), nb::arg("reg"), nb::arg("reg_bias"),
         "One ALS sweep (users then items); returns the training RMSE after it.")
      .def("predict", [](const rec::BiasedMF& m, int64_t u, int64_t i) { return m.predict(u, i); }, nb::arg("user"),
           nb::arg("item"))
      .def("predict_many", [](const rec::BiasedMF& m, nb::handle u, nb::handle i) {
        const std::vector<int64_t> us = int_list(u), is = int_list(i);
        const std::vector<float> out = m.predict(us, is);
        return Tensor::from_vector(out, Shape{static_cast<int64_t>(out.size())});
      }, nb::arg("users"), nb::arg("items"))
      .def("rmse", [](const rec::BiasedMF& m, nb::handle u, nb::handle i, nb::handle v) {
        const Columns c = columns(u, i, v);
        return m.rmse(c.view());
      }, nb::arg("users"), nb::arg("items"), nb::arg("values"))
      .def("top_k", [](const rec::BiasedMF& m, int64_t user, int64_t k, nb::handle exclude) {
        return m.top_k(user, k, int_list(exclude));
      }, nb::arg("user"), nb::arg("k"), nb::arg("exclude") = nb::none())
      .def_prop_ro("users", &rec::BiasedMF::users)
      .def_prop_ro("items", &rec::BiasedMF::items)
      .def_prop_ro("factors", &rec::BiasedMF::factors)
      .def_prop_rw("global_mean", &rec::BiasedMF::global_mean, &rec::BiasedMF::set_global_mean)
      .def_prop_ro("user_factors", [](const rec::BiasedMF& m) { return mat(m.user_factors(), m.users(), m.factors()); })
      .def_prop_ro("item_factors", [](const rec::BiasedMF& m) { return mat(m.item_factors(), m.items(), m.factors()); })
      .def_prop_ro("user_bias", [](const rec::BiasedMF& m) { return Tensor::from_vector(m.user_bias(), Shape{m.users()}); })
      .def_prop_ro("item_bias", [](const rec::BiasedMF& m) { return Tensor::from_vector(m.item_bias(), Shape{m.items()}); });

  nb::class_<rec::ImplicitALS>(m, "ImplicitALS", "Implicit-feedback MF by weighted ALS (Hu, Koren, Volinsky 2008).")
      .def(nb::init<int64_t, int64_t, int64_t, float, float, uint64_t>(), nb::arg("users"), nb::arg("items"),
           nb::arg("factors"), nb::arg("reg") = 0.01f, nb::arg("alpha") = 40.0f, nb::arg("seed") = 0)
      .def("sweep", [](rec::ImplicitALS& m, nb::handle u, nb::handle i, nb::handle v) {
        const Columns c = columns(u, i, v);
        double loss;
        {
          nb::gil_scoped_release release;
          loss = m.sweep(c.view());
        }
        return loss;
      }, nb::arg("users"), nb::arg("items"), nb::arg("values"), "One sweep; returns the weighted loss after it.")
      .def("score", &rec::ImplicitALS::score, nb::arg("user"), nb::arg("item"))
      .def("top_k", [](const rec::ImplicitALS& m, int64_t user, int64_t k, nb::handle exclude) {
        return m.top_k(user, k, int_list(exclude));
      }, nb::arg("user"), nb::arg("k"), nb::arg("exclude") = nb::none())
      .def_prop_ro("users", &rec::ImplicitALS::users)
      .def_prop_ro("items", &rec::ImplicitALS::items)
      .def_prop_ro("factors", &rec::ImplicitALS::factors)
      .def_prop_ro("user_factors", [](const rec::ImplicitALS& m) { return mat(m.user_factors(), m.users(), m.factors()); })
      .def_prop_ro("item_factors", [](const rec::ImplicitALS& m) { return mat(m.item_factors(), m.items(), m.factors()); });
}

}  // namespace stpy
