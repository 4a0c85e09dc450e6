// spiraltorch._core.nn: the Module base (subclassable from Python) and core layers.
#include <nanobind/stl/pair.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/trampoline.h>

#include <deque>
#include <functional>
#include <map>
#include <set>

#include "convert.h"
#include "nn_bind.h"
#include "spiraltorch/nn/linear.h"
#include "spiraltorch/nn/sequential.h"
#include "spiraltorch/zspace/module_hypergrad.h"

namespace stpy {

using st::nn::Module;

namespace {

std::string text(nb::handle v) { return nb::str(v).c_str(); }

// torch.nn.Module's repr: "Name(extra)" for a leaf, one indented "(key): child" line per child
// otherwise; extra_repr() and the children's repr are called through Python, so subclasses' overrides
// take part.
std::string module_repr(nb::handle self) {
  const std::string name = text(nb::handle(reinterpret_cast<PyObject*>(Py_TYPE(self.ptr()))).attr("__name__"));
  const std::string extra = text(self.attr("extra_repr")());
  nb::list children;
  for (nb::handle item : self.attr("named_children")()) children.append(item);
  if (nb::len(children) == 0) return name + "(" + extra + ")";
  std::vector<std::string> lines;
  if (!extra.empty()) {
    size_t start = 0;
    for (size_t nl; (nl = extra.find('\n', start)) != std::string::npos; start = nl + 1) {
      lines.push_back(extra.substr(start, nl - start));
    }
    lines.push_back(extra.substr(start));
  }
  for (nb::handle item : children) {
    std::string body = text(nb::repr(item[nb::int_(1)]));
    for (size_t at = 0; (at = body.find('\n', at)) != std::string::npos; at += 3) body.replace(at, 1, "\n  ");
    lines.push_back("(" + text(item[nb::int_(0)]) + "): " + body);
  }
  std::string out = name + "(\n  ";
  for (size_t i = 0; i < lines.size(); ++i) out += (i ? "\n  " : "") + lines[i];
  return out + "\n)";
}

// The buffer at a dotted path ("block.norm.running_mean"), as torch.nn.Module.get_buffer.
nb::object module_get_buffer(nb::handle self, const std::string& target) {
  nb::object module = nb::borrow(self);
  size_t start = 0;
  for (size_t dot; (dot = target.find('.', start)) != std::string::npos; start = dot + 1) {
    const std::string part = target.substr(start, dot - start);
    nb::object child;
    for (nb::handle item : module.attr("named_children")()) {
      if (text(item[nb::int_(0)]) == part) child = nb::borrow(item[nb::int_(1)]);
    }
    if (!child.is_valid()) {
      throw nb::attribute_error(("get_buffer: '" + target + "': no submodule '" + part + "'").c_str());
    }
    module = child;
  }
  const std::string name = target.substr(start);
  for (nb::handle entry : module.attr("named_buffers")(nb::arg("recurse") = false)) {
    const std::string key = text(entry[nb::int_(0)]);
    const size_t sep = key.rfind("::");
    if ((sep == std::string::npos ? key : key.substr(sep + 2)) == name) return nb::borrow(entry[nb::int_(1)]);
  }
  throw nb::attribute_error(("get_buffer: '" + target + "' is not a buffer").c_str());
}

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

// ---- Hooks: the registry and the hooked call are Module's (C++); the binding only carries the
// Python objects along. A call from Python keeps its positional tuple, and the object forward
// returned, as the CallValues' front, so Python hooks see non-tensor arguments and the output as
// forward returned it. A call from C++ (a native container, operator()) has no front: its hooks see
// a tuple of the tensors, and the output tensor itself.

using st::nn::CallValues;

struct PyFront final : st::nn::CallFront {
  std::shared_ptr<nb::object> obj;  // released with the GIL (shared_object)
};

const nb::object* front_of(const CallValues& v) {
  const auto* f = dynamic_cast<const PyFront*>(v.front.get());
  return f ? f->obj.get() : nullptr;
}

bool is_sequence(nb::handle obj) { return nb::isinstance<nb::tuple>(obj) || nb::isinstance<nb::list>(obj); }

// The tensors of an argument tuple or of what forward returned, in order: a Tensor itself, or the
// Tensor entries of a tuple or list (torch's hooks look no deeper either).
CallValues py_values(nb::object obj) {
  CallValues v;
  auto front = std::make_shared<PyFront>();
  front->arity = 1;  // torch: a result that is not a tuple is one value
  if (nb::isinstance<Tensor>(obj)) {
    v.tensors.push_back(nb::cast<Tensor>(obj));
    front->tensor_slots.push_back(0);
  } else if (is_sequence(obj)) {
    front->arity = 0;
    for (nb::handle h : obj) {
      if (nb::isinstance<Tensor>(h)) {
        v.tensors.push_back(nb::cast<Tensor>(h));
        front->tensor_slots.push_back(front->arity);
      }
      ++front->arity;
    }
  }
  front->obj = shared_object(std::move(obj));
  v.front = std::move(front);
  return v;
}

nb::object tensor_or_none(const Tensor& t) { return t.defined() ? nb::cast(t) : nb::none(); }

// `v` as a Python object: its front with the tensors put back in their places (the backward gates
// pass aliases on, a C++ hook may replace tensors); without a front, a tuple of the tensors (or the
// tensor itself for a single output).
nb::object py_object(const CallValues& v, bool single_output, const char* what) {
  const nb::object* front = front_of(v);
  if (!front) {
    if (single_output && v.tensors.size() == 1) return tensor_or_none(v.tensors[0]);
    nb::list items;
    for (const Tensor& t : v.tensors) items.append(tensor_or_none(t));
    return nb::tuple(items);
  }
  const nb::object& obj = *front;
  size_t held = nb::isinstance<Tensor>(obj) ? 1 : 0;
  if (is_sequence(obj)) {
    for (nb::handle h : obj) held += nb::isinstance<Tensor>(h) ? 1 : 0;
  }
  if (held != v.tensors.size()) {
    throw st::ValueError(std::string(what) + ": a hook left " + std::to_string(v.tensors.size()) +
                         " tensors for a Python value holding " + std::to_string(held));
  }
  if (nb::isinstance<Tensor>(obj)) return tensor_or_none(v.tensors[0]);
  if (!is_sequence(obj)) return obj;
  nb::list items;
  size_t i = 0;
  bool same = true;
  for (nb::handle h : obj) {
    if (!nb::isinstance<Tensor>(h)) {
      items.append(h);
      continue;
    }
    const Tensor& t = v.tensors[i++];
    same = same && t.defined() && t.same(nb::cast<const Tensor&>(h));
    items.append(tensor_or_none(t));
  }
  if (same) return obj;
  if (nb::isinstance<nb::list>(obj)) return obj.type()(items);
  if (obj.type().is(nb::handle(reinterpret_cast<PyObject*>(&PyTuple_Type)))) return nb::tuple(items);
  if (nb::hasattr(obj, "_fields")) return obj.type()(*items);  // a named tuple takes its fields one by one
  return obj.type()(items);
}

nb::object args_tuple(const CallValues& v, const char* what) {
  nb::object args = py_object(v, false, what);
  return nb::isinstance<nb::tuple>(args) ? args : nb::make_tuple(args);
}

std::string type_of(nb::handle v) { return nb::cast<std::string>(v.type().attr("__name__")); }

// A Python hook's replacement for the tensors of a call from C++, which has nothing else to carry:
// a Tensor or a tuple of Tensors.
CallValues tensors_only(const nb::object& r, const char* what, const Module& m) {
  CallValues v;
  if (nb::isinstance<Tensor>(r)) {
    v.tensors.push_back(nb::cast<Tensor>(r));
    return v;
  }
  bool ok = nb::isinstance<nb::tuple>(r);
  if (ok) {
    for (nb::handle h : r) ok = ok && nb::isinstance<Tensor>(h);
  }
  if (!ok) {
    throw nb::type_error((m.type_name() + " " + what +
                          ": a hook on a call from C++ (tensors only) must return None, a Tensor or a tuple of "
                          "Tensors, got " +
                          type_of(r))
                             .c_str());
  }
  for (nb::handle h : r) v.tensors.push_back(nb::cast<Tensor>(h));
  return v;
}

nb::object grad_tuple(const std::vector<Tensor>& g) {
  nb::list items;
  for (const Tensor& t : g) items.append(tensor_or_none(t));
  return nb::tuple(items);
}

st::nn::ForwardPreHook python_pre_hook(nb::callable hook) {
  return [fn = shared_callable(std::move(hook))](Module& m, const CallValues& args) -> std::optional<CallValues> {
    nb::gil_scoped_acquire gil;
    nb::object r = (*fn)(py_module(m), args_tuple(args, "forward pre-hook"));
    if (r.is_none()) return std::nullopt;
    if (!front_of(args)) return tensors_only(r, "forward pre-hook", m);
    // torch: a result that is not a tuple is the single argument
    return py_values(nb::isinstance<nb::tuple>(r) ? r : nb::make_tuple(r));
  };
}

st::nn::ForwardHook python_forward_hook(nb::callable hook) {
  return [fn = shared_callable(std::move(hook))](Module& m, const CallValues& args,
                                                 const CallValues& out) -> std::optional<CallValues> {
    nb::gil_scoped_acquire gil;
    nb::object r = (*fn)(py_module(m), args_tuple(args, "forward hook"), py_object(out, true, "forward hook"));
    if (r.is_none()) return std::nullopt;
    return front_of(out) ? py_values(r) : tensors_only(r, "forward hook", m);
  };
}

st::nn::BackwardHook python_backward_hook(nb::callable hook) {
  return [fn = shared_callable(std::move(hook))](
             Module& m, const std::vector<Tensor>& grad_input,
             const std::vector<Tensor>& grad_output) -> std::optional<std::vector<Tensor>> {
    nb::gil_scoped_acquire gil;
    const nb::object r = (*fn)(py_module(m), grad_tuple(grad_input), grad_tuple(grad_output));
    if (r.is_none()) return std::nullopt;
    if (nb::isinstance<Tensor>(r)) return std::vector<Tensor>{nb::cast<Tensor>(r)};
    std::vector<Tensor> out;
    if (is_sequence(r)) {
      for (nb::handle h : r) {
        if (h.is_none()) {
          out.emplace_back();
        } else if (nb::isinstance<Tensor>(h)) {
          out.push_back(nb::cast<Tensor>(h));
        } else {
          throw nb::type_error(
              ("backward hook: grad_input entries must be Tensors or None, got " + type_of(h)).c_str());
        }
      }
      return out;
    }
    throw nb::type_error(
        ("backward hook: a hook must return None or a tuple of Tensors/None, got " + type_of(r)).c_str());
  };
}

// module(*args, **kwargs) for a Python forward: Module::call_hooked runs the hooks around it; kwargs
// go to forward unchanged (hooks do not see them).
nb::object call_python_forward(nb::handle self, nb::args args, nb::kwargs kwargs) {
  Module& m = nb::cast<Module&>(self);
  nb::object forward = self.attr("forward");
  if (!m.has_hooks()) return forward(*args, **kwargs);
  const CallValues out = m.call_hooked(
      py_values(args), [&](const CallValues& a) { return py_values(forward(*args_tuple(a, "forward"), **kwargs)); });
  return py_object(out, true, "forward");
}

// Native layers whose call takes several arguments (the losses, LSTM/GRU and their cells,
// attention and transformer layers, Bilinear, ...) bind __call__ to their own forward. The first
// hook registered from Python on such a layer wraps its class's __call__ so hooks run around it
// (Module::call_hooked) exactly as around a single-tensor call; classes nobody hooks keep the direct
// call, and the wrapper of a hooked one calls the bound function directly while an instance has no
// hooks. It keeps the original's signatures (defaults written out) and docstrings.
// A class bound here (a Python subclass of one is a nanobind type too, but defined elsewhere).
bool is_bound_class(nb::handle cls) {
  return nb::type_check(cls) && nb::cast<std::string>(cls.attr("__module__")).starts_with("spiraltorch._core");
}

void hook_native_call(nb::handle module_type) {
  static std::set<PyObject*> wrapped;
  static std::deque<std::string> texts;  // nb::sig and doc strings must outlive the functions
  const nb::handle base = nb::type<Module>();
  for (const nb::handle cls : nb::borrow<nb::tuple>(module_type.attr("__mro__"))) {
    PyObject* own = PyDict_GetItemString(reinterpret_cast<PyTypeObject*>(cls.ptr())->tp_dict, "__call__");
    if (own == nullptr) continue;
    // The base's single-tensor call runs the hooks itself; a Python class's __call__ is its own
    // (the base gives those that override forward one that runs the hooks).
    if (cls.is(base) || !is_bound_class(cls) || !wrapped.insert(cls.ptr()).second) return;
    nb::object original = nb::borrow(own);
    auto call = [original](nb::handle self, nb::args args, nb::kwargs kwargs) -> nb::object {
      Module& mod = nb::cast<Module&>(self);
      if (!mod.has_hooks()) return original(self, *args, **kwargs);
      const CallValues out = mod.call_hooked(py_values(args), [&](const CallValues& a) {
        return py_values(original(self, *args_tuple(a, "forward"), **kwargs));
      });
      return py_object(out, true, "forward");
    };
    // One wrapper per overload, defined one after another so nanobind chains them: the first takes
    // every call (the original picks the overload), the others carry their signatures.
    const nb::tuple overloads = nb::borrow<nb::tuple>(original.attr("__nb_signature__"));
    nb::delattr(cls, "__call__");
    for (const nb::handle ov : overloads) {
      const nb::tuple overload = nb::borrow<nb::tuple>(ov);
      std::string sig = nb::cast<std::string>(overload[0]);
      if (!overload[2].is_none()) {
        const nb::tuple values = nb::borrow<nb::tuple>(overload[2]);
        for (size_t k = values.size(); k-- > 0;) {  // higher marks first: \\12 is not \\1 followed by 2
          const std::string mark = "\\" + std::to_string(k);
          const std::string text = nb::cast<std::string>(nb::repr(values[k]));
          for (size_t at = sig.find(mark); at != std::string::npos; at = sig.find(mark, at + text.size())) {
            sig.replace(at, mark.size(), text);
          }
        }
      }
      const char* sig_text = texts.emplace_back(std::move(sig)).c_str();
      const char* doc_text =
          texts.emplace_back(overload[1].is_none() ? "" : nb::cast<std::string>(overload[1])).c_str();
      nb::cpp_function_def(call, nb::scope(cls), nb::name("__call__"), nb::is_method(), nb::sig(sig_text),
                           nb::arg("args"), nb::arg("kwargs"), doc_text);
    }
    return;
  }
}

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

// ---- PyTorch's attribute semantics for every Module (native layers and Python subclasses) ----
// Children, parameters and buffers live in the C++ module, never in the instance __dict__:
// assignment registers or replaces them, reading falls back to them (__getattr__), del removes
// them. A parameter or buffer that is removed, or registered as None, stays as an undefined
// placeholder (state dicts and iteration skip it); None-valued entries read as None through a
// None in the instance __dict__, so a deleted entry raises AttributeError like PyTorch.

std::string type_name_of(nb::handle self) { return nb::cast<std::string>(self.type().attr("__name__")); }

std::shared_ptr<Module> own_child(const Module& m, const std::string& slot) {
  for (const auto& [s, c] : m.children()) {
    if (s == slot) return c;
  }
  return nullptr;
}

// The instance __dict__ (every Module has one: the base class has dynamic attributes).
nb::object instance_dict(nb::handle self) {
  PyObject* d = PyObject_GenericGetDict(self.ptr(), nullptr);
  if (!d) {
    PyErr_Clear();
    return nb::none();
  }
  return nb::steal(d);
}

void drop_plain(nb::handle self, nb::handle name) {
  nb::object d = instance_dict(self);
  if (!d.is_none() && PyDict_Contains(d.ptr(), name.ptr()) == 1) PyDict_DelItem(d.ptr(), name.ptr());
}

// Stores `value` as a plain attribute (object.__setattr__: a property's setter runs, a read-only one
// raises). `registered`: the name is a registered entry just cleared to None, and a read-only class
// property for it (Linear.bias) already reads None from the registry, so its refusal is not an error.
void store_plain(nb::handle self, nb::handle name, nb::handle value, bool registered = false) {
  if (PyObject_GenericSetAttr(self.ptr(), name.ptr(), value.ptr()) == 0) return;
  if (registered && PyErr_ExceptionMatches(PyExc_AttributeError) &&
      _PyType_Lookup(reinterpret_cast<PyTypeObject*>(self.type().ptr()), name.ptr()) != nullptr) {
    PyErr_Clear();
    return;
  }
  throw nb::python_error();
}

bool defined_entry(Tensor* t) { return t != nullptr && t->defined(); }

// module.name = value with torch.nn.Module.__setattr__'s rules.
void module_setattr(nb::handle self, nb::str name_obj, nb::handle value) {
  const std::string name = nb::cast<std::string>(name_obj);
  const bool is_module = nb::isinstance<Module>(value);
  const bool is_tensor = nb::isinstance<Tensor>(value);
  if (!nb::inst_ready(self)) {
    if (is_module) {
      throw nb::attribute_error(("cannot assign module '" + name + "' before Module.__init__() call").c_str());
    }
    if (PyObject_GenericSetAttr(self.ptr(), name_obj.ptr(), value.ptr()) != 0) throw nb::python_error();
    return;
  }
  Module& m = nb::cast<Module&>(self);
  const std::shared_ptr<Module> child = own_child(m, name);
  Tensor* param = m.find_parameter(name);
  Tensor* buffer = m.find_buffer(name);
  const std::string what = nb::cast<std::string>(value.type().attr("__name__"));
  if (is_module) {
    if (param) m.register_parameter(name, Tensor(), false);
    if (buffer) m.register_buffer(name, Tensor(), m.is_persistent_buffer(name));
    m.register_module(name, nb::cast<std::shared_ptr<Module>>(value));
    drop_plain(self, name_obj);
    return;
  }
  if (is_tensor) {
    Tensor t = nb::cast<Tensor>(value);
    if (buffer && !param) {  // assigning to a buffer replaces it, keeping its persistence
      m.register_buffer(name, t, m.is_persistent_buffer(name));
      drop_plain(self, name_obj);
      return;
    }
    if (param || (t.requires_grad() && t.is_leaf())) {  // a parameter (nn.Parameter is a leaf requiring grad)
      if (child) m.remove_child(name);
      m.register_parameter(name, t, t.requires_grad());
      drop_plain(self, name_obj);
      return;
    }
    if (child) {
      throw nb::type_error(("cannot assign 'Tensor' as child module '" + name + "' (Module or None expected)").c_str());
    }
    store_plain(self, name_obj, value);
    return;
  }
  if (value.is_none()) {
    if (child) m.remove_child(name);
    if (param) m.register_parameter(name, Tensor(), false);
    if (buffer) m.register_buffer(name, Tensor(), m.is_persistent_buffer(name));
    store_plain(self, name_obj, value, child || param || buffer);
    return;
  }
  if (child) {
    throw nb::type_error(
        ("cannot assign '" + what + "' as child module '" + name + "' (Module or None expected)").c_str());
  }
  if (defined_entry(param)) {
    throw nb::type_error(
        ("cannot assign '" + what + "' as parameter '" + name + "' (Parameter or None expected)").c_str());
  }
  if (defined_entry(buffer)) {
    throw nb::type_error(("cannot assign '" + what + "' as buffer '" + name + "' (Tensor or None expected)").c_str());
  }
  store_plain(self, name_obj, value);
}

// add_module / register_module: a Module (or None) as the child `name`.
void add_module(nb::handle self, nb::str name, nb::handle module) {
  if (!module.is_none() && !nb::isinstance<Module>(module)) {
    throw nb::type_error((type_name_of(module) + " is not a Module subclass").c_str());
  }
  module_setattr(self, name, module);
}

// Called when normal lookup fails: the module's own children, parameters and buffers by name.
nb::object module_getattr(nb::handle self, const std::string& name) {
  if (nb::inst_ready(self) && !(name.size() > 4 && name.rfind("__", 0) == 0)) {
    Module& m = nb::cast<Module&>(self);
    if (std::shared_ptr<Module> c = own_child(m, name)) return nb::cast(c);
    if (Tensor* p = m.find_parameter(name); defined_entry(p)) return nb::cast(*p);
    if (Tensor* b = m.find_buffer(name); defined_entry(b)) return nb::cast(*b);
  }
  throw nb::attribute_error(("'" + type_name_of(self) + "' object has no attribute '" + name + "'").c_str());
}

void module_delattr(nb::handle self, nb::str name_obj) {
  const std::string name = nb::cast<std::string>(name_obj);
  if (nb::inst_ready(self)) {
    Module& m = nb::cast<Module&>(self);
    bool found = false;
    if (own_child(m, name)) {
      m.remove_child(name);
      found = true;
    }
    if (m.find_parameter(name)) {
      m.register_parameter(name, Tensor(), false);
      found = true;
    }
    if (m.find_buffer(name)) {
      m.register_buffer(name, Tensor(), m.is_persistent_buffer(name));
      found = true;
    }
    if (found) {
      drop_plain(self, name_obj);
      return;
    }
  }
  if (PyObject_GenericSetAttr(self.ptr(), name_obj.ptr(), nullptr) != 0) throw nb::python_error();
}

// An iterator over a list (PyTorch's parameters(), children(), ... are generators).
nb::object iter_of(nb::handle seq) { return nb::steal(PyObject_GetIter(seq.ptr())); }

// The submodule at a dotted path of attribute names ("" is the module itself).
nb::object submodule_at(nb::handle self, const std::string& target, const char* op) {
  nb::object cur = nb::borrow(self);
  if (target.empty()) return cur;
  size_t start = 0;
  while (true) {
    const size_t dot = target.find('.', start);
    const std::string part = target.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    std::shared_ptr<Module> c = own_child(nb::cast<Module&>(cur), part);
    if (!c) {
      throw nb::attribute_error((std::string(op) + ": " + type_name_of(cur) + " has no submodule '" + part +
                                 "' (looking up '" + target + "')")
                                    .c_str());
    }
    cur = nb::cast(c);
    if (dot == std::string::npos) return cur;
    start = dot + 1;
  }
}

// Handle returned by register_*_hook: remove() (or leaving a with-block) unregisters. It holds the
// module's lifetime token, not the module: a kept handle does not keep its module alive (torch's
// handles hold a weak reference too).
struct RemovableHandle {
  Module* module;
  std::weak_ptr<const void> alive;
  int id;
  void remove() {
    if (alive.lock()) module->remove_hook(id);
    alive.reset();
  }
};

RemovableHandle handle_of(Module& m, int id) { return RemovableHandle{&m, m.lifetime(), id}; }

// A hook registered from Python: the module's class first gets a hooked __call__ where it binds its
// own (hook_native_call); `add` registers the wrapped hook and returns its id.
template <typename Add>
RemovableHandle register_python_hook(nb::handle py_self, Add&& add) {
  hook_native_call(py_self.type());
  Module& m = nb::cast<Module&>(py_self);
  return handle_of(m, add(m));
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
  m.attr("IncompatibleKeys") =
      nb::module_::import_("collections")
          .attr("namedtuple")("IncompatibleKeys", nb::make_tuple("missing_keys", "unexpected_keys"));
  nb::class_<RemovableHandle>(m, "RemovableHandle", "Returned by register_*_hook; remove() unregisters the hook.")
      .def_ro("id", &RemovableHandle::id, "The hook's id on its module (what remove_hook takes).")
      .def("remove", &RemovableHandle::remove, "Unregisters the hook; a second call does nothing.")
      .def("__enter__", [](nb::handle h) { return SelfRet(nb::borrow(h)); }, "Returns the handle itself.")
      .def("__exit__", [](RemovableHandle& h, nb::handle, nb::handle, nb::handle) { h.remove(); },
           nb::sig("def __exit__(self, exc_type: type[BaseException] | None, exc_value: BaseException | None, "
                   "traceback: types.TracebackType | None) -> None"),
           nb::arg("exc_type").none(), nb::arg("exc_value").none(), nb::arg("traceback").none(),
           "Unregisters the hook (remove()).");
  nb::class_<Module, PyModule>(m, "Module", "Base of every layer; Python subclasses override forward().",
                               nb::dynamic_attr())
      .def(nb::init<std::string>(), nb::arg("name") = "",
           "A module with no parameters; `name` prefixes its parameters' keys ('' takes its place in the "
           "parent). Subclass it in Python and override forward().")
      .def("__setattr__", &module_setattr, nb::sig("def __setattr__(self, name: str, value: typing.Any) -> None"),
           nb::arg("name"), nb::arg("value").none(),
           "Assigning a Module registers (or replaces) a child, a parameter (a leaf that requires grad) registers "
           "or replaces a parameter, a tensor assigned to a buffer's name replaces the buffer; anything else is a "
           "plain attribute. Registered entries are not stored in __dict__ (torch.nn.Module's rules).")
      .def("extra_repr", [](nb::handle) { return std::string(); },
           "The layer's own settings for ``repr`` (empty by default; override like PyTorch).")
      .def("__repr__", &module_repr, nb::sig("def __repr__(self) -> str"),
           "PyTorch's nested module repr: ``Name(extra)`` for leaves, one indented ``(key): child`` line per child "
           "otherwise.")
      .def("cuda",
           [](nb::handle self, nb::handle device) -> nb::object {
    if (device.is_none()) return self.attr("to")("cuda");
    if (PyLong_Check(device.ptr())) return self.attr("to")("cuda:" + std::to_string(nb::cast<int64_t>(device)));
    return self.attr("to")(device);
  }, nb::arg("device").none() = nb::none(), nb::sig("def cuda(self, device: int | str | None = None) -> Module"),
           "Moves every parameter and buffer to a CUDA device (``\"cuda\"``, or ``cuda:<device>`` for an int) in "
           "place, like ``torch.nn.Module.cuda``; returns the module.")
      .def("cpu", [](nb::handle self) { return self.attr("to")("cpu"); }, nb::sig("def cpu(self) -> Module"),
           "Moves every parameter and buffer to the CPU in place; returns the module.")
      .def("get_buffer", &module_get_buffer, nb::arg("target"),
           nb::sig("def get_buffer(self, target: str) -> spiraltorch._core.Tensor"),
           "The buffer at ``target`` (a dotted path: ``\"block.norm.running_mean\"``), like "
           "torch.nn.Module.get_buffer; raises AttributeError naming the path when there is none.")
      .def("__getattr__", &module_getattr, nb::arg("name"), "The module's own child, parameter or buffer called name.")
      .def("__delattr__", &module_delattr, nb::arg("name"), "Removes a child, parameter, buffer or plain attribute.")
      .def("add_module",
           [](nb::handle self, nb::str name, std::optional<nb::typed<nb::handle, Module>> module) {
    add_module(self, name, module ? nb::handle(*module) : nb::none());
  }, nb::arg("name"), nb::arg("module").none(),
           "Registers module (or None) as the child `name`; TypeError for anything else.")
      .def("register_module",
           [](nb::handle self, nb::str name, std::optional<nb::typed<nb::handle, Module>> module) {
    add_module(self, name, module ? nb::handle(*module) : nb::none());
  }, nb::arg("name"), nb::arg("module").none(), "Alias of add_module.")
      .def("get_submodule",
           [](nb::handle self, const std::string& target) {
    return nb::typed<nb::object, Module>(submodule_at(self, target, "get_submodule"));
  }, nb::arg("target"),
           "The submodule at a dotted path of attribute names ('encoder.layers.0'); AttributeError naming the "
           "missing part.")
      .def("get_parameter",
           [](nb::handle self, const std::string& target) -> Tensor {
    const size_t dot = target.rfind('.');
    nb::object owner = submodule_at(self, dot == std::string::npos ? "" : target.substr(0, dot), "get_parameter");
    const std::string name = dot == std::string::npos ? target : target.substr(dot + 1);
    Tensor* p = nb::cast<Module&>(owner).find_parameter(name);
    if (!defined_entry(p)) throw nb::attribute_error(("get_parameter: '" + target + "' is not a parameter").c_str());
    return *p;
  }, nb::arg("target"), "The parameter at a dotted path ('encoder.layers.0.linear1.weight').")
      .def("forward", &Module::forward, nb::arg("input"),
           "The layer's computation on one tensor; Python subclasses override it (call the module, not "
           "forward, so hooks run).")
      .def("__call__", [](Module& self, const Tensor& x) { return self(x); }, nb::arg("input"),
           "forward(input) with the registered hooks around it.")
      .def_prop_rw("name", [](const Module& self) { return self.name(); },
                   [](Module& self, const std::string& n) { self.set_name(n); },
                   "The explicit name ('' when the module takes its key from its parent).")
      .def("_register_module", [](Module& self, const std::string& slot,
                                  std::shared_ptr<Module> child) { self.register_module(slot, std::move(child)); })
      .def("_remove_child", &Module::remove_child)
      .def("register_parameter",
           [](nb::handle self, nb::str name, std::optional<Tensor> t) {
    Module& m = nb::cast<Module&>(self);
    const std::string key = nb::cast<std::string>(name);
    if (own_child(m, key)) m.remove_child(key);
    if (t) {
      m.register_parameter(key, *t, t->requires_grad() || st::is_floating(t->dtype()));
      drop_plain(self, name);
    } else {  // a None parameter: the attribute reads None, state dicts leave it out
      m.register_parameter(key, Tensor(), false);
      store_plain(self, name, nb::none(), true);
    }
  }, nb::arg("name"), nb::arg("param").none(),
           "Registers (or replaces) a parameter; None registers the name "
           "with no value (the attribute reads None).")
      .def("register_buffer",
           [](nb::handle self, nb::str name, std::optional<Tensor> t, bool persistent) {
    Module& m = nb::cast<Module&>(self);
    const std::string key = nb::cast<std::string>(name);
    if (own_child(m, key)) m.remove_child(key);
    if (Tensor* p = m.find_parameter(key); defined_entry(p)) {
      throw nb::key_error(("attribute '" + key + "' already exists as a parameter").c_str());
    }
    m.register_buffer(key, t ? *t : Tensor(), persistent);
    if (t) {
      drop_plain(self, name);
    } else {
      store_plain(self, name, nb::none(), true);
    }
  }, nb::arg("name"), nb::arg("tensor").none(), nb::arg("persistent") = true,
           "Registers a buffer: moved with the module and listed by named_buffers(); in state_dict() unless "
           "persistent=False; the attribute `name` reads it.")
      .def("_is_persistent_buffer", &Module::is_persistent_buffer, nb::arg("name"))
      // The iteration methods return iterators, as PyTorch's generators (next(m.parameters()) works;
      // list(...) when a list is needed).
      .def("named_parameters",
           [](const Module& self, const std::string& prefix, bool recurse, bool remove_duplicate) {
    st::nn::StateDict all = prefixed(self.named_parameters(recurse), prefix);
    if (remove_duplicate) {  // a tied parameter appears once, under its first key
      std::set<st::TensorImpl*> seen;
      std::erase_if(all, [&](const auto& e) { return !seen.insert(e.second.impl()).second; });
    }
    return nb::typed<nb::iterator, std::tuple<std::string, Tensor>>(nb::borrow<nb::iterator>(iter_of(nb::cast(all))));
  }, nb::arg("prefix") = "", nb::arg("recurse") = true, nb::arg("remove_duplicate") = true,
           "An iterator of (key, parameter) pairs, keys '<module path>::<param>' (prefixed by `prefix`); a shared "
           "parameter once unless remove_duplicate=False.")
      .def("parameters",
           [](const Module& self, bool recurse) {
    return nb::typed<nb::iterator, Tensor>(nb::borrow<nb::iterator>(iter_of(nb::cast(self.parameters(recurse)))));
  }, nb::arg("recurse") = true,
           "An iterator over every parameter below this module (or its own, recurse=False), each once.")
      .def("named_buffers",
           [](const Module& self, const std::string& prefix, bool recurse) {
    return nb::typed<nb::iterator, std::tuple<std::string, Tensor>>(
        nb::borrow<nb::iterator>(iter_of(nb::cast(prefixed(self.named_buffers(recurse), prefix)))));
  }, nb::arg("prefix") = "", nb::arg("recurse") = true,
           "An iterator of (key, buffer) pairs, keys '<module path>::<buffer>' (prefixed by `prefix`).")
      .def("buffers",
           [](const Module& self, bool recurse) {
    std::vector<Tensor> out;
    for (auto& [k, t] : self.named_buffers(recurse)) out.push_back(t);
    return nb::typed<nb::iterator, Tensor>(nb::borrow<nb::iterator>(iter_of(nb::cast(out))));
  }, nb::arg("recurse") = true, "An iterator over the buffers (running statistics and the like).")
      .def("children",
           [](const Module& self) {
    std::vector<std::shared_ptr<Module>> out;
    for (auto& [k, c] : self.children()) out.push_back(c);
    return nb::typed<nb::iterator, Module>(nb::borrow<nb::iterator>(iter_of(nb::cast(out))));
  }, "An iterator over the direct children.")
      .def("named_children",
           [](const Module& self) {
    std::vector<std::pair<std::string, std::shared_ptr<Module>>> out;
    for (auto& [k, c] : self.children()) out.emplace_back(self.child_key(k, *c), c);
    return nb::typed<nb::iterator, std::tuple<std::string, Module>>(nb::borrow<nb::iterator>(iter_of(nb::cast(out))));
  }, "An iterator of (key, child) pairs.")
      .def("named_modules",
           [](nb::handle self, std::optional<nb::typed<nb::handle, nb::set>> memo, const std::string& prefix, bool) {
    (void)memo;
    return nb::typed<nb::iterator, std::tuple<std::string, Module>>(
        nb::borrow<nb::iterator>(iter_of(named_modules_py(self, prefix))));
  }, nb::arg("memo").none() = nb::none(), nb::arg("prefix") = "", nb::arg("remove_duplicate") = true,
           "An iterator of (path, module) for this module and every descendant, depth-first, each module once "
           "(memo and remove_duplicate are accepted for PyTorch compatibility and ignored).")
      .def("modules",
           [](nb::handle self) {
    nb::list out;
    for (nb::handle item : named_modules_py(self, "")) out.append(item[1]);
    return nb::typed<nb::iterator, Module>(nb::borrow<nb::iterator>(iter_of(out)));
  }, "An iterator over this module and every descendant, depth-first, each once.")
      .def("apply",
           [](nb::handle self, nb::callable fn) {
    // Children before parents, like PyTorch (used for custom initialisation).
    std::function<void(nb::handle)> visit = [&](nb::handle obj) {
      for (const auto& [slot, child] : nb::cast<Module&>(obj).children()) visit(nb::cast(child));
      fn(obj);
    };
    visit(self);
    return SelfRet(nb::borrow(self));
  }, nb::arg("fn"), "Calls fn(module) on every submodule, then on this one; returns self.")
      .def("state_dict",
           [](const Module& self, const std::string& prefix, bool keep_vars) {
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
      .def("load_state_dict",
           [](Module& self, StateArg state, bool strict) {
    const st::nn::LoadResult r = self.load_state_dict(state_from_py(state, "load_state_dict"), strict);
    return nb::typed<nb::object, std::tuple<std::vector<std::string>, std::vector<std::string>>>(
        nb::module_::import_("spiraltorch._core.nn").attr("IncompatibleKeys")(r.missing_keys, r.unexpected_keys));
  }, nb::arg("state_dict"), nb::arg("strict") = true,
           "Copies matching entries in; checks everything first, so a failed load changes nothing. Returns "
           "IncompatibleKeys(missing_keys, unexpected_keys) (both empty under strict=True); CheckpointError or "
           "ShapeError name the offending key.")
      .def("register_forward_pre_hook",
           [](nb::handle py_self, nb::callable hook) {
    return register_python_hook(
        py_self, [&](Module& m) { return m.register_forward_pre_hook(python_pre_hook(std::move(hook))); });
  }, nb::arg("hook"),
           "hook(module, args) -> None or replacement args, run before forward; args is the positional tuple as "
           "given (non-tensor arguments included; a tuple of the tensors when a native container calls the "
           "module). A result that is not a tuple is the single argument.")
      .def("register_forward_hook",
           [](nb::handle py_self, nb::callable hook) {
    return register_python_hook(
        py_self, [&](Module& m) { return m.register_forward_hook(python_forward_hook(std::move(hook))); });
  }, nb::arg("hook"),
           "hook(module, args, output) -> None or a replacement output, run after forward; output is what forward "
           "returned.")
      .def("register_full_backward_hook",
           [](nb::handle py_self, nb::callable hook) {
    return register_python_hook(
        py_self, [&](Module& m) { return m.register_full_backward_hook(python_backward_hook(std::move(hook))); });
  }, nb::arg("hook"),
           "hook(module, grad_input, grad_output) -> None or a replacement grad_input, run once per backward pass "
           "with one entry per positional argument (None for non-tensor arguments and where no gradient flows, "
           "e.g. an input that needs none) and one per element of the output (a single tensor: one), as "
           "PyTorch's; a replacement has as many entries (ValueError otherwise).")
      .def("remove_hook", &Module::remove_hook, nb::arg("id"),
           "Unregisters the hook with this id (RemovableHandle.id); an unknown id does nothing.")
      .def("requires_grad_",
           [](nb::handle self, bool requires_grad) {
    nb::cast<Module&>(self).requires_grad_(requires_grad);
    return SelfRet(nb::borrow(self));
  }, nb::arg("requires_grad") = true, "Sets requires_grad on every floating parameter; returns self.")
      .def("train",
           [](nb::handle self, bool mode) {
    nb::cast<Module&>(self).train(mode);
    return SelfRet(nb::borrow(self));
  }, nb::arg("mode") = true,
           "Sets training mode on this module and every descendant (dropout active, batch norm updates its "
           "running statistics); returns self.")
      .def("eval",
           [](nb::handle self) {
    nb::cast<Module&>(self).eval();
    return SelfRet(nb::borrow(self));
  }, "train(False): inference behaviour for dropout and batch norm; returns self.")
      .def_prop_ro("training", [](const Module& self) { return self.is_training(); },
                   "True in training mode (the default), False after eval().")
      .def("zero_grad", [](Module& self, bool set_to_none) { self.zero_grad(set_to_none); },
           nb::arg("set_to_none") = true, "Drops every parameter's .grad (set_to_none) or zeroes it in place.")
      .def("to",
           [](nb::handle self, nb::args args, nb::kwargs kwargs) {
    // to(device), to(dtype), to(tensor), to(device, dtype), to(device=..., dtype=..., non_blocking=...):
    // a device is a name or a device object that prints as one (st.device); a tensor gives both.
    std::vector<nb::handle> targets(args.begin(), args.end());
    for (auto [k, v] : kwargs) {
      const std::string key = nb::cast<std::string>(k);
      if (key == "device" || key == "dtype" || key == "tensor") {
        targets.push_back(v);
      } else if (key != "non_blocking" && key != "memory_format" && key != "copy") {
        throw nb::type_error(("to() got an unexpected keyword argument '" + key + "'").c_str());
      }
    }
    Module& m = nb::cast<Module&>(self);
    for (nb::handle target : targets) {
      if (target.is_none() || PyBool_Check(target.ptr())) continue;  // positional non_blocking
      if (nb::isinstance<Tensor>(target)) {
        const Tensor& t = nb::cast<const Tensor&>(target);
        m.to(t.device());
        if (st::is_floating(t.dtype())) m.to(t.dtype());
        continue;
      }
      if (nb::isinstance<nb::str>(target) || (nb::hasattr(target, "type") && nb::hasattr(target, "index"))) {
        const std::string s = nb::cast<std::string>(nb::str(target));
        if (s == "cpu" || s.rfind("cpu:", 0) == 0 || s.rfind("cuda", 0) == 0 || s.rfind("wgpu", 0) == 0) {
          m.to(st::Device::parse(s));
          continue;
        }
      }
      m.to(to_dtype(target));
    }
    return SelfRet(nb::borrow(self));
  },
           nb::sig("def to(self, *args: str | spiraltorch._core.dtype | spiraltorch._core.Tensor, **kwargs: "
                   "str | spiraltorch._core.dtype | spiraltorch._core.Tensor | bool) -> typing.Self"),
           nb::arg("args"), nb::arg("kwargs"),
           "Moves (device) and/or converts (floating dtype) every parameter and buffer in place; returns self. "
           "Takes to(device), to(dtype), to(tensor), to(device, dtype) and the keywords device=, dtype=, "
           "non_blocking= (accepted and ignored); e.g. model.to('cpu', st.float64).")
      .def("float",
           [](nb::handle self) {
    nb::cast<Module&>(self).to(Dtype::Float32);
    return SelfRet(nb::borrow(self));
  }, "Converts floating parameters and buffers to float32 in place; returns self.")
      .def("double",
           [](nb::handle self) {
    nb::cast<Module&>(self).to(Dtype::Float64);
    return SelfRet(nb::borrow(self));
  }, "Converts floating parameters and buffers to float64 in place; returns self.")
      .def("half",
           [](nb::handle self) {
    nb::cast<Module&>(self).to(Dtype::Float16);
    return SelfRet(nb::borrow(self));
  }, "Converts floating parameters and buffers to float16 in place; returns self.")
      .def("bfloat16",
           [](nb::handle self) {
    nb::cast<Module&>(self).to(Dtype::BFloat16);
    return SelfRet(nb::borrow(self));
  }, "Converts floating parameters and buffers to bfloat16 in place; returns self.")
      .def("attach_hypergrad",
           [](Module& self, double curvature, double learning_rate) {
    st::zspace::attach_hypergrad(self, curvature, learning_rate);
  }, nb::kw_only(), nb::arg("curvature") = -1.0, nb::arg("learning_rate") = 0.05,
           "Gives every parameter below this module Riemannian SGD updates in the Poincare ball of this curvature.")
      .def("detach_hypergrad", [](Module& self) { st::zspace::detach_hypergrad(self); },
           "Drops the Riemannian updates attach_hypergrad gave; parameters get plain optimizer updates again.")
      .def_prop_ro("hypergrad",
                   [](const Module& self) -> std::optional<std::pair<double, double>> {
    const std::optional<st::zspace::HypergradSettings> h = st::zspace::hypergrad_of(self);
    if (!h) return std::nullopt;
    return std::pair<double, double>(h->curvature, h->learning_rate);
  }, "(curvature, learning_rate) of attach_hypergrad, or None when not attached.")
      .def("num_parameters", [](const Module& self) {
    int64_t n = 0;
    for (const Tensor& p : self.parameters()) n += p.numel();
    return n;
  }, "The number of scalar parameters (each shared parameter counted once).");

  nb::class_<st::nn::Linear, Module>(m, "Linear", "y = x W^T + b; W is (out_features, in_features) like PyTorch.")
      .def(nb::init<int64_t, int64_t, bool, std::string>(), nb::arg("in_features"), nb::arg("out_features"),
           nb::arg("bias") = true, nb::arg("name") = "",
           "Weight (out_features, in_features) and bias (out_features,) drawn from U(-1/sqrt(in_features), "
           "1/sqrt(in_features)) (Kaiming-uniform, PyTorch's init); input (..., in_features) -> (..., "
           "out_features). e.g. nn.Linear(4, 2)(st.randn(8, 4)).shape == (8, 2)")
      .def("extra_repr",
           [](nb::handle self) {
    return nb::str("in_features={}, out_features={}, bias={}")
        .format(self.attr("in_features"), self.attr("out_features"), !self.attr("bias").is_none());
  }, nb::sig("def extra_repr(self) -> str"), "``in_features=..., out_features=..., bias=...`` for ``repr``.")
      // The original's spellings: Linear("name", in, out) and Linear(in, out, "name").
      .def("__init__",
           [](st::nn::Linear* self, std::string name, int64_t in, int64_t out, bool bias) {
    new (self) st::nn::Linear(in, out, bias, std::move(name));
  }, nb::arg("name"), nb::arg("in_features"), nb::arg("out_features"), nb::arg("bias") = true,
           "The original's spelling Linear(name, in_features, out_features).")
      .def("__init__",
           [](st::nn::Linear* self, int64_t in, int64_t out, std::string name) {
    new (self) st::nn::Linear(in, out, true, std::move(name));
  }, nb::arg("in_features"), nb::arg("out_features"), nb::arg("name"),
           "The original's spelling Linear(in_features, out_features, name).")
      .def_prop_ro("weight", &st::nn::Linear::weight, "The (out_features, in_features) weight parameter.")
      .def_prop_ro("bias",
                   [](st::nn::Linear& l) -> std::optional<Tensor> {
    Tensor b = l.bias();
    return b.defined() ? std::optional<Tensor>(b) : std::nullopt;
  }, "The (out_features,) bias parameter, or None (bias=False).")
      .def_prop_ro("in_features", &st::nn::Linear::in_features, "Size of the input's last dim.")
      .def_prop_ro("out_features", &st::nn::Linear::out_features, "Size of the output's last dim.");

  nb::class_<st::nn::Sequential, Module>(m, "Sequential", "Runs its layers in order.")
      .def("__init__",
           [](st::nn::Sequential* self, nb::args layers, std::string name) {
    new (self) st::nn::Sequential(name);
    for (nb::handle l : layers) self->add(nb::cast<std::shared_ptr<Module>>(l));
  }, nb::sig("def __init__(self, *layers: Module, name: str = '') -> None"), nb::arg("layers"), nb::arg("name") = "",
           "Sequential(layer0, layer1, ...): each layer's output is the next one's input; unnamed layers take "
           "the keys '0', '1', ... (parameters '0::weight'). e.g. nn.Sequential(nn.Linear(4, 8), nn.ReLU(), "
           "nn.Linear(8, 2))")
      .def("add", [](st::nn::Sequential& s, std::shared_ptr<Module> layer) { s.add(std::move(layer)); },
           nb::arg("layer"), "Appends layer at the end.")
      .def("append", [](st::nn::Sequential& s, std::shared_ptr<Module> layer) { s.add(std::move(layer)); },
           nb::arg("layer"), "Alias of add (torch.nn.Sequential.append).")
      .def("__len__", &st::nn::Sequential::size, "The number of layers.")
      .def("__getitem__", &st::nn::Sequential::at, nb::arg("index"),
           "The layer at index (negative counts from the end); IndexError when out of range.");

  m.def("linear",
        [](const Tensor& x, const Tensor& w, std::optional<Tensor> b) {
    return st::nn::linear(x, w, b ? *b : Tensor());
  }, nb::arg("input"), nb::arg("weight"), nb::arg("bias") = nb::none(),
        "x W^T + b with W (out_features, in_features), x (..., in_features); ShapeError when the inner sizes "
        "differ.");

  // A Python subclass that overrides forward (of nn.Module or of a native layer) is called through its
  // forward, as torch.nn.Module.__call__ runs forward: the native layers bind __call__ to their own
  // forward (e.g. Transformer's (src, tgt, ...)), which would bypass `class Model(nn.Transformer)`'s.
  // The base's __init_subclass__ gives such a subclass a __call__ that runs self.forward(*args,
  // **kwargs) with the hooks around it (Module::call_hooked).
  nb::object call_forward =
      nb::cpp_function(&call_python_forward, nb::is_method(), nb::name("__call__"), nb::arg("args"), nb::arg("kwargs"),
                       "Runs self.forward(*args, **kwargs) (a Python subclass's forward) with "
                       "the forward pre-hooks, forward hooks and full backward hooks around it.");
  nb::object init_subclass = nb::cpp_function(
      [call_forward](nb::handle cls, nb::kwargs) {
    auto native = [](nb::handle fn) { return nb::hasattr(fn, "__nb_signature__"); };
    nb::object call = cls.attr("__call__"), forward = cls.attr("forward");
    if (native(call) && !native(forward)) nb::setattr(cls, "__call__", call_forward);
  }, nb::name("__init_subclass__"), nb::sig("def __init_subclass__(cls, **kwargs: typing.Any) -> None"), nb::arg("cls"),
      nb::arg("kwargs"),
      "Gives a Python subclass that overrides forward a __call__ running its forward (with the hooks).");
  nb::setattr(m.attr("Module"), "__init_subclass__", nb::steal(PyClassMethod_New(init_subclass.ptr())));

  bind_nn_layers(m);
  bind_train(m);
}

}  // namespace stpy
