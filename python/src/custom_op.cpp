// Python's autograd.Function (and the backward of operators registered from Python in
// spiraltorch.ops): a binding of st::autograd::apply_function, one node per call whatever the
// number of outputs. The Python side (python/spiraltorch/autograd.py) binds arguments and
// keeps Python objects; the graph, ctx state and gradient checks are the C++ ones.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <memory>
#include <string>
#include <vector>

#include "convert.h"
#include "spiraltorch/autograd_function.h"
#include "spiraltorch/error.h"
#include "spiraltorch/tensor.h"

namespace nb = nanobind;

namespace stpy {

using st::Tensor;
using st::autograd::FunctionCtx;

namespace {

// A list whose items are Tensors or None (None: an undefined Tensor). `what` names the list in errors.
std::vector<Tensor> tensors_or_none(nb::handle seq, const std::string& name, const char* what) {
  std::vector<Tensor> out;
  size_t i = 0;
  for (nb::handle item : seq) {
    ++i;
    if (item.is_none()) {
      out.emplace_back();
    } else if (nb::isinstance<Tensor>(item)) {
      out.push_back(nb::cast<Tensor>(item));
    } else {
      throw nb::type_error(("function " + name + " returned a " + nb::cast<std::string>(nb::type_name(item.type())) +
                            " as the " + what + " at position " + std::to_string(i) + ", expected a Tensor or None")
                               .c_str());
    }
  }
  return out;
}

nb::list to_py(const std::vector<Tensor>& ts) {
  nb::list out;
  for (const Tensor& t : ts) out.append(t.defined() ? nb::cast(t) : nb::none());
  return out;
}

}  // namespace

void bind_custom_op(nb::module_& m) {
  nb::class_<FunctionCtx>(m, "_FunctionCtx",
                          "The native state of an autograd.Function's ctx (spiraltorch.autograd.FunctionCtx "
                          "derives from it).")
      .def(nb::init<std::string>(), nb::arg("name") = "CustomFunctionBackward")
      .def_prop_ro("_st_name", &FunctionCtx::name)
      .def("_save",
           [](FunctionCtx& c, const nb::sequence& ts) {
    c.save_for_backward(tensors_or_none(ts, c.name(), "saved tensor"));
  }, nb::arg("tensors"), "Saves tensors (None allowed) and remembers their versions.")
      .def("_check_saved", [](const FunctionCtx& c) { (void)c.saved_tensors(); },
           "Raises SpiralError if a saved tensor was modified in place since it was saved.")
      .def("_mark_non_differentiable",
           [](FunctionCtx& c, const std::vector<Tensor>& ts) { c.mark_non_differentiable(ts); }, nb::arg("outputs"))
      .def("set_materialize_grads", &FunctionCtx::set_materialize_grads, nb::arg("value"),
           "Whether backward gets zeros (True, the default) or None for the gradient of an output that "
           "received none (unused, or non-differentiable).");

  m.def("_apply_function",
        [](nb::object ctx_obj, const nb::sequence& inputs_seq, nb::callable forward, nb::callable backward,
           bool once_differentiable) {
    FunctionCtx& ctx = nb::cast<FunctionCtx&>(ctx_obj);
    const std::string name = ctx.name();
    // The node may outlive this call and be freed on any thread: it keeps the Python ctx (with its
    // attributes) through a holder that drops it with the GIL held.
    const std::shared_ptr<nb::object> holder = shared_object(ctx_obj);
    const std::shared_ptr<FunctionCtx> ctx_ptr(holder, &ctx);
    const std::shared_ptr<nb::object> bw = shared_callable(std::move(backward));
    const std::vector<Tensor> inputs = tensors_or_none(inputs_seq, name, "input");
    std::vector<Tensor> outputs;
    const std::vector<Tensor> results =
        st::autograd::apply_function(ctx_ptr, inputs, [&](FunctionCtx&, const std::vector<Tensor>&) {
      outputs = tensors_or_none(forward(), name, "output");
      return outputs;
    }, [bw, name](FunctionCtx&, const std::vector<Tensor>& grads) {
      nb::gil_scoped_acquire gil;
      return tensors_or_none((*bw)(to_py(grads)), name, "gradient");
    }, once_differentiable);
    // None where the output is forward's own (not recorded): Python then returns its object as it is.
    nb::list out;
    for (size_t j = 0; j < results.size(); ++j) {
      const bool own = !results[j].defined() || (j < outputs.size() && results[j].same(outputs[j]));
      out.append(own ? nb::none() : nb::cast(results[j]));
    }
    return out;
  },
        nb::arg("ctx"), nb::arg("inputs"), nb::arg("forward"), nb::arg("backward"), nb::arg("once_differentiable"),
        nb::sig("def _apply_function(ctx: _FunctionCtx, inputs: collections.abc.Sequence[Tensor | None], "
                "forward: collections.abc.Callable[[], collections.abc.Sequence[Tensor | None]], "
                "backward: collections.abc.Callable[[list[Tensor | None]], collections.abc.Sequence[Tensor | None]], "
                "once_differentiable: bool) -> list[Tensor | None]"),
        "Runs forward() with recording off and records one node for its differentiable outputs whose backward "
        "calls backward(grad_outputs) -> one gradient (or None) per input (st::autograd::apply_function). "
        "Returns, per output, the recorded alias, or None where the output is forward's own.");
}

}  // namespace stpy
