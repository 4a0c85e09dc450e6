// Checked state-dict handoff on every Module, and LoraLinear (see nn/handoff.h, nn/lora.h).
#include <nanobind/stl/pair.h>
#include <nanobind/stl/shared_ptr.h>

#include "nn_bind.h"
#include "spiraltorch/nn/handoff.h"
#include "spiraltorch/nn/lora.h"

namespace stpy {

using st::nn::HandoffOptions;
using st::nn::HandoffReport;
using st::nn::KeyMap;
using st::nn::KeyRule;
using st::nn::LoraLinear;
using st::nn::Module;

namespace {

// What the handoff functions accept, for the stubs (the bindings convert and check the values).
// An external state: a Module, a mapping of key -> tensor/array/list, or (key, value) pairs.
using ExternalPairs = nb::typed<nb::iterable, std::tuple<std::string, stub::ArrayLike>>;
using ExternalMapping = nb::typed<nb::mapping, std::string, stub::ArrayLike>;
using ExternalArg = nb::typed<nb::handle, std::variant<nb::typed<nb::handle, Module>, ExternalMapping, ExternalPairs>>;
using KeyMapArg = nb::typed<nb::handle, stub::KeyMapLike>;
using AllowMissingArg = nb::typed<nb::handle, std::variant<std::string, std::vector<std::string>>>;
using TensorDict = nb::typed<nb::dict, std::string, Tensor>;

// One external value as a Tensor: SpiralTorch tensors as they are; anything speaking
// DLPack or the array interface (NumPy, PyTorch, JAX) through st.from_dlpack, which
// shares memory when it can; nested lists / numbers copied.
Tensor external_value(nb::handle key, nb::handle value) {
  if (nb::isinstance<Tensor>(value)) return nb::cast<Tensor>(value).detach();
  if (nb::hasattr(value, "__dlpack__") || nb::hasattr(value, "__array_interface__")) {
    nb::object v = nb::borrow(value);
    // PyTorch refuses to export tensors that require grad; detach is free.
    if (nb::hasattr(v, "detach") && nb::hasattr(v, "requires_grad")) v = v.attr("detach")();
    nb::object core = nb::module_::import_("spiraltorch._core");
    try {
      return nb::cast<Tensor>(core.attr("from_dlpack")(v));
    } catch (const st::SpiralError&) {
      throw;
    } catch (nb::python_error& e) {
      // Fall back to a copy (e.g. unsupported strides or device-side exporters).
      if (nb::hasattr(v, "cpu")) v = v.attr("cpu")();
      if (nb::hasattr(v, "numpy")) {
        try {
          return tensor_from_data(v.attr("numpy")(), std::nullopt);
        } catch (...) {
        }
      }
      throw;
    }
  }
  if (nb::isinstance<nb::list>(value) || nb::isinstance<nb::tuple>(value) || to_scalar(value)) {
    return tensor_from_data(value, std::nullopt);
  }
  throw st::DtypeError(
      "state dict: value for '" + nb::cast<std::string>(nb::str(key)) + "' has unsupported type " +
      nb::cast<std::string>(nb::str(nb::handle(reinterpret_cast<PyObject*>(Py_TYPE(value.ptr()))).attr("__name__"))) +
      " (expected a Tensor, NumPy array, PyTorch tensor or nested list)");
}

st::nn::StateDict external_from_py(nb::handle obj) {
  st::nn::StateDict out;
  if (nb::isinstance<Module>(obj)) return nb::cast<Module&>(obj).state_dict();
  nb::object items;
  if (nb::hasattr(obj, "items")) {
    items = obj.attr("items")();
  } else if (nb::isinstance<nb::list>(obj) || nb::isinstance<nb::tuple>(obj)) {
    items = nb::borrow(obj);
  } else {
    throw st::DtypeError("state dict must be a mapping of str -> tensor or a sequence of (str, tensor) pairs");
  }
  for (nb::handle item : items) {
    if (nb::len(item) != 2) throw st::DtypeError("state dict: each item must be a (key, tensor) pair");
    nb::object key = item[0], value = item[1];
    if (!nb::isinstance<nb::str>(key)) throw st::DtypeError("state dict: keys must be strings");
    out.emplace_back(nb::cast<std::string>(key), external_value(key, value));
  }
  return out;
}

KeyRule rule_from(nb::handle source, nb::handle target) {
  KeyRule r;
  r.source = nb::cast<std::string>(source);
  if (nb::isinstance<nb::str>(target)) {
    r.target = nb::cast<std::string>(target);
  } else if (nb::isinstance<nb::dict>(target)) {
    nb::dict d = nb::borrow<nb::dict>(target);
    if (!d.contains("target")) throw st::ValueError("key_map: rule for '" + r.source + "' has no 'target'");
    r.target = nb::cast<std::string>(d["target"]);
    if (d.contains("transform")) r.transform = st::nn::parse_transform(nb::cast<std::string>(d["transform"]));
  } else {
    throw st::DtypeError("key_map: the target of '" + r.source + "' must be a str or {'target', 'transform'}");
  }
  return r;
}

// dict source -> target | {"target", "transform"}; or a sequence of (source, target[, transform])
// tuples or {"source", "target", "transform"} dicts (lets one source feed several targets).
KeyMap key_map_from_py(nb::handle obj) {
  KeyMap out;
  if (nb::isinstance<nb::dict>(obj)) {
    for (auto [k, v] : nb::borrow<nb::dict>(obj)) out.push_back(rule_from(k, v));
    return out;
  }
  if (!(nb::isinstance<nb::list>(obj) || nb::isinstance<nb::tuple>(obj))) {
    throw st::DtypeError("key_map must be a dict or a list of rules");
  }
  for (nb::handle item : obj) {
    if (nb::isinstance<nb::dict>(item)) {
      nb::dict d = nb::borrow<nb::dict>(item);
      if (!d.contains("source")) throw st::ValueError("key_map: rule without 'source'");
      out.push_back(rule_from(d["source"], item));
    } else {
      const size_t n = nb::len(item);
      if (n != 2 && n != 3) throw st::ValueError("key_map: a rule tuple is (source, target[, transform])");
      KeyRule r;
      r.source = nb::cast<std::string>(item[0]);
      r.target = nb::cast<std::string>(item[1]);
      if (n == 3) r.transform = st::nn::parse_transform(nb::cast<std::string>(item[2]));
      out.push_back(r);
    }
  }
  return out;
}

HandoffOptions options_from(nb::handle allow_missing, bool allow_extra) {
  HandoffOptions o;
  o.allow_extra = allow_extra;
  if (!allow_missing.is_none()) {
    if (nb::isinstance<nb::str>(allow_missing)) {
      o.allow_missing.push_back(nb::cast<std::string>(allow_missing));
    } else {
      for (nb::handle p : allow_missing) o.allow_missing.push_back(nb::cast<std::string>(p));
    }
  }
  return o;
}

nb::object shape_obj(const std::optional<st::Shape>& s) {
  if (!s) return nb::none();
  nb::list l;
  for (int64_t d : *s) l.append(d);
  return nb::tuple(l);
}

nb::dict report_to_dict(const HandoffReport& r) {
  nb::dict d;
  d["compatible"] = r.compatible;
  d["matched"] = r.matched;
  d["missing"] = r.missing;
  d["shape_mismatched"] = r.shape_mismatched;
  d["extra"] = r.extra;
  d["conflicts"] = r.conflicts;
  nb::list entries;
  for (const auto& e : r.entries) {
    nb::dict x;
    x["name"] = e.name;
    x["status"] = e.status;
    x["source_name"] = e.source_name;
    x["transform"] = e.transform;
    x["expected_shape"] = shape_obj(e.expected_shape);
    x["source_shape"] = shape_obj(e.source_shape);
    x["original_source_shape"] = shape_obj(e.original_source_shape);
    x["expected_dtype"] = e.expected_dtype.empty() ? nb::none() : nb::cast(e.expected_dtype);
    x["source_dtype"] = e.source_dtype.empty() ? nb::none() : nb::cast(e.source_dtype);
    x["kept"] = e.kept;
    x["dropped"] = e.dropped;
    x["zero_filled"] = e.zero_filled;
    x["detail"] = e.detail;
    entries.append(x);
  }
  d["entries"] = entries;
  nb::list extra;
  for (const auto& k : r.extra_keys) extra.append(k);
  d["extra_keys"] = extra;
  nb::dict src, sub;
  src["hash"] = r.source_hash;
  sub["hash"] = r.matched_subset_hash;
  d["source"] = src;
  d["matched_subset"] = sub;
  d["problems"] = r.compatible ? std::string() : r.problems();
  return d;
}

// What an overlap resize would keep and drop, without loading.
nb::dict projection_dict(const HandoffReport& r) {
  nb::dict d;
  int64_t kept = 0, dropped = 0, zero = 0;
  nb::list entries, resized;
  for (const auto& e : r.entries) {
    if (e.status != "matched") continue;
    kept += e.kept;
    dropped += e.dropped;
    zero += e.zero_filled;
    nb::dict x;
    x["name"] = e.name;
    x["source_name"] = e.source_name;
    x["transform"] = e.transform;
    x["original_source_shape"] = shape_obj(e.original_source_shape);
    x["expected_shape"] = shape_obj(e.expected_shape);
    x["kept"] = e.kept;
    x["dropped"] = e.dropped;
    x["zero_filled"] = e.zero_filled;
    const int64_t src_n = e.kept + e.dropped;
    x["kept_fraction"] = src_n ? static_cast<double>(e.kept) / static_cast<double>(src_n) : 1.0;
    if (e.dropped || e.zero_filled) resized.append(e.name);
    entries.append(x);
  }
  d["compatible"] = r.compatible;
  d["entries"] = entries;
  d["resized"] = resized;
  d["kept"] = kept;
  d["dropped"] = dropped;
  d["zero_filled"] = zero;
  d["problems"] = r.compatible ? std::string() : r.problems();
  return d;
}

template <typename F, typename... Extra>
void add_method(nb::handle cls, const char* name, F&& f, const Extra&... extra) {
  nb::cpp_function_def(std::forward<F>(f), nb::scope(cls), nb::name(name), nb::is_method(), extra...);
}

}  // namespace

void bind_nn_handoff(nb::module_& nn) {
  nb::handle cls = nb::type<Module>();

  add_method(cls, "state_dict_compatibility",
             [](const Module& self, ExternalArg external, AllowMissingArg allow_missing, bool allow_extra) {
    return report_to_dict(
        st::nn::state_dict_compatibility(self, external_from_py(external), options_from(allow_missing, allow_extra)));
  }, nb::arg("external"), nb::kw_only(), nb::arg("allow_missing") = nb::none(), nb::arg("allow_extra") = true,
             "Read-only report of how `external` (same keys) would load: one entry per module key, sorted.");
  add_method(
      cls, "state_dict_compatibility_with_key_map",
      [](const Module& self, ExternalArg external, KeyMapArg key_map, AllowMissingArg allow_missing, bool allow_extra) {
    return report_to_dict(st::nn::state_dict_compatibility_with_key_map(
        self, external_from_py(external), key_map_from_py(key_map), options_from(allow_missing, allow_extra)));
  }, nb::arg("external"), nb::arg("key_map"), nb::kw_only(), nb::arg("allow_missing") = nb::none(),
      nb::arg("allow_extra") = true,
      "Read-only report through a key map {source: target | {'target', 'transform'}} or a list of rules.");
  add_method(
      cls, "load_state_dict_checked",
      [](Module& self, ExternalArg external, KeyMapArg key_map, AllowMissingArg allow_missing, bool allow_extra) {
    const auto o = options_from(allow_missing, allow_extra);
    const auto ext = external_from_py(external);
    if (key_map.is_none()) return report_to_dict(st::nn::load_state_dict_checked(self, ext, o));
    return report_to_dict(st::nn::load_state_dict_subset_mapped_checked(self, ext, key_map_from_py(key_map), o));
  }, nb::arg("external"), nb::arg("key_map") = nb::none(), nb::kw_only(), nb::arg("allow_missing") = nb::none(),
      nb::arg("allow_extra") = true,
      "Loads only when compatible (all keys present, shapes equal), atomically; else CheckpointError.");
  add_method(
      cls, "load_state_dict_subset_mapped_checked",
      [](Module& self, ExternalArg external, KeyMapArg key_map, AllowMissingArg allow_missing, bool allow_extra) {
    return report_to_dict(st::nn::load_state_dict_subset_mapped_checked(
        self, external_from_py(external), key_map_from_py(key_map), options_from(allow_missing, allow_extra)));
  }, nb::arg("external"), nb::arg("key_map"), nb::kw_only(), nb::arg("allow_missing") = nb::none(),
      nb::arg("allow_extra") = true,
      "Loads the mapped subset of a larger checkpoint when every module key is mapped and fits; atomic.");
  add_method(cls, "state_dict_projection_preflight",
             [](const Module& self, ExternalArg external, KeyMapArg key_map, AllowMissingArg allow_missing) {
    const auto ext = external_from_py(external);
    const auto o = options_from(allow_missing, true);
    if (key_map.is_none()) return projection_dict(st::nn::state_dict_compatibility(self, ext, o));
    return projection_dict(st::nn::state_dict_compatibility_with_key_map(self, ext, key_map_from_py(key_map), o));
  }, nb::arg("external"), nb::arg("key_map") = nb::none(), nb::kw_only(), nb::arg("allow_missing") = nb::none(),
             "What a load (with overlap resizes) would keep, drop and zero-fill per key; loads nothing.");
  add_method(cls, "adapter_state_dict", [](Module& self) {
    TensorDict d;
    for (auto& [k, t] : st::nn::adapter_state_dict(self)) d[nb::str(k.c_str())] = nb::cast(t);
    return d;
  }, "The LoRA adapter entries (lora_a, lora_b) of every LoraLinear below this module.");
  add_method(cls, "load_adapter_state_dict", [](Module& self, ExternalArg state) {
    return report_to_dict(st::nn::load_adapter_state_dict(self, external_from_py(state)));
  }, nb::arg("state"), "Loads exactly the adapter entries, checked and atomic.");
  add_method(cls, "adapter_keys", [](Module& self) { return st::nn::adapter_keys(self); },
             "The state-dict keys of the LoRA adapters (<path>::lora_a, <path>::lora_b) below this module.");
  add_method(cls, "num_trainable_parameters", [](const Module& self) {
    int64_t n = 0;
    for (const Tensor& p : self.parameters()) {
      if (p.requires_grad()) n += p.numel();
    }
    return n;
  }, "The number of scalar parameters that require grad (each shared parameter counted once).");

  nn.def("state_dict_hash", [](ExternalArg state) { return st::nn::state_dict_hash(external_from_py(state)); },
         nb::arg("state"), "sha256 over the sorted keys, dtypes, shapes and bytes of a state dict.");
  nn.def("external_state",
         [](ExternalArg state) {
    TensorDict d;
    for (auto& [k, t] : external_from_py(state)) d[nb::str(k.c_str())] = nb::cast(t);
    return d;
  }, nb::arg("state"),
         "Converts a dict of tensors/arrays/lists to SpiralTorch tensors (DLPack, no copy when possible).");
  nn.def("apply_transform",
         [](const Tensor& t, const std::string& transform, std::optional<ShapeArg> expected_arg) {
    const nb::handle expected = expected_arg ? nb::handle(*expected_arg) : nb::none();
    const auto tr = st::nn::parse_transform(transform);
    st::Shape shape = expected.is_none() ? t.shape() : to_shape_obj(expected);
    if (expected.is_none() &&
        (tr == st::nn::Transform::Transpose || tr == st::nn::Transform::TransposeCopyOverlapZeros) &&
        shape.size() == 2) {
      std::swap(shape[0], shape[1]);
    }
    return st::nn::apply_transform(t, tr, shape).contiguous();
  }, nb::arg("tensor"), nb::arg("transform"), nb::arg("shape").none() = nb::none(),
         "tensor as it would be loaded into a parameter of `shape` (default: its own shape, transposed for the "
         "transpose transforms): transform 'identity', 'transpose', 'copy_overlap_zeros' (the overlapping block "
         "copied, the rest zero) or 'transpose_copy_overlap_zeros'. Returns a new contiguous tensor.");

  nb::class_<LoraLinear, Module>(nn, "LoraLinear",
                                 "LoRA around a frozen Linear: y = x W^T + b + (alpha/rank) * dropout(x) A^T B^T.")
      .def(nb::init<int64_t, int64_t, int64_t, double, double, bool, std::string>(), nb::arg("in_features"),
           nb::arg("out_features"), nb::arg("rank"), nb::arg("alpha") = 1.0, nb::arg("dropout") = 0.0,
           nb::arg("bias") = true, nb::arg("name") = "",
           "A frozen base Linear(in_features, out_features, bias) plus trainable adapters lora_a (rank, "
           "in_features; Kaiming-uniform) and lora_b (out_features, rank; zeros), so the output starts equal to the "
           "base; scaling = alpha / rank (alpha > 0); dropout applies to the adapter's input in training.")
      .def_static("from_linear", &LoraLinear::from_linear, nb::arg("linear"), nb::arg("rank"), nb::arg("alpha") = 1.0,
                  nb::arg("dropout") = 0.0, "Wraps an existing Linear, sharing its weight and bias as the frozen base.")
      .def_prop_ro("weight", &LoraLinear::weight, "The frozen (out_features, in_features) base weight.")
      .def_prop_ro("bias",
                   [](LoraLinear& l) -> std::optional<Tensor> {
    Tensor b = l.bias();
    return b.defined() ? std::optional<Tensor>(b) : std::nullopt;
  }, "The frozen (out_features,) base bias, or None.")
      .def_prop_ro("lora_a", &LoraLinear::lora_a, "The (rank, in_features) down-projection adapter.")
      .def_prop_ro("lora_b", &LoraLinear::lora_b, "The (out_features, rank) up-projection adapter.")
      .def_prop_ro("in_features", &LoraLinear::in_features, "The size of the input's last dim.")
      .def_prop_ro("out_features", &LoraLinear::out_features, "The size of the output's last dim.")
      .def_prop_ro("rank", &LoraLinear::rank, "The adapter rank.")
      .def_prop_ro("alpha", &LoraLinear::alpha, "The LoRA alpha (scaling = alpha / rank).")
      .def_prop_ro("scaling", &LoraLinear::scaling, "alpha / rank, the factor of the adapter's contribution.")
      .def_prop_ro("scale", &LoraLinear::scaling, "Alias of scaling.")
      .def_prop_ro("dropout", &LoraLinear::dropout, "The dropout probability on the adapter's input.")
      .def_prop_ro("merged", &LoraLinear::merged, "Whether the adapter is folded into the base weight (merge()).")
      .def("merge", &LoraLinear::merge,
           "Adds scaling * lora_b @ lora_a into the base weight (the adapter is then skipped); ValueError when already "
           "merged.")
      .def("unmerge", &LoraLinear::unmerge,
           "Subtracts the merged adapter from the base weight again; ValueError when not merged.")
      .def("set_trainable", &LoraLinear::set_trainable, nb::arg("trainable") = true,
           "Makes the adapters (lora_a, lora_b) trainable or frozen.")
      .def("set_base_trainable", &LoraLinear::set_base_trainable, nb::arg("trainable") = true,
           "Makes the base weight/bias trainable or frozen (frozen by default).")
      .def("base_state_dict", [](LoraLinear& self) {
    TensorDict d;
    const std::string p = self.name();
    d[nb::str(st::nn::join_key(p, "weight").c_str())] = nb::cast(self.weight().detach());
    if (self.bias().defined()) d[nb::str(st::nn::join_key(p, "bias").c_str())] = nb::cast(self.bias().detach());
    return d;
  }, "The base weight (and bias), detached, keyed '<name>::weight' / '<name>::bias'.");
}

}  // namespace stpy
