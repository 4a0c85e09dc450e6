// Sampling from per-element distributions (src/ops/sampling.cpp): poisson, bernoulli, multinomial and
// randperm.
#include "op_bind.h"

namespace stpy {

void bind_tensor_sampling(nb::module_& m, nb::class_<Tensor>& cls) {
  m.def("poisson", [](const Tensor& input, st::Generator* generator) { return st::poisson(input, generator); },
        nb::arg("input"), nb::arg("generator").none() = nb::none(),
        nb::sig("def poisson(input: Tensor, generator: Generator | None = None) -> Tensor"),
        "Poisson counts with rates ``input`` elementwise, in the input's dtype, as torch.poisson: rates below 10 "
        "by the multiplication method, larger ones (up to 1e6) by Hörmann's transformed rejection (PTRS), drawn "
        "from ``generator`` (the global one when None) on the input's device.");
  both(
      m, cls, "bernoulli",
      [](const Tensor& input, std::optional<double> p, st::Generator* generator) {
    return p ? st::bernoulli(input, *p, generator) : st::bernoulli(input, generator);
  },
      OpDoc{"p: float | None = None, *, generator: Generator | None = None", "Tensor",
            "0/1 draws in the input's dtype, 1 with probability ``input`` elementwise (floating, each in [0, 1]) or, "
            "given ``p``, with probability p for every element, drawn from ``generator`` (the global one when None) "
            "on the input's device, as torch.bernoulli. ValueError naming the range for a probability outside [0, 1]."},
      nb::arg("p").none() = nb::none(), nb::kw_only(), nb::arg("generator").none() = nb::none());
  both(m, cls, "multinomial",
       [](const Tensor& input, int64_t num_samples, bool replacement, st::Generator* generator) {
    return st::multinomial(input, num_samples, replacement, generator);
  },
       OpDoc{"num_samples: int, replacement: bool = False, *, generator: Generator | None = None", "Tensor",
             "``num_samples`` int64 category indices per row of the 1-D or 2-D non-negative weights ``input``, as "
             "torch.multinomial: with replacement by searching uniforms in each row's cumulative distribution, "
             "without it by the Gumbel top-k trick (the law of drawing one at a time without replacement)."},
       nb::arg("num_samples"), nb::arg("replacement") = false, nb::kw_only(), nb::arg("generator").none() = nb::none());
  m.def("randperm",
        [](int64_t n, st::Generator* generator, nb::handle dtype, nb::handle device, bool requires_grad) {
    const st::Device dev = device.is_none() ? st::Device{} : st::Device::parse(nb::cast<std::string>(nb::str(device)));
    Tensor out = st::randperm(n, to_optional_dtype(dtype).value_or(Dtype::Int64), dev, generator);
    if (requires_grad) out.set_requires_grad(true);
    return out;
  }, nb::arg("n"), nb::kw_only(), nb::arg("generator").none() = nb::none(), nb::arg("dtype").none() = nb::none(),
        nb::arg("device").none() = nb::none(), nb::arg("requires_grad") = false,
        nb::sig("def randperm(n: int, *, generator: Generator | None = None, dtype: dtype | str | None = None, device: "
                "str | None = None, requires_grad: bool = False) -> Tensor"),
        "A uniformly random permutation of 0, 1, ..., n-1 (int64 unless dtype says otherwise), drawn from "
        "``generator`` (the global one when None) on ``device``, as torch.randperm.");
}

}  // namespace stpy
