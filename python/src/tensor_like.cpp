// The Tensor methods that make tensors like self (torch's new_zeros, new_ones, new_empty, new_full,
// new_tensor, type_as) and the device name Tensor.device returns.
#include "op_bind.h"

namespace stpy {

namespace {

struct LikeOptions {
  Dtype dtype;
  st::Device device;
};

LikeOptions like_options(const Tensor& self, nb::handle dtype, nb::handle device) {
  return {to_optional_dtype(dtype).value_or(self.dtype()),
          device.is_none() ? self.device() : st::Device::parse(nb::cast<std::string>(nb::str(device)))};
}

Tensor finish(Tensor t, bool requires_grad) {
  if (requires_grad) t.set_requires_grad(true);
  return t;
}

// The str subclass of Tensor.device, created once at import and kept for the process (not a module
// attribute: a class of its own would need a stub, and nothing names it).
PyObject* device_name_type = nullptr;

nb::object make_device_name_type() {
  nb::dict ns;
  ns["__doc__"] =
      "What ``Tensor.device`` returns: the device's name (``\"cpu\"``, ``\"cuda:0\"``, ``\"wgpu\"``) as a "
      "str, with PyTorch's ``.type`` and ``.index`` beside it.";
  ns["__module__"] = "spiraltorch._core";
  ns["__slots__"] = nb::tuple();
  nb::object property = nb::module_::import_("builtins").attr("property");
  ns["type"] = property(nb::cpp_function([](nb::handle self) {
    const std::string s = nb::cast<std::string>(nb::str(self));
    return s.substr(0, s.find(':'));
  }),
                        nb::none(), nb::none(), "The device kind: ``\"cpu\"``, ``\"cuda\"`` or ``\"wgpu\"``.");
  ns["index"] = property(nb::cpp_function([](nb::handle self) -> nb::object {
    const std::string s = nb::cast<std::string>(nb::str(self));
    const size_t colon = s.find(':');
    if (colon == std::string::npos) return nb::none();
    return nb::int_(std::stoll(s.substr(colon + 1)));
  }),
                         nb::none(), nb::none(), "The device ordinal, or None when the name carries none.");
  nb::object type_type = nb::borrow(reinterpret_cast<PyObject*>(&PyType_Type));
  return type_type("DeviceName", nb::make_tuple(nb::borrow(reinterpret_cast<PyObject*>(&PyUnicode_Type))), ns);
}

}  // namespace

nb::object device_name(const st::Device& device) { return nb::borrow(device_name_type)(device.str()); }

void bind_tensor_like(nb::module_& m, nb::class_<Tensor>& cls) {
  (void)m;
  device_name_type = make_device_name_type().release().ptr();

  const char* sized =
      "(self, *size: int | collections.abc.Sequence[int], dtype: dtype | str | None = None, "
      "device: str | None = None, requires_grad: bool = False) -> Tensor";
  cls.def("new_zeros",
          [](const Tensor& self, nb::args size, nb::handle dtype, nb::handle device, bool requires_grad) {
    const LikeOptions o = like_options(self, dtype, device);
    return finish(st::zeros(to_shape(size), o.dtype, o.device), requires_grad);
  }, nb::arg("size"), nb::kw_only(), nb::arg("dtype").none() = nb::none(), nb::arg("device").none() = nb::none(),
          nb::arg("requires_grad") = false, nb::sig((std::string("def new_zeros") + sized).c_str()),
          "Zeros of shape ``size`` with self's dtype and device unless given, as torch's Tensor.new_zeros.");
  cls.def("new_ones",
          [](const Tensor& self, nb::args size, nb::handle dtype, nb::handle device, bool requires_grad) {
    const LikeOptions o = like_options(self, dtype, device);
    return finish(st::ones(to_shape(size), o.dtype, o.device), requires_grad);
  }, nb::arg("size"), nb::kw_only(), nb::arg("dtype").none() = nb::none(), nb::arg("device").none() = nb::none(),
          nb::arg("requires_grad") = false, nb::sig((std::string("def new_ones") + sized).c_str()),
          "Ones of shape ``size`` with self's dtype and device unless given, as torch's Tensor.new_ones.");
  cls.def("new_empty",
          [](const Tensor& self, nb::args size, nb::handle dtype, nb::handle device, bool requires_grad) {
    const LikeOptions o = like_options(self, dtype, device);
    return finish(Tensor::empty(to_shape(size), o.dtype, o.device), requires_grad);
  }, nb::arg("size"), nb::kw_only(), nb::arg("dtype").none() = nb::none(), nb::arg("device").none() = nb::none(),
          nb::arg("requires_grad") = false, nb::sig((std::string("def new_empty") + sized).c_str()),
          "An uninitialised tensor of shape ``size`` with self's dtype and device unless given, as torch's "
          "Tensor.new_empty.");
  cls.def(
      "new_full",
      [](const Tensor& self, nb::handle size, nb::handle fill_value, nb::handle dtype, nb::handle device,
         bool requires_grad) {
    const LikeOptions o = like_options(self, dtype, device);
    const std::optional<Scalar> v = to_scalar(fill_value);
    if (!v) throw st::DtypeError("new_full: fill value must be a number");
    return finish(st::full(to_shape_obj(size), *v, o.dtype, o.device), requires_grad);
  },
      nb::arg("size"), nb::arg("fill_value"), nb::kw_only(), nb::arg("dtype").none() = nb::none(),
      nb::arg("device").none() = nb::none(), nb::arg("requires_grad") = false,
      nb::sig(
          "def new_full(self, size: collections.abc.Sequence[int], fill_value: float, *, dtype: dtype | str | None = "
          "None, device: str | None = None, requires_grad: bool = False) -> Tensor"),
      "A tensor of shape ``size`` filled with ``fill_value``, self's dtype and device unless given, as torch's "
      "Tensor.new_full.");
  cls.def(
      "new_tensor",
      [](const Tensor& self, nb::handle data, nb::handle dtype, nb::handle device, bool requires_grad) {
    const LikeOptions o = like_options(self, dtype, device);
    const Tensor t = nb::isinstance<Tensor>(data) ? st::cast(nb::cast<Tensor>(data).detach(), o.dtype).clone()
                                                  : tensor_from_data(data, o.dtype);
    return finish(st::to_device(t, o.device), requires_grad);
  }, nb::arg("data"), nb::kw_only(), nb::arg("dtype").none() = nb::none(), nb::arg("device").none() = nb::none(),
      nb::arg("requires_grad") = false,
      nb::sig("def new_tensor(self, data: typing.Any, *, dtype: dtype | str | None = None, device: str | None = None, "
              "requires_grad: bool = False) -> Tensor"),
      "A copy of ``data`` (lists, numbers, arrays or a tensor) with self's dtype and device unless given, as torch's "
      "Tensor.new_tensor.");
  cls.def("type_as", [](const Tensor& self, const Tensor& other) { return st::cast(self, other.dtype()); },
          nb::arg("other"), nb::sig("def type_as(self, other: Tensor) -> Tensor"),
          "self converted to ``other``'s dtype (self itself when it already has it), as torch's Tensor.type_as.");
  cls.def("is_complex", [](const Tensor&) { return false; },
          "Whether the tensor is complex: always False (complex numbers live in ``ComplexTensor``).");
}

}  // namespace stpy
