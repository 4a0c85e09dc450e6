// spiraltorch._core.optim: optimizers with parameter groups, LR schedules and
// gradient clipping. Updates follow torch.optim's formulas and run in C++.
#include <nanobind/stl/map.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/variant.h>

#include <cmath>
#include <set>

#include "convert.h"
#include "optim_args.h"
#include "spiraltorch/optim/adagrad.h"
#include "spiraltorch/optim/adam.h"
#include "spiraltorch/optim/lr_scheduler.h"
#include "spiraltorch/zspace/riemannian.h"
#include "spiraltorch/optim/rmsprop.h"
#include "spiraltorch/optim/sgd.h"

namespace stpy {

namespace {

using namespace st::optim;

const std::set<std::string>& flag_keys() {
  static const std::set<std::string> keys{"nesterov",  "amsgrad", "centered", "maximize", "decoupled_weight_decay",
                                          "capturable"};
  return keys;
}

// PyTorch's pair options, kept as two numbers each: betas, and Rprop's etas and step_sizes.
struct PairOption {
  const char *name, *first, *second;
};
constexpr PairOption kPairOptions[] = {
    {"betas", "beta1", "beta2"}, {"etas", "eta_minus", "eta_plus"}, {"step_sizes", "step_size_min", "step_size_max"}};

const PairOption* pair_named(const std::string& key) {
  for (const PairOption& p : kPairOptions)
    if (key == p.name) return &p;
  return nullptr;
}

const PairOption* pair_holding(const std::string& key) {
  for (const PairOption& p : kPairOptions)
    if (key == p.first || key == p.second) return &p;
  return nullptr;
}

nb::object option_value(const Options& o, const std::string& key) {
  if (const PairOption* p = pair_named(key); p && o.count(p->first))
    return nb::make_tuple(o.at(p->first), o.at(p->second));
  auto it = o.find(key);
  if (it == o.end()) throw nb::key_error(key.c_str());
  if (flag_keys().count(key)) return nb::bool_(it->second != 0.0);
  return nb::float_(it->second);
}

std::vector<std::string> option_keys(const Options& o) {
  std::vector<std::string> keys;
  std::set<std::string> pairs;
  for (const auto& [k, v] : o) {
    if (const PairOption* p = pair_holding(k)) {
      if (pairs.insert(p->name).second) keys.push_back(p->name);
      continue;
    }
    keys.push_back(k);
  }
  return keys;
}

void set_option(Options& o, const std::string& key, nb::handle value) {
  if (const PairOption* p = pair_named(key)) {
    nb::sequence seq = nb::borrow<nb::sequence>(value);
    if (nb::len(seq) != 2) throw st::ValueError("optimizer: " + key + " must be a pair of floats");
    o[p->first] = nb::cast<double>(seq[0]);
    o[p->second] = nb::cast<double>(seq[1]);
    return;
  }
  if (value.is_none()) return;  // e.g. PyTorch's foreach=None
  double v;
  if (nb::isinstance<nb::bool_>(value)) {
    v = nb::cast<bool>(value) ? 1.0 : 0.0;
  } else if (nb::isinstance<nb::int_>(value) || nb::isinstance<nb::float_>(value)) {
    v = nb::cast<double>(value);
  } else if (nb::isinstance<Tensor>(value)) {
    v = nb::cast<Tensor>(value).item();
  } else {
    throw st::ValueError("optimizer: option '" + key + "' must be a number or bool");
  }
  // Refused where it is set (group['lr'] = nan), not on a later step; step() checks again.
  if ((key == "lr" || key == "weight_decay") && !(v >= 0.0 && std::isfinite(v))) {
    throw st::ValueError("optimizer: invalid " + key + " " + std::to_string(v) + " (must be finite and >= 0)");
  }
  o[key] = v;
}

std::vector<Tensor> tensors_of(nb::handle h) {
  std::vector<Tensor> out;
  if (nb::isinstance<Tensor>(h)) {
    out.push_back(nb::cast<Tensor>(h));
    return out;
  }
  for (nb::handle item : h) {
    if (!nb::isinstance<Tensor>(item)) throw st::DtypeError("optimizer: params must be Tensors");
    out.push_back(nb::cast<Tensor>(item));
  }
  return out;
}

ParamGroup group_from_dict(nb::handle d) {
  ParamGroup g;
  nb::dict dict = nb::borrow<nb::dict>(d);
  if (!dict.contains("params")) throw st::ValueError("optimizer: a parameter group dict needs 'params'");
  for (auto [k, v] : dict) {
    const std::string key = nb::cast<std::string>(k);
    if (key == "params") {
      g.params = tensors_of(v);
    } else {
      set_option(g.options, key, v);
    }
  }
  return g;
}

// PyTorch's `params` argument: an iterable of tensors or of dicts (parameter groups).
std::vector<ParamGroup> groups_from_py(nb::handle params) {
  if (nb::isinstance<Tensor>(params)) {
    throw st::DtypeError("optimizer: params should be an iterable of Tensors or dicts, got a Tensor");
  }
  nb::list items = nb::list(params);  // consumes generators once
  if (nb::len(items) == 0) throw st::ValueError("optimizer got an empty parameter list");
  std::vector<ParamGroup> groups;
  if (nb::isinstance<nb::dict>(items[0])) {
    for (nb::handle d : items) groups.push_back(group_from_dict(d));
  } else {
    groups.push_back(ParamGroup{tensors_of(items), {}});
  }
  return groups;
}

nb::dict group_to_dict(const ParamGroup& g, const std::vector<int64_t>* ids) {
  nb::dict d;
  for (const std::string& k : option_keys(g.options)) d[k.c_str()] = option_value(g.options, k);
  if (ids) {
    d["params"] = nb::cast(*ids);
  } else {
    d["params"] = nb::cast(g.params);
  }
  return d;
}

nb::dict state_to_py(const OptimizerState& s, const std::string& type) {
  nb::dict state;
  for (const auto& [idx, ps] : s.state) {
    nb::dict e;
    e["step"] = ps.step;
    for (const auto& [k, t] : ps.buffers) e[k.c_str()] = nb::cast(t);
    state[nb::int_(idx)] = e;
  }
  nb::list groups;
  for (size_t i = 0; i < s.groups.size(); ++i) {
    ParamGroup g{{}, s.groups[i]};
    groups.append(group_to_dict(g, &s.group_params[i]));
  }
  nb::dict out;
  out["state"] = state;
  out["param_groups"] = groups;
  out["skipped_steps"] = s.skipped_steps;
  out["type"] = type;
  return out;
}

OptimizerState state_from_py_dict(nb::handle obj) {
  OptimizerState s;
  nb::dict d = nb::borrow<nb::dict>(obj);
  if (!d.contains("state") || !d.contains("param_groups")) {
    throw st::CheckpointError("load_state_dict: expected a dict with 'state' and 'param_groups'");
  }
  for (auto [k, v] : nb::borrow<nb::dict>(d["state"])) {
    ParamState ps;
    for (auto [bk, bv] : nb::borrow<nb::dict>(v)) {
      const std::string key = nb::cast<std::string>(bk);
      if (key == "step") {
        ps.step = nb::isinstance<Tensor>(bv) ? static_cast<int64_t>(nb::cast<Tensor>(bv).item())
                                             : static_cast<int64_t>(nb::cast<double>(bv));
      } else if (nb::isinstance<Tensor>(bv)) {
        ps.buffers.emplace(key, nb::cast<Tensor>(bv));
      } else if (!bv.is_none()) {
        ps.buffers.emplace(key, tensor_from_data(bv, std::nullopt));
      }
    }
    s.state.emplace(nb::cast<int64_t>(k), std::move(ps));
  }
  for (nb::handle g : nb::borrow<nb::list>(nb::list(d["param_groups"]))) {
    Options o;
    std::vector<int64_t> ids;
    for (auto [k, v] : nb::borrow<nb::dict>(g)) {
      const std::string key = nb::cast<std::string>(k);
      if (key == "params") {
        for (nb::handle i : v) ids.push_back(nb::cast<int64_t>(i));
      } else if (nb::isinstance<nb::bool_>(v) || nb::isinstance<nb::int_>(v) || nb::isinstance<nb::float_>(v) ||
                 pair_named(key)) {
        set_option(o, key, v);
      }
    }
    s.groups.push_back(std::move(o));
    s.group_params.push_back(std::move(ids));
  }
  if (d.contains("skipped_steps")) s.skipped_steps = nb::cast<int64_t>(d["skipped_steps"]);
  return s;
}

nb::dict sched_state_to_py(const SchedulerState& st) {
  nb::dict d;
  d["last_epoch"] = st.last_epoch;
  d["_step_count"] = st.step_count;
  d["base_lrs"] = nb::cast(st.base_lrs);
  d["_last_lr"] = nb::cast(st.last_lrs);
  for (const auto& [k, v] : st.extra) d[k.c_str()] = v;
  if (!st.children.empty()) {
    nb::list children;
    for (const SchedulerState& c : st.children) children.append(sched_state_to_py(c));
    d["_schedulers"] = children;
  }
  return d;
}

nb::dict sched_to_py(const LRScheduler& s) {
  nb::dict d = sched_state_to_py(s.state_dict());
  for (const auto& [k, v] : s.hyperparameters()) d[k.c_str()] = v;
  d["type"] = s.type_name();
  return d;
}

SchedulerState sched_from_py(nb::handle obj) {
  nb::dict d = nb::borrow<nb::dict>(obj);
  SchedulerState st;
  st.last_epoch = nb::cast<int64_t>(d["last_epoch"]);
  st.step_count = d.contains("_step_count") ? nb::cast<int64_t>(d["_step_count"]) : st.last_epoch + 1;
  st.base_lrs = nb::cast<std::vector<double>>(d["base_lrs"]);
  if (d.contains("_last_lr")) st.last_lrs = nb::cast<std::vector<double>>(d["_last_lr"]);
  for (const char* k : {"T_cur", "T_i"}) {  // CosineAnnealingWarmRestarts
    if (d.contains(k)) st.extra[k] = nb::cast<double>(d[k]);
  }
  if (d.contains("_schedulers")) {
    for (nb::handle c : nb::list(d["_schedulers"])) st.children.push_back(sched_from_py(c));
  }
  return st;
}

std::vector<Tensor> params_arg(nb::handle h) { return tensors_of(h); }

}  // namespace

// For python/src/optim_adaptive_lbfgs_schedules.cpp (the optimizers and schedules bound there).
std::vector<ParamGroup> optim_groups_from_py(nb::handle params) { return groups_from_py(params); }
void bind_optim_adaptive_lbfgs_schedules(nb::module_& m);

namespace {

// inspect.signature(cls) for a native class, built from the text signature nanobind keeps for its
// (single) __init__ ("def __init__(self, params: object, lr: float = \\0, *, fused: object | None = None)";
// \\N refers to the N-th stored default). Python's inspect cannot read nanobind functions, and
// training scripts probe optimizers with it ("'fused' in inspect.signature(torch.optim.AdamW).parameters").
void set_init_signature(nb::handle cls) {
  nb::object sigs = nb::getattr(cls.attr("__init__"), "__nb_signature__", nb::none());
  if (sigs.is_none() || nb::len(sigs) != 1) return;  // overloaded constructors keep no single signature
  const std::string text = nb::cast<std::string>(sigs[0][0]);
  nb::object defaults = sigs[0][2];
  const size_t open = text.find('('), close = text.rfind(')');
  if (open == std::string::npos || close == std::string::npos || close < open) return;
  std::vector<std::string> pieces;
  int depth = 0;
  std::string cur;
  for (char c : text.substr(open + 1, close - open - 1)) {
    if (c == '[' || c == '(') ++depth;
    if (c == ']' || c == ')') --depth;
    if (c == ',' && depth == 0) {
      pieces.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!cur.empty()) pieces.push_back(cur);
  nb::object inspect = nb::module_::import_("inspect");
  nb::object P = inspect.attr("Parameter");
  nb::object kind = P.attr("POSITIONAL_OR_KEYWORD");
  nb::list params;
  for (std::string piece : pieces) {
    piece.erase(0, piece.find_first_not_of(' '));
    if (piece.empty() || piece == "self" || piece == "/") continue;
    if (piece == "*") {
      kind = P.attr("KEYWORD_ONLY");
      continue;
    }
    nb::object this_kind = kind;
    if (piece.rfind("**", 0) == 0) {
      this_kind = P.attr("VAR_KEYWORD");
      piece.erase(0, 2);
    } else if (piece.rfind('*', 0) == 0) {
      this_kind = P.attr("VAR_POSITIONAL");
      piece.erase(0, 1);
      kind = P.attr("KEYWORD_ONLY");
    }
    const std::string name = piece.substr(0, piece.find_first_of(": ="));
    nb::object def = P.attr("empty");
    if (const size_t eq = piece.find(" = "); eq != std::string::npos) {
      const std::string value = piece.substr(eq + 3);
      if (value.size() > 1 && value[0] == '\\') {
        def = defaults[std::stoi(value.substr(1))];
      } else if (value == "None") {
        def = nb::none();
      } else if (value == "True" || value == "False") {
        def = nb::bool_(value == "True");
      }
    }
    nb::kwargs kw;
    kw["default"] = def;
    params.append(P(name, this_kind, **kw));
  }
  nb::setattr(cls, "__signature__", inspect.attr("Signature")(params));
}

}  // namespace

void bind_optim(nb::module_& root) {
  nb::module_ m = root.def_submodule("optim", "Optimizers, learning-rate schedules and gradient clipping.");

  nb::class_<ParamGroup>(m, "ParamGroup",
                         "One parameter group: behaves like PyTorch's group dict (group['lr'] = 0.1 works).")
      .def("__getitem__",
           [](const ParamGroup& g, const std::string& key) -> nb::object {
    if (key == "params") return nb::cast(g.params);
    return option_value(g.options, key);
  },
           nb::sig("def __getitem__(self, key: str, /) -> list[spiraltorch._core.Tensor] | float | bool | tuple[float, "
                   "float]"),
           "group[key]: 'params' (the list of tensors), an option as a float, a flag as a bool, or a pair "
           "('betas', 'etas', 'step_sizes') as a tuple. KeyError for an option the group does not have.")
      .def("__setitem__",
           [](ParamGroup& g, const std::string& key, nb::handle value) {
    if (key == "params") {
      g.params = tensors_of(value);
    } else {
      set_option(g.options, key, value);
    }
  },
           nb::sig("def __setitem__(self, key: str, value: collections.abc.Iterable[spiraltorch._core.Tensor] | "
                   "float | bool | tuple[float, float] | spiraltorch._core.Tensor | None, /) -> None"),
           "group[key] = value: sets an option (a number, a bool, a 0-d tensor, or a pair for 'betas'/'etas'/"
           "'step_sizes'; None leaves it unchanged) or replaces 'params'. ValueError for a non-finite or negative "
           "'lr'/'weight_decay' or a pair of the wrong length; the group is unchanged then.")
      .def("__contains__",
           [](const ParamGroup& g, const std::string& key) {
    const PairOption* p = pair_named(key);
    return key == "params" || (p ? g.options.count(p->first) > 0 : g.options.count(key) > 0);
  }, nb::arg("key"), "key in group: 'params' or an option the group has.")
      .def("get",
           [](const ParamGroup& g, const std::string& key, nb::object dflt) -> nb::object {
    if (key == "params") return nb::cast(g.params);
    const PairOption* p = pair_named(key);
    if (p ? !g.options.count(p->first) : !g.options.count(key)) return dflt;
    return option_value(g.options, key);
  }, nb::sig("def get(self, key: str, default: typing.Any = None) -> typing.Any"), nb::arg("key"),
           nb::arg("default") = nb::none(), "group[key], or default when the group has no such option (like dict.get).")
      .def("keys",
           [](const ParamGroup& g) {
    std::vector<std::string> k = option_keys(g.options);
    k.insert(k.begin(), "params");
    return k;
  }, "'params' followed by the option names (pairs such as 'betas' under one name).")
      .def("items",
           [](const ParamGroup& g) {
    nb::list out;
    out.append(nb::make_tuple("params", nb::cast(g.params)));
    for (const std::string& k : option_keys(g.options)) out.append(nb::make_tuple(k, option_value(g.options, k)));
    return out;
  }, nb::sig("def items(self) -> list[tuple[str, typing.Any]]"), "(key, group[key]) for every key in keys().")
      .def("to_dict", [](const ParamGroup& g) { return group_to_dict(g, nullptr); },
           nb::sig("def to_dict(self) -> dict[str, typing.Any]"),
           "A plain dict copy of the group: {'params': [tensors], 'lr': ..., ...} (the tensors are the live ones).")
      .def("__repr__", [](const ParamGroup& g) {
    return "ParamGroup(" + nb::cast<std::string>(nb::repr(group_to_dict(g, nullptr))) + ")";
  }, "ParamGroup({...}) with the group's dict.");

  nb::class_<st::optim::StepResult>(m, "StepResult",
                                    "What Optimizer.step() did when its verdict is still on the device (wgpu): "
                                    "bool(result) reads it (waiting for that step's work only) and is True when "
                                    "the update was applied, False when a non-finite gradient made it skip.")
      .def("__bool__", [](const st::optim::StepResult& r) { return static_cast<bool>(r); },
           "True when the update was applied (reads the device verdict on first use).")
      .def("__eq__", [](const st::optim::StepResult& r, bool b) { return static_cast<bool>(r) == b; }, nb::arg("other"),
           "bool(self) == other.")
      .def_prop_ro("known", &st::optim::StepResult::known, "True when bool() needs no device read.")
      .def("__repr__", [](const st::optim::StepResult& r) {
    return r.known() ? std::string(static_cast<bool>(r) ? "StepResult(True)" : "StepResult(False)")
                     : std::string("StepResult(pending)");
  }, "StepResult(True), StepResult(False), or StepResult(pending) while the verdict is on the device.");

  nb::class_<Optimizer>(m, "Optimizer",
                        "Base of the optimizers. step() first checks every gradient is finite; if one is not, "
                        "nothing is updated, skipped_steps grows and step() returns False.")
      .def_prop_ro("param_groups", [](const Optimizer& o) { return o.param_groups(); },
                   "The live parameter groups; group['lr'] = x changes the rate used by the next step().")
      .def_prop_ro("defaults",
                   [](const Optimizer& o) {
    nb::dict d;
    for (const std::string& k : option_keys(o.defaults())) d[k.c_str()] = option_value(o.defaults(), k);
    return d;
  }, nb::sig("def defaults(self) -> dict[str, typing.Any]"),
                   "The constructor's options (a copy): what a group added without them gets.")
      .def("add_param_group", [](Optimizer& o, StateDictArg group) { o.add_param_group(group_from_dict(group)); },
           nb::arg("param_group"),
           "Adds a group {'params': tensors, option: value, ...}; missing options come from defaults. ValueError "
           "when it has no 'params' or a parameter is already in a group.")
      .def("zero_grad", &Optimizer::zero_grad, nb::arg("set_to_none") = true,
           "Clears every parameter's gradient: drops it (set_to_none=True, p.grad is None) or fills it with zeros.")
      .def("step",
           [](Optimizer& o, nb::object closure) -> nb::object {
    if (!closure.is_none()) {
      st::EnableGradGuard eg;
      closure();
    }
    st::optim::StepResult r = o.step();
    if (r.known()) return nb::bool_(static_cast<bool>(r));
    return nb::cast(std::move(r));
  },
           nb::sig("def step(self, closure: collections.abc.Callable[[], typing.Any] | None = None) -> "
                   "bool | spiraltorch._core.optim.StepResult"),
           nb::arg("closure") = nb::none(),
           "Applies one update to every parameter with a gradient (closure, if given, is called first with grad "
           "enabled, e.g. to recompute the loss). Returns True; returns False and changes nothing when a gradient "
           "holds NaN/Inf (skipped_steps grows). Adam, AdamW and SGD on wgpu check on the device and return a "
           "StepResult whose bool() reads the verdict when asked.")
      .def_prop_ro("skipped_steps", &Optimizer::skipped_steps,
                   "How many step() calls were skipped for a non-finite gradient.")
      .def("grads_finite", &Optimizer::grads_finite, "True when every defined gradient is finite (no NaN/Inf).")
      .def("state_dict", [](const Optimizer& o) { return state_to_py(o.state_dict(), o.type_name()); },
           nb::sig("def state_dict(self) -> dict[str, typing.Any]"),
           "{'state': {index: {'step': n, buffer: Tensor, ...}}, 'param_groups': [{..., 'params': [indices]}], "
           "'skipped_steps': n, 'type': name}; parameters are numbered in group order like PyTorch and buffers "
           "are copies.")
      .def("load_state_dict", [](Optimizer& o, StateDictArg d) { o.load_state_dict(state_from_py_dict(d)); },
           nb::arg("state_dict"),
           "Restores a state_dict() (also PyTorch's layout). CheckpointError when it lacks 'state'/'param_groups' "
           "or does not match the groups or parameter shapes; a failed load changes nothing.")
      .def("state_of",
           [](const Optimizer& o, const Tensor& p) -> nb::object {
    const ParamState* s = o.state_of(p);
    if (!s) return nb::dict();
    nb::dict e;
    e["step"] = s->step;
    for (const auto& [k, t] : s->buffers) e[k.c_str()] = nb::cast(t);
    return e;
  }, nb::sig("def state_of(self, param: spiraltorch._core.Tensor) -> dict[str, typing.Any]"), nb::arg("param"),
           "The live state of one parameter: {'step': n, buffer name: Tensor, ...} ({} before its first update).")
      .def("__repr__", [](const Optimizer& o) {
    std::string s = o.type_name() + "(";
    for (size_t i = 0; i < o.param_groups().size(); ++i) {
      nb::dict d = group_to_dict(*o.param_groups()[i], nullptr);
      d.attr("pop")("params");
      s += (i ? ", " : "") + nb::cast<std::string>(nb::repr(d));
    }
    return s + ")";
  }, "Name(options of each group).");

  // foreach= and fused= (SGD, Adam, AdamW, RMSprop, Adagrad) choose among PyTorch's implementations of the same
  // update; every SpiralTorch step is one native loop per parameter, so they are accepted and change nothing.
  nb::class_<SGD, Optimizer>(m, "SGD",
                             "torch.optim.SGD: g = grad (negated with maximize) + weight_decay * p; with momentum, b = "
                             "momentum * b + (1 - dampening) * g (b = g on the first step) and g = b (or g + momentum "
                             "* b with nesterov); p -= lr * g. Parameters are updated in place. "
                             "foreach=/fused= are accepted and change nothing.\n\n"
                             "Example: opt = st.optim.SGD(model.parameters(), lr=0.1, momentum=0.9); loss.backward(); "
                             "opt.step(); opt.zero_grad()")
      .def("__init__",
           [](SGD* self, ParamsArg params, double lr, double momentum, double dampening, double weight_decay,
              bool nesterov, bool maximize, FlagArg, FlagArg) {
    new (self) SGD(groups_from_py(params), lr, momentum, dampening, weight_decay, nesterov, maximize);
  },
           nb::arg("params"), nb::arg("lr") = 1e-3, nb::arg("momentum") = 0.0, nb::arg("dampening") = 0.0,
           nb::arg("weight_decay") = 0.0, nb::arg("nesterov") = false, nb::kw_only(), nb::arg("maximize") = false,
           nb::arg("foreach").none() = nb::none(), nb::arg("fused").none() = nb::none());

  nb::class_<st::optim::RiemannianSGD, Optimizer>(
      m, "RiemannianSGD",
      "Riemannian SGD (Becigneul & Ganea 2019): manifold parameters (nn.ManifoldParameter) step along "
      "Poincare-ball geodesics with transported momentum; other parameters get plain SGD.")
      .def("__init__",
           [](st::optim::RiemannianSGD* self, ParamsArg params, double lr, double momentum, double dampening,
              double weight_decay, bool nesterov) {
    new (self) st::optim::RiemannianSGD(groups_from_py(params), lr, momentum, dampening, weight_decay, nesterov);
  },
           nb::arg("params"), nb::arg("lr") = 1e-3, nb::arg("momentum") = 0.0, nb::arg("dampening") = 0.0,
           nb::arg("weight_decay") = 0.0, nb::arg("nesterov") = false);

  auto betas_of = [](FloatPairArg b) {
    nb::sequence seq = nb::borrow<nb::sequence>(b);
    if (nb::len(seq) != 2) throw st::ValueError("betas must be a pair of floats");
    return std::pair<double, double>(nb::cast<double>(seq[0]), nb::cast<double>(seq[1]));
  };
  nb::class_<Adam, Optimizer>(
      m, "Adam",
      "torch.optim.Adam: g = grad (negated with maximize) + weight_decay * p (L2); m = b1 m + (1 - b1) g, v = b2 v + "
      "(1 - b2) "
      "g^2; p -= lr * (m / (1 - b1^t)) / (sqrt(v / (1 - b2^t)) + eps) (amsgrad: the running max "
      "of v). capturable=True keeps the step count on the parameters' device so step() can be "
      "captured in a CUDA graph. foreach=/fused= are accepted and change nothing.\n\n"
      "Example: opt = st.optim.Adam(model.parameters(), lr=1e-3, betas=(0.9, 0.999))")
      .def("__init__",
           [betas_of](Adam* self, ParamsArg params, double lr, FloatPairArg betas, double eps, double weight_decay,
                      bool amsgrad, bool maximize, FlagArg, FlagArg, bool capturable) {
    auto [b1, b2] = betas_of(betas);
    new (self) Adam(groups_from_py(params), lr, b1, b2, eps, weight_decay, amsgrad, maximize, false, capturable);
  },
           nb::arg("params"), nb::arg("lr") = 1e-3, nb::arg("betas") = nb::make_tuple(0.9, 0.999),
           nb::arg("eps") = 1e-8, nb::arg("weight_decay") = 0.0, nb::arg("amsgrad") = false, nb::kw_only(),
           nb::arg("maximize") = false, nb::arg("foreach").none() = nb::none(), nb::arg("fused").none() = nb::none(),
           nb::arg("capturable") = false);
  nb::class_<st::optim::RiemannianAdam, Optimizer>(
      m, "RiemannianAdam",
      "Riemannian Adam (Becigneul & Ganea 2019): manifold parameters get Riemannian gradients, second "
      "moments of the Riemannian norm, exp-map steps and transported first moments; others plain Adam.")
      .def("__init__",
           [betas_of](st::optim::RiemannianAdam* self, ParamsArg params, double lr, FloatPairArg betas, double eps,
                      double weight_decay, bool amsgrad) {
    auto [b1, b2] = betas_of(betas);
    new (self) st::optim::RiemannianAdam(groups_from_py(params), lr, b1, b2, eps, weight_decay, amsgrad);
  },
           nb::arg("params"), nb::arg("lr") = 1e-3, nb::arg("betas") = nb::make_tuple(0.9, 0.999),
           nb::arg("eps") = 1e-8, nb::arg("weight_decay") = 0.0, nb::arg("amsgrad") = false);

  nb::class_<AdamW, Adam>(m, "AdamW",
                          "torch.optim.AdamW: Adam with decoupled weight decay (p *= 1 - lr * weight_decay before the "
                          "Adam step; default weight_decay 1e-2).\n\n"
                          "Example: opt = st.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.1)")
      .def("__init__",
           [betas_of](AdamW* self, ParamsArg params, double lr, FloatPairArg betas, double eps, double weight_decay,
                      bool amsgrad, bool maximize, FlagArg, FlagArg, bool capturable) {
    auto [b1, b2] = betas_of(betas);
    new (self) AdamW(groups_from_py(params), lr, b1, b2, eps, weight_decay, amsgrad, maximize, capturable);
  },
           nb::arg("params"), nb::arg("lr") = 1e-3, nb::arg("betas") = nb::make_tuple(0.9, 0.999),
           nb::arg("eps") = 1e-8, nb::arg("weight_decay") = 1e-2, nb::arg("amsgrad") = false, nb::kw_only(),
           nb::arg("maximize") = false, nb::arg("foreach").none() = nb::none(), nb::arg("fused").none() = nb::none(),
           nb::arg("capturable") = false);
  nb::class_<RMSprop, Optimizer>(m, "RMSprop", "torch.optim.RMSprop (optionally centered, with momentum).")
      .def("__init__",
           [](RMSprop* self, ParamsArg params, double lr, double alpha, double eps, double weight_decay,
              double momentum, bool centered, bool maximize, FlagArg, FlagArg) {
    new (self) RMSprop(groups_from_py(params), lr, alpha, eps, weight_decay, momentum, centered, maximize);
  },
           nb::arg("params"), nb::arg("lr") = 1e-2, nb::arg("alpha") = 0.99, nb::arg("eps") = 1e-8,
           nb::arg("weight_decay") = 0.0, nb::arg("momentum") = 0.0, nb::arg("centered") = false, nb::kw_only(),
           nb::arg("maximize") = false, nb::arg("foreach").none() = nb::none(), nb::arg("fused").none() = nb::none());
  nb::class_<Adagrad, Optimizer>(m, "Adagrad", "torch.optim.Adagrad.")
      .def("__init__",
           [](Adagrad* self, ParamsArg params, double lr, double lr_decay, double weight_decay,
              double initial_accumulator_value, double eps, bool maximize, FlagArg, FlagArg) {
    new (self) Adagrad(groups_from_py(params), lr, lr_decay, weight_decay, initial_accumulator_value, eps, maximize);
  },
           nb::arg("params"), nb::arg("lr") = 1e-2, nb::arg("lr_decay") = 0.0, nb::arg("weight_decay") = 0.0,
           nb::arg("initial_accumulator_value") = 0.0, nb::arg("eps") = 1e-10, nb::kw_only(),
           nb::arg("maximize") = false, nb::arg("foreach").none() = nb::none(), nb::arg("fused").none() = nb::none());

  // ---- schedules ----
  nb::class_<LRScheduler>(m, "LRScheduler", "Base of the learning-rate schedules (torch.optim.lr_scheduler).")
      .def("step",
           [](LRScheduler& s, nb::typed<nb::object, int64_t> epoch) {
    if (!epoch.is_none()) throw st::ValueError("LRScheduler.step: the epoch argument is not supported");
    s.step();
  }, nb::arg("epoch") = nb::none(),
           "Advances one epoch (or iteration) and writes the new rates into the optimizer's groups. Call it after "
           "optimizer.step(). Passing epoch raises ValueError (PyTorch deprecated it).")
      .def("get_last_lr", &LRScheduler::get_last_lr, "The rates the last step wrote, one per parameter group.")
      .def_prop_ro("last_epoch", &LRScheduler::last_epoch, "The epoch count: 0 after construction, +1 per step().")
      .def_prop_ro("base_lrs", &LRScheduler::base_lrs, "Each group's initial rate ('initial_lr').")
      .def_prop_ro("optimizer", &LRScheduler::optimizer, "The optimizer whose rates this schedule sets.")
      .def("state_dict", [](const LRScheduler& s) { return sched_to_py(s); },
           nb::sig("def state_dict(self) -> dict[str, typing.Any]"),
           "{'last_epoch', '_step_count', 'base_lrs', '_last_lr', hyperparameters..., 'type'} (PyTorch's keys).")
      .def("load_state_dict", [](LRScheduler& s, StateDictArg d) { s.load_state_dict(sched_from_py(d)); },
           nb::arg("state_dict"),
           "Restores a state_dict() (epoch count, base and last rates) and writes the restored rates into the "
           "groups.");

  nb::class_<StepLR, LRScheduler>(m, "StepLR", "lr = base_lr * gamma ** (epoch // step_size).")
      .def(nb::init<std::shared_ptr<Optimizer>, int64_t, double>(), nb::arg("optimizer"), nb::arg("step_size"),
           nb::arg("gamma") = 0.1);
  nb::class_<CosineAnnealingLR, LRScheduler>(m, "CosineAnnealingLR",
                                             "Cosine annealing from the base rate to eta_min over T_max steps.")
      .def(nb::init<std::shared_ptr<Optimizer>, int64_t, double>(), nb::arg("optimizer"), nb::arg("T_max"),
           nb::arg("eta_min") = 0.0);
  nb::class_<LinearWarmup, LRScheduler>(m, "LinearWarmup",
                                        "Linear ramp from start_factor * base_lr to base_lr over warmup_steps, "
                                        "then constant.")
      .def(nb::init<std::shared_ptr<Optimizer>, int64_t, double>(), nb::arg("optimizer"), nb::arg("warmup_steps"),
           nb::arg("start_factor") = 1.0 / 3.0);
  nb::class_<OneCycleLR, LRScheduler>(m, "OneCycleLR",
                                      "The 1cycle policy, like torch.optim.lr_scheduler.OneCycleLR: the rate rises "
                                      "from max_lr / div_factor to max_lr over pct_start of total_steps, then "
                                      "anneals ('cos' or 'linear') to max_lr / div_factor / final_div_factor; "
                                      "momentum (or beta1) cycles the other way when cycle_momentum. Give "
                                      "total_steps, or epochs and steps_per_epoch (ValueError otherwise).")
      .def("__init__",
           [](OneCycleLR* self, std::shared_ptr<Optimizer> opt, FloatOrListArg max_lr,
              std::optional<int64_t> total_steps, std::optional<int64_t> epochs, std::optional<int64_t> steps_per_epoch,
              double pct_start, const std::string& anneal_strategy, bool cycle_momentum, double base_momentum,
              double max_momentum, double div_factor, double final_div_factor, bool three_phase) {
    std::vector<double> lrs;
    if (nb::isinstance<nb::float_>(max_lr) || nb::isinstance<nb::int_>(max_lr)) {
      lrs.push_back(nb::cast<double>(max_lr));
    } else {
      lrs = nb::cast<std::vector<double>>(max_lr);
    }
    int64_t total = 0;
    if (total_steps) {
      total = *total_steps;
    } else if (epochs && steps_per_epoch) {
      total = *epochs * *steps_per_epoch;
    } else {
      throw st::ValueError("OneCycleLR: give total_steps, or epochs and steps_per_epoch");
    }
    new (self) OneCycleLR(std::move(opt), lrs, total, pct_start, anneal_strategy, cycle_momentum, base_momentum,
                          max_momentum, div_factor, final_div_factor, three_phase);
  },
           nb::arg("optimizer"), nb::arg("max_lr"), nb::arg("total_steps") = nb::none(), nb::arg("epochs") = nb::none(),
           nb::arg("steps_per_epoch") = nb::none(), nb::arg("pct_start") = 0.3, nb::arg("anneal_strategy") = "cos",
           nb::arg("cycle_momentum") = true, nb::arg("base_momentum") = 0.85, nb::arg("max_momentum") = 0.95,
           nb::arg("div_factor") = 25.0, nb::arg("final_div_factor") = 1e4, nb::arg("three_phase") = false);

  bind_optim_adaptive_lbfgs_schedules(m);
  for (nb::handle name : nb::list(m.attr("__dict__").attr("keys")())) {
    nb::object cls = m.attr(name);
    if (PyType_Check(cls.ptr()) && PyObject_IsSubclass(cls.ptr(), m.attr("Optimizer").ptr()) == 1 &&
        !cls.is(m.attr("Optimizer"))) {
      set_init_signature(cls);
    }
  }

  // ---- clipping ----
  m.def("clip_grad_norm_",
        [](TensorsArg parameters, double max_norm, double norm_type, bool error_if_nonfinite) {
    const std::vector<Tensor> params = params_arg(parameters);
    return clip_grad_norm_(params, max_norm, norm_type, error_if_nonfinite);
  }, nb::arg("parameters"), nb::arg("max_norm"), nb::arg("norm_type") = 2.0, nb::arg("error_if_nonfinite") = false,
        "Scales the gradients in place so their joint norm_type-norm (the norm of the per-tensor norms; inf, -inf "
        "and 0 allowed) is at most max_norm, like torch.nn.utils.clip_grad_norm_. Returns the norm before clipping "
        "as a 0-d tensor on the gradients' device (float64 for float64 gradients), computed there without a host "
        "read; a NaN/Inf norm leaves the gradients unscaled, or raises with error_if_nonfinite.");
  m.def("clip_grad_value_",
        [](TensorsArg parameters, double clip_value) { clip_grad_value_(params_arg(parameters), clip_value); },
        nb::arg("parameters"), nb::arg("clip_value"),
        "Clamps every gradient element to [-clip_value, clip_value] in place (torch.nn.utils.clip_grad_value_).");
}

}  // namespace stpy
