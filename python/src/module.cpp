// The native module `spiraltorch._core`.
#include <nanobind/stl/pair.h>

#include <cblas.h>
#include <omp.h>

#include <fstream>
#include <thread>

#include "convert.h"
#include "nn/conv_onednn.h"
#include "nn/rnn_onednn.h"

namespace stpy {

void bind_tensor(nb::module_& m, nb::class_<Tensor>& cls);
void bind_ops(nb::module_& m, nb::class_<Tensor>& cls);
void bind_nn(nb::module_& parent);
void bind_optim(nb::module_& root);
void bind_io(nb::module_& m);
void bind_cuda(nb::module_& m);
void bind_custom_op(nb::module_& m);
void bind_geometry(nb::module_& root);

namespace {

std::string cpu_model() {
  std::ifstream f("/proc/cpuinfo");
  std::string line;
  while (std::getline(f, line)) {
    if (line.rfind("model name", 0) == 0) {
      const auto colon = line.find(':');
      if (colon != std::string::npos) return line.substr(colon + 2);
    }
  }
  return "unknown";
}

std::string simd_level() {
#if defined(__x86_64__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) return "avx512";
  if (__builtin_cpu_supports("avx2")) return "avx2";
  if (__builtin_cpu_supports("avx")) return "avx";
  return "sse2";
#elif defined(__aarch64__)
  return "neon";
#else
  return "scalar";
#endif
}

std::string compiled_simd() {
#if defined(__AVX512F__)
  return "avx512";
#elif defined(__AVX2__)
  return "avx2";
#elif defined(__AVX__)
  return "avx";
#else
  return "baseline";
#endif
}

nb::dict describe_cpu() {
  nb::dict d;
  d["backend"] = "cpu";
  d["device"] = "cpu";
  d["available"] = true;
  d["cpu_model"] = cpu_model();
  d["logical_cores"] = static_cast<int>(std::thread::hardware_concurrency());
  d["threads"] = omp_get_max_threads();
  d["simd"] = simd_level();
  d["compiled_simd"] = compiled_simd();
  d["blas"] = "OpenBLAS (scipy-openblas32)";
  d["blas_config"] = std::string(scipy_openblas_get_config());
  d["blas_core"] = std::string(scipy_openblas_get_corename());
  d["blas_threads"] = scipy_openblas_get_num_threads();
  d["dtypes"] = nb::make_tuple("float32", "float64", "bfloat16", "float16", "int64", "int32", "uint8", "bool");
  // float32 convolutions run through oneDNN when the build found it; say which, or why not.
  if (const std::optional<std::string> v = st::nn::onednn::version()) {
    d["onednn"] = *v;
  } else {
    d["onednn"] = nb::none();
    d["onednn_reason"] = st::nn::onednn::unavailable_reason();
  }
  d["conv_backend"] = st::nn::onednn::conv_backend();
  d["rnn_backend"] = st::nn::onednn::rnn_backend();
  return d;
}

}  // namespace

}  // namespace stpy

NB_MODULE(_core, m) {
  using namespace stpy;
  m.doc() = "SpiralTorch native core";
  // Modules held by C++ containers are released after the leak check runs at exit.
  nb::set_leak_warnings(false);
  register_errors(m);

  nb::enum_<Dtype>(m, "dtype", "Element types of a tensor.")
      .value("bool", Dtype::Bool)
      .value("uint8", Dtype::UInt8)
      .value("int32", Dtype::Int32)
      .value("int64", Dtype::Int64)
      .value("float16", Dtype::Float16)
      .value("bfloat16", Dtype::BFloat16)
      .value("float32", Dtype::Float32)
      .value("float64", Dtype::Float64);

  nb::class_<Tensor> cls(m, "Tensor", "An N-d strided tensor with autograd (PyTorch semantics).");
  bind_tensor(m, cls);
  bind_ops(m, cls);
  bind_nn(m);
  bind_optim(m);
  bind_io(m);
  bind_cuda(m);
  bind_custom_op(m);
  bind_geometry(m);

  // ---- creation ----
  auto shape_and_dtype = [](nb::args args, nb::kwargs kw, const char* op) {
    Shape shape = kw.contains("size") ? to_shape_obj(kw["size"]) : to_shape(args);
    std::optional<Dtype> dt;
    if (kw.contains("dtype")) dt = to_optional_dtype(kw["dtype"]);
    (void)op;
    return std::make_pair(shape, dt);
  };
  auto finish = [](Tensor t, nb::kwargs kw) {
    if (kw.contains("device") && !kw["device"].is_none()) {
      // Created on the host, then moved (zeros/ones/empty are allocated on the device directly below).
      t = st::to_device(t, st::Device::parse(nb::cast<std::string>(nb::str(kw["device"]))));
    }
    if (kw.contains("requires_grad") && nb::cast<bool>(kw["requires_grad"])) t.set_requires_grad(true);
    return t;
  };
  auto device_of = [](nb::kwargs kw) {
    return kw.contains("device") && !kw["device"].is_none()
               ? st::Device::parse(nb::cast<std::string>(nb::str(kw["device"])))
               : st::Device();
  };
  m.def("zeros", [=](nb::args a, nb::kwargs kw) {
    auto [s, dt] = shape_and_dtype(a, kw, "zeros");
    return finish(st::zeros(s, dt.value_or(Dtype::Float32), device_of(kw)), kw);
  });
  m.def("ones", [=](nb::args a, nb::kwargs kw) {
    auto [s, dt] = shape_and_dtype(a, kw, "ones");
    return finish(st::ones(s, dt.value_or(Dtype::Float32), device_of(kw)), kw);
  });
  m.def("empty", [=](nb::args a, nb::kwargs kw) {
    auto [s, dt] = shape_and_dtype(a, kw, "empty");
    return finish(Tensor::empty(s, dt.value_or(Dtype::Float32), device_of(kw)), kw);
  });
  m.def("rand", [=](nb::args a, nb::kwargs kw) {
    auto [s, dt] = shape_and_dtype(a, kw, "rand");
    return finish(st::rand(s, dt.value_or(Dtype::Float32)), kw);
  });
  m.def("randn", [=](nb::args a, nb::kwargs kw) {
    auto [s, dt] = shape_and_dtype(a, kw, "randn");
    return finish(st::randn(s, dt.value_or(Dtype::Float32)), kw);
  });
  m.def("full", [](nb::handle size, nb::handle value, nb::handle dtype, bool requires_grad) {
    auto v = to_scalar(value);
    if (!v) throw st::DtypeError("full: fill value must be a number");
    Tensor t = st::full(to_shape_obj(size), *v, to_optional_dtype(dtype));
    if (requires_grad) t.set_requires_grad(true);
    return t;
  }, nb::arg("size"), nb::arg("fill_value"), nb::arg("dtype") = nb::none(), nb::arg("requires_grad") = false);
  m.def("randint", [](int64_t low, nb::handle high, nb::handle size, nb::handle dtype) {
    // randint(high, size) or randint(low, high, size)
    if (size.is_none()) return st::randint(0, low, to_shape_obj(high), to_optional_dtype(dtype).value_or(Dtype::Int64));
    return st::randint(low, nb::cast<int64_t>(high), to_shape_obj(size), to_optional_dtype(dtype).value_or(Dtype::Int64));
  }, nb::arg("low"), nb::arg("high"), nb::arg("size") = nb::none(), nb::arg("dtype") = nb::none());
  m.def("normal", [](double mean, double std, nb::handle size, nb::handle dtype) {
    return st::normal(mean, std, to_shape_obj(size), to_optional_dtype(dtype).value_or(Dtype::Float32));
  }, nb::arg("mean"), nb::arg("std"), nb::arg("size"), nb::arg("dtype") = nb::none());
  // "cuda:0", "cpu", a Device or None (the host).
  auto device_or_host = [](nb::handle device) {
    return device.is_none() ? st::Device{} : st::Device::parse(nb::cast<std::string>(nb::str(device)));
  };
  m.def("arange", [device_or_host](nb::handle a, nb::handle b, nb::handle step_h, nb::handle dtype,
                                   nb::handle device, bool requires_grad) {
    // Like PyTorch, any Python float among the bounds/step gives a floating result.
    std::optional<Dtype> dt = to_optional_dtype(dtype);
    const bool any_float = PyFloat_Check(a.ptr()) || (!b.is_none() && PyFloat_Check(b.ptr())) ||
                           (!step_h.is_none() && PyFloat_Check(step_h.ptr()));
    if (!dt && any_float) dt = Dtype::Float32;
    const double step = step_h.is_none() ? 1.0 : nb::cast<double>(step_h);
    const st::Device dev = device_or_host(device);
    Tensor t = b.is_none() ? st::arange(0, nb::cast<double>(a), step, dt, dev)
                           : st::arange(nb::cast<double>(a), nb::cast<double>(b), step, dt, dev);
    if (requires_grad) t.set_requires_grad(true);
    return t;
  }, nb::arg("start"), nb::arg("end") = nb::none(), nb::arg("step") = nb::none(), nb::arg("dtype") = nb::none(),
     nb::arg("device") = nb::none(), nb::arg("requires_grad") = false);
  m.def("linspace", [device_or_host](double a, double b, int64_t steps, nb::handle dtype, nb::handle device) {
    const st::Device dev = device_or_host(device);
    const Tensor t = st::linspace(a, b, steps, to_optional_dtype(dtype).value_or(Dtype::Float32));
    return dev == t.device() ? t : st::to_device(t, dev);
  }, nb::arg("start"), nb::arg("end"), nb::arg("steps"), nb::arg("dtype") = nb::none(), nb::arg("device") = nb::none());
  m.def("eye", [](int64_t n, std::optional<int64_t> mcols, nb::handle dtype) {
    return st::eye(n, mcols, to_optional_dtype(dtype).value_or(Dtype::Float32));
  }, nb::arg("n"), nb::arg("m") = nb::none(), nb::arg("dtype") = nb::none());
  m.def("zeros_like", [](const Tensor& t, nb::handle dtype) { return st::zeros_like(t, to_optional_dtype(dtype)); },
        nb::arg("input"), nb::arg("dtype") = nb::none());
  m.def("ones_like", [](const Tensor& t, nb::handle dtype) { return st::ones_like(t, to_optional_dtype(dtype)); },
        nb::arg("input"), nb::arg("dtype") = nb::none());
  m.def("empty_like", [](const Tensor& t, nb::handle dtype) {
    return Tensor::empty(t.shape(), to_optional_dtype(dtype).value_or(t.dtype()), t.device());
  }, nb::arg("input"), nb::arg("dtype") = nb::none());
  m.def("full_like", [](const Tensor& t, nb::handle v, nb::handle dtype) {
    return st::full_like(t, *to_scalar(v), to_optional_dtype(dtype));
  }, nb::arg("input"), nb::arg("fill_value"), nb::arg("dtype") = nb::none());
  m.def("rand_like", [](const Tensor& t, nb::handle dtype) {
    return st::to_device(st::rand(t.shape(), to_optional_dtype(dtype).value_or(t.dtype())), t.device());
  }, nb::arg("input"), nb::arg("dtype") = nb::none());
  m.def("randn_like", [](const Tensor& t, nb::handle dtype) {
    return st::to_device(st::randn(t.shape(), to_optional_dtype(dtype).value_or(t.dtype())), t.device());
  }, nb::arg("input"), nb::arg("dtype") = nb::none());
  m.def("tensor", [](nb::handle data, nb::handle dtype, bool requires_grad) {
    Tensor t = tensor_from_data(data, to_optional_dtype(dtype));
    if (requires_grad) t.set_requires_grad(true);
    return t;
  }, nb::arg("data"), nb::arg("dtype") = nb::none(), nb::arg("requires_grad") = false,
     "A new tensor holding a copy of `data` (nested lists, numbers, NumPy arrays, tensors).");
  m.def("_rand_seeded", [](int64_t rows, int64_t cols, uint64_t seed) {
    if (rows < 0 || cols < 0) throw st::ShapeError("Tensor.rand: rows and cols must be non-negative");
    return st::rand_seeded({rows, cols}, seed);
  });

  // ---- randomness, autograd, threads ----
  m.def("manual_seed", [](uint64_t seed) { st::manual_seed(seed); }, nb::arg("seed"),
        "Seeds the global Philox generator; same seed, same numbers, whatever the thread count.");
  m.def("initial_seed", []() { return st::default_generator().seed(); });
  m.def("_get_rng_state", []() { return nb::make_tuple(st::default_generator().seed(), st::default_generator().offset()); });
  m.def("_set_rng_state", [](uint64_t seed, uint64_t offset) {
    st::default_generator().manual_seed(seed);
    st::default_generator().set_offset(offset);
  });
  m.def("is_grad_enabled", &st::grad_enabled);
  m.def("set_grad_enabled", &st::set_grad_enabled, nb::arg("mode"));
  m.def("_autograd_grad", [](const std::vector<Tensor>& outputs, const std::vector<Tensor>& inputs,
                             std::vector<std::optional<Tensor>> grad_outputs, bool retain_graph, bool create_graph,
                             bool allow_unused) {
    std::vector<Tensor> go;
    for (auto& g : grad_outputs) go.push_back(g ? *g : Tensor());
    std::vector<std::optional<Tensor>> out;
    for (const Tensor& g : st::grad(outputs, inputs, go, retain_graph, create_graph, allow_unused)) {
      out.push_back(g.defined() ? std::optional<Tensor>(g) : std::nullopt);
    }
    return out;
  });
  m.def("_backward_many", [](const std::vector<Tensor>& outputs, std::vector<std::optional<Tensor>> grads, bool retain_graph) {
    std::vector<Tensor> go;
    for (auto& g : grads) go.push_back(g ? *g : Tensor());
    st::run_backward(outputs, go, retain_graph, false);
  });
  m.def("get_num_threads", []() { return omp_get_max_threads(); });
  m.def("set_num_threads", [](int n) {
    if (n < 1) throw st::ValueError("set_num_threads: need at least one thread, got " + std::to_string(n));
    omp_set_num_threads(n);
    scipy_openblas_set_num_threads(n);
  }, nb::arg("n"));
  m.def("_describe_cpu", &describe_cpu);
  // The conv2d path switch ("auto", "im2col", "onednn"); tests use it to compare both paths.
  m.def("_conv_backend", &st::nn::onednn::conv_backend);
  m.def("_set_conv_backend", &st::nn::onednn::set_conv_backend, nb::arg("name"));
  // The LSTM path switch ("auto", "loop", "onednn").
  m.def("_rnn_backend", &st::nn::onednn::rnn_backend);
  m.def("_set_rnn_backend", &st::nn::onednn::set_rnn_backend, nb::arg("name"));
}
