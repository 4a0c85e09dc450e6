// spiraltorch._core.nn: the Module base (subclassable from Python) and core layers.
#include <nanobind/stl/pair.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/trampoline.h>

#include <functional>
#include <map>
#include <set>

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

nb::dict to_dict(const st::nn::StateDict& sd, const std::string& prefix = "") {
  nb::dict d;
  for (const auto& [k, t] : sd) d[nb::str((prefix + k).c_str())] = nb::cast(t);
  return d;
}

// Keys with `prefix` in front (state_dict(prefix=), named_parameters(prefix=)).
st::nn::StateDict prefixed(st::nn::StateDict sd, const std::string& prefix) {
  for (auto& [k, t] : sd) k = prefix + k;
  return sd;
}

// The Python object of a module the hooks were registered on (found, never created
// owning: hooks must not keep their own module alive).
nb::object py_module(Module& m) {
  nb::handle h = nb::find(&m);
  return h.is_valid() ? nb::borrow(h) : nb::cast(&m, nb::rv_policy::reference);
}

// A hook's result: None keeps the value; a tensor, or a 1-tuple holding one, replaces it.
std::optional<Tensor> hook_result(const nb::object& r, const char* what) {
  if (r.is_none()) return std::nullopt;
  if (nb::isinstance<Tensor>(r)) return nb::cast<Tensor>(r);
  if (nb::isinstance<nb::tuple>(r) && nb::len(r) == 1) {
    nb::object first = r[0];
    if (first.is_none()) return std::nullopt;
    if (nb::isinstance<Tensor>(first)) return nb::cast<Tensor>(first);
  }
  const std::string msg = std::string(what) + ": a hook must return None, a Tensor or a 1-tuple of a Tensor, got " +
                          nb::cast<std::string>(nb::str(r.type().attr("__name__")));
  throw nb::type_error(msg.c_str());
}

nb::object grad_tuple(const Tensor& g) { return nb::make_tuple(g.defined() ? nb::cast(g) : nb::none()); }

// (path, module) for the module and its descendants, each once. Children travel as
// shared_ptr so the Python objects returned own what they refer to.
nb::list named_modules_py(nb::handle self, const std::string& prefix) {
  nb::list out;
  std::set<const Module*> seen;
  std::function<void(const std::string&, nb::handle)> visit = [&](const std::string& path, nb::handle obj) {
    Module& m = nb::cast<Module&>(obj);
    if (!seen.insert(&m).second) return;
    out.append(nb::make_tuple(path, obj));
    for (const auto& [slot, child] : m.children()) {
      const std::string key = m.child_key(slot, *child);
      visit(path.empty() ? key : path + "." + key, nb::cast(child));
    }
  };
  const Module& root = nb::cast<Module&>(self);
  visit(prefix.empty() ? root.name() : prefix, self);
  return out;
}

// Handle returned by register_*_hook: remove() (or leaving a with-block) unregisters.
struct RemovableHandle {
  nb::object module;
  int id;
  void remove() {
    if (module.is_valid() && !module.is_none()) module.attr("remove_hook")(id);
    module = nb::none();
  }
};

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
  m.attr("IncompatibleKeys") = nb::module_::import_("collections").attr("namedtuple")(
      "IncompatibleKeys", nb::make_tuple("missing_keys", "unexpected_keys"));
  nb::class_<RemovableHandle>(m, "RemovableHandle", "Returned by register_*_hook; remove() unregisters the hook.")
      .def_ro("id", &RemovableHandle::id)
      .def("remove", &RemovableHandle::remove)
      .def("__enter__", [](nb::handle h) { return nb::borrow(h); })
      .def("__exit__", [](RemovableHandle& h, nb::args) { h.remove(); });
  nb::class_<Module, PyModule>(m, "Module", "Base of every layer; Python subclasses override forward().")
      .def(nb::init<std::string>(), nb::arg("name") = "")
      .def("forward", &Module::forward, nb::arg("input"))
      .def("__call__", [](Module& self, const Tensor& x) { return self(x); }, nb::arg("input"),
           "forward(input) with the registered hooks around it.")
      .def_prop_rw("name", [](const Module& self) { return self.name(); },
                   [](Module& self, const std::string& n) { self.set_name(n); })
      .def("_register_module", [](Module& self, const std::string& slot, std::shared_ptr<Module> child) {
        self.register_module(slot, std::move(child));
      })
      .def("_remove_child", &Module::remove_child)
      .def("register_parameter", [](Module& self, const std::string& name, std::optional<Tensor> t) {
        if (t) self.register_parameter(name, *t, t->requires_grad() || st::is_floating(t->dtype()));
      }, nb::arg("name"), nb::arg("param").none())
      .def("register_buffer", [](Module& self, const std::string& name, const Tensor& t, bool persistent) {
        self.register_buffer(name, t, persistent);
      }, nb::arg("name"), nb::arg("tensor"), nb::arg("persistent") = true,
         "Registers a buffer: moved with the module and listed by named_buffers(); in state_dict() unless "
         "persistent=False.")
      .def("_is_persistent_buffer", &Module::is_persistent_buffer, nb::arg("name"))
      .def("named_parameters", [](const Module& self, const std::string& prefix, bool recurse) {
        return prefixed(self.named_parameters(recurse), prefix);
      }, nb::arg("prefix") = "", nb::arg("recurse") = true,
         "(key, parameter) pairs, keys '<module path>::<param>' (prefixed by `prefix`); shared parameters once.")
      .def("parameters", [](const Module& self, bool recurse) { return self.parameters(recurse); },
           nb::arg("recurse") = true, "Every parameter below this module (or its own, recurse=False), each once.")
      .def("named_buffers", [](const Module& self, const std::string& prefix, bool recurse) {
        return prefixed(self.named_buffers(recurse), prefix);
      }, nb::arg("prefix") = "", nb::arg("recurse") = true)
      .def("buffers", [](const Module& self, bool recurse) {
        std::vector<Tensor> out;
        for (auto& [k, t] : self.named_buffers(recurse)) out.push_back(t);
        return out;
      }, nb::arg("recurse") = true)
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
      .def("named_modules", [](nb::handle self, const std::string& prefix) { return named_modules_py(self, prefix); },
           nb::arg("prefix") = "",
           "(path, module) for this module and every descendant, depth-first, each module once.")
      .def("modules", [](nb::handle self) {
        nb::list out;
        for (nb::handle item : named_modules_py(self, "")) out.append(item[1]);
        return out;
      }, "This module and every descendant, depth-first, each once.")
      .def("apply", [](nb::handle self, nb::callable fn) {
        // Children before parents, like PyTorch (used for custom initialisation).
        std::function<void(nb::handle)> visit = [&](nb::handle obj) {
          for (const auto& [slot, child] : nb::cast<Module&>(obj).children()) visit(nb::cast(child));
          fn(obj);
        };
        visit(self);
        return nb::borrow(self);
      }, nb::arg("fn"), "Calls fn(module) on every submodule, then on this one; returns self.")
      .def("state_dict", [](const Module& self, const std::string& prefix, bool keep_vars) {
        if (!keep_vars) return to_dict(self.state_dict(), prefix);
        // state_dict()'s keys and order (non-persistent buffers stay out), with the live tensors.
        std::map<std::string, Tensor> live;
        for (auto& [k, t] : self.named_parameters()) live.emplace(k, t);
        for (auto& [k, t] : self.named_buffers()) live.emplace(k, t);
        st::nn::StateDict out = self.state_dict();
        for (auto& [k, t] : out) t = live.at(k);
        return to_dict(out, prefix);
      }, nb::arg("prefix") = "", nb::arg("keep_vars") = false,
           "Parameters and buffers keyed '<module>::<param>' (prefixed by `prefix`); detached unless keep_vars.")
      .def("load_state_dict", [](Module& self, nb::handle state, bool strict) {
        const st::nn::LoadResult r = self.load_state_dict(state_from_py(state, "load_state_dict"), strict);
        return nb::module_::import_("spiraltorch._core.nn").attr("IncompatibleKeys")(r.missing_keys, r.unexpected_keys);
      }, nb::arg("state_dict"), nb::arg("strict") = true,
         "Copies matching entries in; checks everything first, so a failed load changes nothing. Returns "
         "IncompatibleKeys(missing_keys, unexpected_keys) (both empty under strict=True).")
      .def("register_forward_pre_hook", [](nb::handle self, nb::callable hook) {
        const auto fn = shared_callable(std::move(hook));
        const int id = nb::cast<Module&>(self).register_forward_pre_hook([fn](Module& m, const Tensor& x) {
          nb::gil_scoped_acquire gil;
          return hook_result((*fn)(py_module(m), nb::make_tuple(x)), "forward pre-hook");
        });
        return RemovableHandle{nb::borrow(self), id};
      }, nb::arg("hook"), "hook(module, args) -> None or a replacement input, run before forward.")
      .def("register_forward_hook", [](nb::handle self, nb::callable hook) {
        const auto fn = shared_callable(std::move(hook));
        const int id = nb::cast<Module&>(self).register_forward_hook([fn](Module& m, const Tensor& x, const Tensor& y) {
          nb::gil_scoped_acquire gil;
          return hook_result((*fn)(py_module(m), nb::make_tuple(x), y), "forward hook");
        });
        return RemovableHandle{nb::borrow(self), id};
      }, nb::arg("hook"), "hook(module, args, output) -> None or a replacement output, run after forward.")
      .def("register_full_backward_hook", [](nb::handle self, nb::callable hook) {
        const auto fn = shared_callable(std::move(hook));
        const int id = nb::cast<Module&>(self).register_full_backward_hook(
            [fn](Module& m, const Tensor& grad_input, const Tensor& grad_output) {
              nb::gil_scoped_acquire gil;
              return hook_result((*fn)(py_module(m), grad_tuple(grad_input), grad_tuple(grad_output)),
                                 "backward hook");
            });
        return RemovableHandle{nb::borrow(self), id};
      }, nb::arg("hook"),
         "hook(module, grad_input, grad_output) -> None or a replacement grad_input, called when the gradient "
         "with respect to the module's input is computed (grad_input is (None,) when the input needs none).")
      .def("remove_hook", &Module::remove_hook, nb::arg("id"))
      .def("requires_grad_", [](nb::handle self, bool requires_grad) {
        nb::cast<Module&>(self).requires_grad_(requires_grad);
        return nb::borrow(self);
      }, nb::arg("requires_grad") = true, "Sets requires_grad on every floating parameter; returns self.")
      .def("train", [](nb::handle self, bool mode) {
        nb::cast<Module&>(self).train(mode);
        return nb::borrow(self);
      }, nb::arg("mode") = true)
      .def("eval", [](nb::handle self) {
        nb::cast<Module&>(self).eval();
        return nb::borrow(self);
      })
      .def_prop_ro("training", [](const Module& self) { return self.is_training(); })
      .def("zero_grad", [](Module& self, bool set_to_none) { self.zero_grad(set_to_none); },
           nb::arg("set_to_none") = true, "Drops every parameter's .grad (set_to_none) or zeroes it in place.")
      .def("to", [](nb::handle self, nb::handle target) {
        // A device name, or a device object (st.device) that prints as one.
        if (nb::isinstance<nb::str>(target) || (nb::hasattr(target, "type") && nb::hasattr(target, "index"))) {
          const std::string s = nb::cast<std::string>(nb::str(target));
          if (s == "cpu" || s.rfind("cpu:", 0) == 0 || s.rfind("cuda", 0) == 0 || s.rfind("wgpu", 0) == 0) {
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
      // The original's spellings: Linear("name", in, out) and Linear(in, out, "name").
      .def("__init__", [](st::nn::Linear* self, std::string name, int64_t in, int64_t out, bool bias) {
        new (self) st::nn::Linear(in, out, bias, std::move(name));
      }, nb::arg("name"), nb::arg("in_features"), nb::arg("out_features"), nb::arg("bias") = true)
      .def("__init__", [](st::nn::Linear* self, int64_t in, int64_t out, std::string name) {
        new (self) st::nn::Linear(in, out, true, std::move(name));
      }, nb::arg("in_features"), nb::arg("out_features"), nb::arg("name"))
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
