// Sampling from per-element distributions: poisson, as a module function (src/ops/sampling.cpp).
#include "op_bind.h"

namespace stpy {

void bind_tensor_sampling(nb::module_& m, nb::class_<Tensor>& cls) {
  (void)cls;
  m.def("poisson", [](const Tensor& input, st::Generator* generator) { return st::poisson(input, generator); },
        nb::arg("input"), nb::arg("generator").none() = nb::none(),
        nb::sig("def poisson(input: Tensor, generator: Generator | None = None) -> Tensor"),
        "Poisson counts with rates ``input`` elementwise, in the input's dtype, as torch.poisson: rates below 10 "
        "by the multiplication method, larger ones (up to 1e6) by Hörmann's transformed rejection (PTRS), drawn "
        "from ``generator`` (the global one when None) on the input's device.");
}

}  // namespace stpy
