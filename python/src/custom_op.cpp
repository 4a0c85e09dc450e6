// The autograd hook behind spiraltorch.ops: a node whose backward is a Python callable, so
// operators registered from Python with a backward take part in .backward() like built-ins.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <memory>
#include <string>
#include <vector>

#include "convert.h"
#include "spiraltorch/autograd.h"
#include "spiraltorch/error.h"
#include "spiraltorch/tensor.h"

namespace nb = nanobind;

namespace stpy {

using st::Tensor;

void bind_custom_op(nb::module_& m) {
  m.def(
      "_record_custom",
      [](Tensor& out, const std::string& name, const std::vector<Tensor>& inputs, nb::callable backward) {
        if (!st::needs_grad(inputs)) return;
        // The graph may be freed on any thread.
        const std::shared_ptr<nb::object> fn = shared_callable(std::move(backward));
        const size_t n = inputs.size();
        st::record(out, name.c_str(), inputs, [fn, n, name](const Tensor& g) -> std::vector<Tensor> {
          nb::gil_scoped_acquire gil;
          const nb::object r = (*fn)(g);
          std::vector<Tensor> grads;
          for (nb::handle item : r) grads.push_back(item.is_none() ? Tensor() : nb::cast<Tensor>(item));
          if (grads.size() != n) {
            throw st::ValueError(name + ": backward returned " + std::to_string(grads.size()) +
                                 " gradients for " + std::to_string(n) + " inputs");
          }
          return grads;
        });
      },
      nb::arg("out"), nb::arg("name"), nb::arg("inputs"), nb::arg("backward"),
      "Attaches an autograd node to `out` whose backward calls `backward(grad_out)` -> one gradient "
      "(or None) per input. No-op when no input needs a gradient or grad mode is off.");
}

}  // namespace stpy
