// spiraltorch._core.nn: the Module base (subclassable from Python) and core layers.
#include <nanobind/stl/pair.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/trampoline.h>

#include "convert.h"
#include "nn_bind.h"
#include "spiraltorch/nn/linear.h"
#include "spiraltorch/nn/sequential.h"

namespace stpy {

using st::nn::Module;

namespace {

// Lets Python subclasses override forward (and their display name).
class PyModule : public Module {
 public:
  NB_TRAMPOLINE(Module, 2);
  Tensor forward(const Tensor& input) override { NB_OVERRIDE(forward, input); }
  std::string type_name() const override {
    nb::gil_scoped_acquire gil;
    nb::handle self = nb_trampoline.base();
    return nb::cast<std::string>(nb::handle(reinterpret_cast<PyObject*>(Py_TYPE(self.ptr()))).attr("__name__"));
  }
};

nb::dict to_dict(const st::nn::StateDict& sd) {
  nb::dict d;
  for (const auto& [k, t] : sd) d[nb::str(k.c_str())] = nb::cast(t);
  return d;
}

}  // namespace

st::nn::StateDict state_from_py(nb::handle obj, const char* op) {
  st::nn::StateDict out;
  nb::object items = nb::hasattr(obj, "items") ? obj.attr("items")() : nb::borrow(obj);
  for (nb::handle item : items) {
    nb::object key = item[0], value = item[1];
    Tensor t;
    if (nb::isinstance<Tensor>(value)) {
      t = nb::cast<Tensor>(value);
    } else {
      t = tensor_from_data(value, std::nullopt);
    }
    out.emplace_back(utf8_of(key, op, "key"), t);
  }
  return out;
}

void bind_nn(nb::module_& parent) {
  nb::module_ m = parent.def_submodule("nn", "Native neural-network layers.");
  nb::class_<Module, PyModule>(m, "Module", "Base of every layer; Python subclasses override forward().")
      .def(nb::init<std::string>(), nb::arg("name") = "")
      .def("forward", &Module::forward, nb::arg("input"))
      .def("__call__", [](Module& self, const Tensor& x) { return self.forward(x); }, nb::arg("input"))
      .def_prop_rw("name", [](const Module& self) { return self.name(); },
                   [](Module& self, const std::string& n) { self.set_name(n); })
      .def("_register_module", [](Module& self, const std::string& slot, std::shared_ptr<Module> child) {
        self.register_module(slot, std::move(child));
      })
      .def("_remove_child", &Module::remove_child)
      .def("register_parameter", [](Module& self, const std::string& name, std::optional<Tensor> t) {
        if (t) self.register_parameter(name, *t, t->requires_grad() || st::is_floating(t->dtype()));
      }, nb::arg("name"), nb::arg("param").none())
      .def("register_buffer", [](Module& self, const std::string& name, const Tensor& t) { self.register_buffer(name, t); })
      .def("named_parameters", [](const Module& self) { return self.named_parameters(); })
      .def("parameters", [](const Module& self) { return self.parameters(); })
      .def("named_buffers", [](const Module& self) { return self.named_buffers(); })
      .def("buffers", [](const Module& self) {
        std::vector<Tensor> out;
        for (auto& [k, t] : self.named_buffers()) out.push_back(t);
        return out;
      })
      .def("children", [](const Module& self) {
        std::vector<std::shared_ptr<Module>> out;
        for (auto& [k, c] : self.children()) out.push_back(c);
        return out;
      })
      .def("named_children", [](const Module& self) {
        std::vector<std::pair<std::string, std::shared_ptr<Module>>> out;
        for (auto& [k, c] : self.children()) out.emplace_back(self.child_key(k, *c), c);
        return out;
      })
      .def("named_modules", [](Module& self) { return self.named_modules(); })
      .def("modules", [](Module& self) {
        std::vector<std::shared_ptr<Module>> out;
        for (auto& [k, c] : self.named_modules()) out.push_back(c);
        return out;
      })
      .def("state_dict", [](const Module& self) { return to_dict(self.state_dict()); },
           "Parameters and buffers keyed '<module>::<param>' (copies share no autograd history).")
      .def("load_state_dict", [](Module& self, nb::handle state, bool strict) {
        self.load_state_dict(state_from_py(state, "load_state_dict"), strict);
      }, nb::arg("state_dict"), nb::arg("strict") = true,
         "Copies matching entries in; checks everything first, so a failed load changes nothing.")
      .def("train", [](nb::handle self, bool mode) {
        nb::cast<Module&>(self).train(mode);
        return nb::borrow(self);
      }, nb::arg("mode") = true)
      .def("eval", [](nb::handle self) {
        nb::cast<Module&>(self).eval();
        return nb::borrow(self);
      })
      .def_prop_ro("training", [](const Module& self) { return self.is_training(); })
      .def("zero_grad", [](Module& self, bool) { self.zero_grad(); }, nb::arg("set_to_none") = true)
      .def("to", [](nb::handle self, nb::handle target) {
        if (nb::isinstance<nb::str>(target)) {
          const std::string s = nb::cast<std::string>(target);
          if (s == "cpu" || s.rfind("cpu:", 0) == 0 || s.rfind("cuda", 0) == 0) {
            nb::cast<Module&>(self).to(st::Device::parse(s));
            return nb::borrow(self);
          }
        }
        nb::cast<Module&>(self).to(to_dtype(target));
        return nb::borrow(self);
      }, nb::arg("target"))
      .def("attach_hypergrad", [](Module& self, double curvature, double learning_rate) {
        self.attach_hypergrad(curvature, learning_rate);
      }, nb::kw_only(), nb::arg("curvature") = -1.0, nb::arg("learning_rate") = 0.05,
         "Gives every parameter below this module Riemannian SGD updates in the Poincare ball of this curvature.")
      .def("detach_hypergrad", &Module::detach_hypergrad)
      .def_prop_ro("hypergrad", [](const Module& self) -> nb::object {
        if (!self.hypergrad()) return nb::none();
        return nb::make_tuple(self.hypergrad()->curvature, self.hypergrad()->learning_rate);
      })
      .def("num_parameters", [](const Module& self) {
        int64_t n = 0;
        for (const Tensor& p : self.parameters()) n += p.numel();
        return n;
      });

  nb::class_<st::nn::Linear, Module>(m, "Linear", "y = x W^T + b; W is (out_features, in_features) like PyTorch.")
      .def(nb::init<int64_t, int64_t, bool, std::string>(), nb::arg("in_features"), nb::arg("out_features"),
           nb::arg("bias") = true, nb::arg("name") = "")
      .def_prop_ro("weight", &st::nn::Linear::weight)
      .def_prop_ro("bias", [](st::nn::Linear& l) -> std::optional<Tensor> {
        Tensor b = l.bias();
        return b.defined() ? std::optional<Tensor>(b) : std::nullopt;
      })
      .def_prop_ro("in_features", &st::nn::Linear::in_features)
      .def_prop_ro("out_features", &st::nn::Linear::out_features);

  nb::class_<st::nn::Sequential, Module>(m, "Sequential", "Runs its layers in order.")
      .def("__init__", [](st::nn::Sequential* self, nb::args layers, std::string name) {
        new (self) st::nn::Sequential(name);
        for (nb::handle l : layers) self->add(nb::cast<std::shared_ptr<Module>>(l));
      }, nb::arg("layers"), nb::arg("name") = "")
      .def("add", [](st::nn::Sequential& s, std::shared_ptr<Module> layer) { s.add(std::move(layer)); }, nb::arg("layer"))
      .def("append", [](st::nn::Sequential& s, std::shared_ptr<Module> layer) { s.add(std::move(layer)); }, nb::arg("layer"))
      .def("__len__", &st::nn::Sequential::size)
      .def("__getitem__", &st::nn::Sequential::at);

  m.def("linear", [](const Tensor& x, const Tensor& w, std::optional<Tensor> b) {
    return st::nn::linear(x, w, b ? *b : Tensor());
  }, nb::arg("input"), nb::arg("weight"), nb::arg("bias") = nb::none());

  bind_nn_layers(m);
  bind_train(m);
}

}  // namespace stpy
