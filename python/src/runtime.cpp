// Bindings of the runtime layer: the event bus, the rank-k planner and SpiralK. The Python
// modules spiraltorch.plugin, spiraltorch.planner and spiraltorch.spiralk are thin views of these.
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <string>

#include "convert.h"
#include "core/op_observer.h"
#include "spiraltorch/runtime/events.h"
#include "spiraltorch/runtime/rank_plan.h"
#include "spiraltorch/runtime/spiralk.h"

namespace nb = nanobind;

namespace stpy {

namespace {

namespace ev = st::events;
namespace rt = st::runtime;
namespace sk = st::spiralk;

PyObject* g_spiralk_error = nullptr;

// ---------------------------------------------------------------- events

nb::object event_value(const ev::Value& v) {
  return std::visit([](const auto& x) -> nb::object {
    using T = std::decay_t<decltype(x)>;
    if constexpr (std::is_same_v<T, std::monostate>) {
      return nb::none();
    } else if constexpr (std::is_same_v<T, std::vector<int64_t>>) {
      nb::list l;
      for (const int64_t d : x) l.append(d);
      return l;
    } else {
      return nb::cast(x);
    }
  }, v);
}

ev::Value to_event_value(nb::handle h, const std::string& key) {
  if (h.is_none()) return std::monostate{};
  if (nb::isinstance<nb::bool_>(h)) return nb::cast<bool>(h);
  if (nb::isinstance<nb::int_>(h)) return nb::cast<int64_t>(h);
  if (nb::isinstance<nb::float_>(h)) return nb::cast<double>(h);
  if (nb::isinstance<nb::str>(h)) return utf8_of(h, "events.publish", key.c_str());
  if (nb::isinstance<nb::list>(h) || nb::isinstance<nb::tuple>(h)) {
    std::vector<int64_t> out;
    for (nb::handle item : h) out.push_back(nb::cast<int64_t>(item));
    return out;
  }
  throw st::DtypeError("events.publish: field '" + key +
                       "' must be None, bool, int, float, str or a list of ints, got " +
                       std::string(nb::type_name(h.type()).c_str()));
}

nb::dict event_dict(const ev::Event& e) {
  nb::dict d;
  d["ts"] = e.timestamp;
  d["type"] = e.type;
  for (const auto& [k, v] : e.fields) d[k.c_str()] = event_value(v);
  return d;
}

nb::dict report_dict(const ev::PublishReport& r) {
  nb::dict d;
  d["ok"] = r.ok();
  d["event_type"] = r.event_type;
  d["matched"] = r.matched;
  d["delivered"] = r.delivered;
  d["panicked"] = 0;  // C++ listeners report exceptions as failures; nothing aborts dispatch
  nb::list failures;
  for (const ev::Failure& f : r.failures) {
    nb::dict fd;
    fd["subscription_id"] = f.subscription_id;
    fd["message"] = f.message;
    failures.append(fd);
  }
  d["failures"] = failures;
  return d;
}

uint64_t subscribe(const std::string& type, nb::callable fn) {
  const std::shared_ptr<nb::object> cb = shared_callable(std::move(fn));
  return ev::subscribe(type, [cb, type](const ev::Event& e) {
    nb::gil_scoped_acquire gil;
    try {
      (*cb)(event_dict(e));
    } catch (nb::python_error& err) {
      // The traceback goes to stderr; the bus records "<ExceptionType>: <message>" as the failure.
      const std::string message =
          std::string(nb::type_name(err.type()).c_str()) + ": " + std::string(nb::str(err.value()).c_str());
      try {
        nb::module_::import_("sys").attr("stderr").attr("write")("spiraltorch.plugin: a listener for '" + e.type +
                                                                 "' raised:\n");
        nb::module_::import_("traceback").attr("print_exception")(err.value());
      } catch (nb::python_error&) {  // reporting must not hide the original failure
      }
      throw std::runtime_error(message);
    }
  });
}

// ---------------------------------------------------------------- planner

nb::dict caps_dict(const rt::DeviceCaps& c) {
  nb::dict d;
  d["backend"] = c.backend;
  d["subgroup"] = c.subgroup;
  d["lane_width"] = c.lane_width;
  d["max_workgroup"] = c.max_workgroup;
  d["shared_mem_per_workgroup"] = c.shared_mem_per_workgroup ? nb::cast(*c.shared_mem_per_workgroup) : nb::none();
  return d;
}

nb::dict choice_dict(const rt::RankChoice& c) {
  nb::dict d;
  d["use_two_stage"] = c.use_two_stage;
  d["workgroup"] = c.workgroup;
  d["lanes"] = c.lanes;
  d["channel_stride"] = c.channel_stride;
  d["merge_kind"] = c.merge_kind;
  d["merge_detail"] = c.merge_detail;
  d["tile"] = c.tile;
  d["compaction_tile"] = c.compaction_tile;
  d["subgroup"] = c.subgroup;
  d["fft_tile"] = c.fft_tile;
  d["fft_radix"] = c.fft_radix;
  d["fft_segments"] = c.fft_segments;
  return d;
}

rt::DeviceCaps::Overrides overrides_of(std::optional<int64_t> lane_width, std::optional<bool> subgroup,
                                       std::optional<int64_t> max_workgroup, std::optional<int64_t> shared_mem) {
  rt::DeviceCaps::Overrides o;
  o.lane_width = lane_width;
  o.subgroup = subgroup;
  o.max_workgroup = max_workgroup;
  o.shared_mem_per_workgroup = shared_mem;
  return o;
}

// ---------------------------------------------------------------- SpiralK

nb::object sk_value(const sk::Value& v) {
  return std::visit([](const auto& x) -> nb::object {
    using T = std::decay_t<decltype(x)>;
    if constexpr (std::is_same_v<T, double>) {
      // Whole numbers come back as int, so plan fields read naturally (tile 1024, not 1024.0).
      if (std::isfinite(x) && x == std::floor(x) && std::fabs(x) < 9.0e15) return nb::int_(static_cast<int64_t>(x));
      return nb::float_(x);
    } else {
      return nb::cast(x);
    }
  }, v);
}

sk::Variables variables_of(const nb::dict& vars) {
  sk::Variables out;
  for (const auto& [k, v] : vars) {
    const std::string key = utf8_of(k, "spiralk", "a variable name");
    if (nb::isinstance<nb::bool_>(v)) {
      out[key] = nb::cast<bool>(v);
    } else if (nb::isinstance<nb::int_>(v) || nb::isinstance<nb::float_>(v)) {
      out[key] = nb::cast<double>(v);
    } else if (nb::isinstance<nb::str>(v)) {
      out[key] = utf8_of(v, "spiralk", "a variable value");
    } else {
      throw st::DtypeError("spiralk: variable '" + key + "' must be a bool, number or str, got " +
                           std::string(nb::type_name(v.type()).c_str()));
    }
  }
  return out;
}

nb::dict result_dict(const sk::Result& r) {
  nb::dict hard;
  for (const auto& [k, v] : r.hard) hard[k.c_str()] = sk_value(v);
  nb::list soft;
  for (const sk::SoftRule& s : r.soft) {
    nb::dict d;
    d["field"] = s.field;
    d["value"] = sk_value(s.value);
    d["weight"] = s.weight;
    soft.append(d);
  }
  nb::dict d;
  d["hard"] = hard;
  d["soft"] = soft;
  d["unison_kind"] = r.unison_kind ? nb::cast(*r.unison_kind) : nb::none();
  return d;
}

}  // namespace

void bind_runtime(nb::module_& m) {
  // SpiralKError(SpiralValueError): carries .line and .column besides the message.
  const nb::object base = m.attr("SpiralValueError");
  g_spiralk_error = PyErr_NewExceptionWithDoc("spiraltorch.SpiralKError",
                                              "A SpiralK syntax or evaluation error; .line and .column are 1-based.",
                                              base.ptr(), nullptr);
  m.attr("SpiralKError") = nb::borrow(g_spiralk_error);
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const sk::SpiralKError& e) {
      nb::object exc = nb::borrow(g_spiralk_error)(e.what());
      exc.attr("line") = e.line();
      exc.attr("column") = e.column();
      exc.attr("detail") = e.detail();
      PyErr_SetObject(g_spiralk_error, exc.ptr());
    }
  });

  // ---- events
  m.def("_events_subscribe", &subscribe, nb::arg("event_type"), nb::arg("callback"),
        "Subscribes `callback(event_dict)` on the C++ event bus; returns the subscription id.");
  m.def("_events_unsubscribe", &ev::unsubscribe, nb::arg("event_type"), nb::arg("subscription_id"),
        "Removes a subscription; returns whether it existed.");
  m.def("_events_clear", &ev::clear, nb::arg("event_type") = nb::none(),
        "Removes every subscription of `event_type` (all types when None); returns how many went.");
  m.def("_events_has_listeners", [](const std::string& t) { return ev::has_listeners(t); }, nb::arg("event_type"),
        "Whether an event of `event_type` would reach a listener (specific or wildcard).");
  m.def("_events_listener_count", &ev::listener_count, "The number of subscriptions over all event types.");
  m.def("_events_tensor_op_listened", &ev::tensor_op_listened,
        "Whether TensorOp events are listened to (the one atomic load ops pay when nobody listens).");
  // Inside `with _core._SilentOps():` built-in ops on this thread publish no TensorOp: a custom
  // operator built from built-in ones is announced once, as itself.
  struct SilentOps {};
  nb::class_<SilentOps>(m, "_SilentOps",
                        "Inside the with-block, built-in ops on this thread publish no TensorOp events.")
      .def(nb::init<>())
      .def("__enter__", [](SilentOps&) {
    ++st::op_observer::depth();
  }).def("__exit__", [](SilentOps&, nb::args) {
    --st::op_observer::depth();
    return false;
  });
  m.def("_events_publish",
        [](const std::string& type, const nb::dict& fields) {
    ev::Event e;
    e.type = type;
    for (const auto& [k, v] : fields) {
      const std::string key = utf8_of(k, "events.publish", "a field name");
      e.fields.emplace_back(key, to_event_value(v, key));
    }
    return report_dict(ev::publish(std::move(e)));
  }, nb::arg("event_type"), nb::arg("fields"),
        "Publishes an event with `fields` (None, bool, int, float, str or int lists) and returns the report.");

  // ---- planner
  nb::class_<rt::RankPlan>(m, "_RankPlan", "A rank-k launch plan (spiraltorch.plan wraps it).")
      .def_prop_ro("kind", [](const rt::RankPlan& p) { return std::string(rt::rank_kind_name(p.kind)); },
                   "'topk', 'midk', 'bottomk' or 'fft'.")
      .def_ro("rows", &rt::RankPlan::rows, "Rows of the planned problem.")
      .def_ro("cols", &rt::RankPlan::cols, "Columns of the planned problem.")
      .def_ro("k", &rt::RankPlan::k, "Values kept per row.")
      .def_ro("requested_backend", &rt::RankPlan::requested_backend, "The backend asked for ('auto' included).")
      .def_ro("effective_backend", &rt::RankPlan::effective_backend, "The backend planned for.")
      .def_prop_ro("caps", [](const rt::RankPlan& p) { return caps_dict(p.caps); }, "The device capabilities used.")
      .def_prop_ro("choice", [](const rt::RankPlan& p) { return choice_dict(p.choice); },
                   "The launch choice, keyed by the SpiralK hard fields.")
      .def_prop_ro("merge_strategy", &rt::RankPlan::merge_strategy, "'bitonic', 'shared' or 'warp'.")
      .def_prop_ro("merge_detail", &rt::RankPlan::merge_detail,
                   "'auto', 'heap', 'kway', 'bitonic', 'warp_heap' or 'warp_bitonic'.")
      .def_prop_ro("runtime_ready", [](const rt::RankPlan& p) { return rt::runtime_ready(p.effective_backend); },
                   "Whether this process can execute on the effective backend.")
      .def("to_unison_script", &rt::RankPlan::to_unison_script,
           "The plan as a SpiralK `unison <kind> { ... }` block (it parses back to the same choice).")
      .def("fft_spiralk_hint", &rt::RankPlan::fft_spiralk_hint,
           "Three soft SpiralK rules steering a tuner towards this plan's FFT tiling.")
      .def("spiralk_variables",
           [](const rt::RankPlan& p) {
    nb::dict d;
    for (const auto& [k, v] : p.spiralk_variables()) d[k.c_str()] = sk_value(v);
    return d;
  }, "The variables a SpiralK program sees for this plan (r, c, k, sg, ..., and the current choice).")
      .def("rewrite_with_spiralk",
           [](const rt::RankPlan& p, const std::string& script, const nb::dict& variables) {
    sk::Result r;
    rt::RankPlan q = p.rewrite_with_spiralk(script, &r, variables_of(variables));
    return std::make_pair(std::move(q), result_dict(r));
  }, nb::arg("script"), nb::arg("variables"),
           "(new plan, SpiralK result): the choice overridden by the program's hard assignments, then validated "
           "(ValueError naming the field); `variables` adds names the program may read.")
      .def("execute", [](const rt::RankPlan& p, const Tensor& x) {
    rt::RankExecution r;
    {
      nb::gil_scoped_release release;
      r = p.execute(x);
    }
    nb::dict s;
    s["tile"] = r.stats.tile;
    s["tiles_per_row"] = r.stats.tiles_per_row;
    s["candidates_per_row"] = r.stats.candidates_per_row;
    s["two_stage"] = r.stats.two_stage;
    s["compaction_tile"] = r.stats.compaction_tile;
    s["compaction_blocks_per_row"] = r.stats.compaction_blocks_per_row;
    s["merge_candidates_per_row"] = r.stats.merge_candidates_per_row;
    s["merge"] = r.stats.merge;
    return nb::make_tuple(r.values, r.indices, s);
  }, nb::arg("x"), "Runs the planned rank-k on the CPU (rows, cols) tensor x: (values, indices, stats).");

  m.def("_rank_plan",
        [](const std::string& kind, int64_t rows, int64_t cols, int64_t k, const std::string& backend,
           std::optional<int64_t> lane_width, std::optional<bool> subgroup, std::optional<int64_t> max_workgroup,
           std::optional<int64_t> shared_mem) {
    return rt::plan_rank(rt::parse_rank_kind(kind), rows, cols, k, backend,
                         overrides_of(lane_width, subgroup, max_workgroup, shared_mem));
  },
        nb::arg("kind"), nb::arg("rows"), nb::arg("cols"), nb::arg("k"), nb::arg("backend"),
        nb::arg("lane_width").none(), nb::arg("subgroup").none(), nb::arg("max_workgroup").none(),
        nb::arg("shared_mem_per_workgroup").none(),
        "Plans `kind` over rows x cols keeping k per row for `backend` ('auto': CUDA when usable, else the CPU); "
        "ValueError on non-positive sizes or k > cols.");
  m.def("_rank_device_caps",
        [](const std::string& backend, std::optional<int64_t> lane_width, std::optional<bool> subgroup,
           std::optional<int64_t> max_workgroup, std::optional<int64_t> shared_mem) {
    return caps_dict(
        rt::DeviceCaps::for_backend(backend, overrides_of(lane_width, subgroup, max_workgroup, shared_mem)));
  },
        nb::arg("backend"), nb::arg("lane_width").none(), nb::arg("subgroup").none(), nb::arg("max_workgroup").none(),
        nb::arg("shared_mem_per_workgroup").none(),
        "The planner's device table entry for `backend` with the given overrides (validated).");
  m.def("_rank_align_workgroup",
        [](int64_t lane_width, int64_t max_workgroup, int64_t w) {
    rt::DeviceCaps c;
    c.lane_width = lane_width;
    c.max_workgroup = max_workgroup;
    return c.align_workgroup(w);
  }, nb::arg("lane_width"), nb::arg("max_workgroup"), nb::arg("w"),
        "w clamped to [lane_width, max_workgroup] and rounded to a multiple of the lane width.");
  m.def("_rank_resolve_backend", &rt::resolve_backend, nb::arg("backend"),
        "'auto' -> 'cuda' when usable else 'cpu'; aliases (webgpu, rocm) resolved; ValueError when unknown.");
  m.def("_rank_runtime_ready", &rt::runtime_ready, nb::arg("backend"),
        "Whether this process can execute on `backend` (the CPU always; CUDA when built and present).");

  // ---- SpiralK
  m.def(
      "_spiralk_eval",
      [](const std::string& source, const nb::dict& variables) {
    return result_dict(sk::Program::parse(source).eval(variables_of(variables)));
  }, nb::arg("source"), nb::arg("variables"),
      "Parses and runs a SpiralK program: {'hard': {field: value}, 'soft': [{field, value, weight}], 'unison_kind'}.");
  m.def("_spiralk_check", [](const std::string& source) { (void)sk::Program::parse(source); }, nb::arg("source"),
        "Parses a SpiralK program; raises SpiralKError at the first syntax error.");
  m.def("_spiralk_hard_fields", &sk::hard_fields,
        "The hard fields a SpiralK program may assign (canonical names, in documentation order).");
}

}  // namespace stpy
