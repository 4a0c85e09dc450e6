// The native module `spiraltorch._core`.
#include <nanobind/stl/pair.h>

#include <cblas.h>
#include <omp.h>

#include <fstream>
#include <thread>

#include "backend/cpu/gemm_library.h"
#include "backend/cpu/mkl_runtime.h"
#include "convert.h"
#include "spiraltorch/constructors.h"
#include "spiraltorch/threads.h"
#include "backend/cpu/conv_onednn.h"
#include "backend/cpu/matmul_onednn.h"
#include "backend/cpu/rnn_onednn.h"

namespace stpy {

void bind_tensor(nb::module_& m, nb::class_<Tensor>& cls);
void bind_ops(nb::module_& m, nb::class_<Tensor>& cls);
void bind_nn(nb::module_& parent);
void bind_optim(nb::module_& root);
void bind_io(nb::module_& m);
void bind_cuda(nb::module_& m);
void bind_wgpu(nb::module_& m);
void bind_cpu(nb::module_& m);
void bind_amp(nb::module_& m);
void bind_custom_op(nb::module_& m);
void bind_geometry(nb::module_& root);
void bind_biome(nb::module_& root);
void bind_zspace(nb::module_& root);
void bind_runtime(nb::module_& m);
void bind_canvas(nb::module_& root);
void bind_trace(nb::module_& root);
void bind_data(nb::module_& root);
void bind_vision(nb::module_& root);
void bind_distributed(nb::module_& root);
void bind_rl(nb::module_& root);
void bind_rec(nb::module_& root);
void bind_linalg(nb::module_& root);

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

// The widest vector ISA of this CPU (what it could run, whatever the kernels use).
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

nb::dict describe_cpu() {
  nb::dict d;
  d["backend"] = "cpu";
  d["device"] = "cpu";
  d["available"] = true;
  d["cpu_model"] = cpu_model();
  d["logical_cores"] = static_cast<int>(std::thread::hardware_concurrency());
  d["threads"] = omp_get_max_threads();
  d["simd"] = simd_level();
  // The vectorised kernels in use (chosen at first use from the CPU, or SPIRALTORCH_CPU_CAPABILITY)
  // and every capability this build has that this CPU runs (src/backend/cpu/dispatch.h).
  d["cpu_capability"] = st::cpu_capability();
  nb::list caps;
  for (const std::string& c : st::cpu_capabilities()) caps.append(c);
  d["cpu_capabilities"] = caps;
  d["blas"] = "OpenBLAS (scipy-openblas32)";
  d["blas_config"] = std::string(scipy_openblas_get_config());
  d["blas_core"] = std::string(scipy_openblas_get_corename());
  d["blas_threads"] = scipy_openblas_get_num_threads();
  d["dtypes"] = nb::make_tuple("float32", "float64", "bfloat16", "float16", "int64", "int32", "uint8", "bool");
  // float32 convolutions run through oneDNN when the build found it; say which, or why not.
  if (const std::optional<std::string> v = st::backend::onednn::version()) {
    d["onednn"] = *v;
  } else {
    d["onednn"] = nb::none();
    d["onednn_reason"] = st::backend::onednn::unavailable_reason();
  }
  d["conv_backend"] = st::backend::onednn::conv_backend();
  d["rnn_backend"] = st::backend::onednn::rnn_backend();
  // bfloat16 matmuls: oneDNN with native bf16 dot products, or float32 copies through OpenBLAS.
  d["bf16_matmul"] = st::backend::onednn::bf16_matmul_available() ? "onednn" : "float32";
  // Intel oneMKL: linked in (mkl-static at build time), else loaded at run time when present.
  if (st::backend::cpu::mkl::available()) {
    d["mkl"] = st::backend::cpu::mkl::version();
    d["mkl_linkage"] = st::backend::cpu::mkl::linked_statically() ? "static" : "runtime";
    d["mkl_library"] = st::backend::cpu::mkl::linked_statically()
                           ? nb::object(nb::none())
                           : nb::object(nb::str(st::backend::cpu::mkl::library_path().c_str()));
  } else {
    d["mkl"] = nb::none();
    d["mkl_reason"] = st::backend::cpu::mkl::unavailable_reason();
  }
  d["cpu_vendor_intel"] = st::backend::cpu::cpu_is_intel();
  // float32 GEMM: which library each shape class goes to under the measured rule (gemm_library.h).
  d["cpu_isa"] = st::backend::onednn::effective_isa();
  d["gemm_backend"] = st::backend::cpu::gemm_backend();
  auto library = [](int64_t m, int64_t n, int64_t k, int64_t batch) {
    return st::backend::cpu::gemm_library_name(st::backend::cpu::f32_gemm_library(m, n, k, batch));
  };
  nb::dict dispatch;
  dispatch["small (< 2^20 multiply-adds)"] = library(64, 64, 64, 1);
  dispatch["square 128-1024"] = library(512, 512, 512, 1);
  dispatch["square 2048+ (>= 2^32 multiply-adds)"] = library(2048, 2048, 2048, 1);
  dispatch["transformer linear (1024 tokens x 256-4096)"] = library(1024, 1024, 256, 1);
  dispatch["attention batched (32 x 128x128x64)"] = library(128, 128, 64, 32);
  dispatch["float64"] = st::backend::cpu::gemm_library_name(st::backend::cpu::f64_gemm_library());
  dispatch["bfloat16"] = st::backend::onednn::bf16_matmul_available() ? "onednn" : "openblas (float32 copies)";
  d["gemm_dispatch"] = dispatch;
  d["gemm_dispatch_measured_on"] =
      "AMD EPYC (Zen 4, avx512_core_bf16) and Intel Xeon (avx512_core_amx), 2 threads each";
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
  stpy::install_tensor_dealloc(cls);
  bind_tensor(m, cls);
  m.def("_shared_wrapper_count", &shared_wrapper_count,
        "How many parameter wrappers the identity registry holds (for tests).");
  m.def("_release_unused_wrappers_after_gc",
        [](nb::str phase, nb::handle) {
    if (phase.equal(nb::str("stop"))) release_unused_wrappers();
  }, nb::arg("phase"), nb::arg("info"),
        "gc.callbacks entry: after a collection, releases the parameter wrappers (and tensors) nothing refers to.");
  nb::module_::import_("gc").attr("callbacks").attr("append")(m.attr("_release_unused_wrappers_after_gc"));
  bind_ops(m, cls);
  bind_nn(m);
  bind_optim(m);
  bind_io(m);
  bind_cuda(m);
  bind_wgpu(m);
  bind_cpu(m);
  bind_amp(m);
  bind_custom_op(m);
  bind_geometry(m);
  bind_biome(m);
  bind_zspace(m);
  bind_runtime(m);
  bind_canvas(m);
  bind_trace(m);
  bind_data(m);
  bind_vision(m);
  bind_distributed(m);
  bind_rl(m);
  bind_rec(m);
  bind_linalg(m);

  // ---- creation ----
  // Every factory takes dtype=, device= and requires_grad= (random ones also generator=),
  // like PyTorch; unknown keywords raise TypeError naming the factory.
  nb::class_<st::Generator>(m, "Generator",
                            "A counter-based Philox generator; pass it as generator= to the random factories.")
      .def("__init__",
           [](st::Generator* self, nb::handle device) {
    const st::Device dev = device.is_none() ? st::Device{} : st::Device::parse(nb::cast<std::string>(nb::str(device)));
    (void)dev;  // Philox streams are device-independent: the numbers are drawn on the host.
    new (self) st::Generator();
  }, nb::arg("device") = "cpu", nb::sig("def __init__(self, device: str | None = 'cpu') -> None"),
           "A Philox generator with the default seed. The numbers are drawn on the host whatever the device, so "
           "`device` is only validated (ValueError for an unknown name), as PyTorch's constructor takes one.")
      .def("manual_seed",
           [](nb::handle self, uint64_t seed) {
    nb::cast<st::Generator&>(self).manual_seed(seed);
    return nb::borrow(self);
  }, nb::arg("seed"), nb::sig("def manual_seed(self, seed: int) -> Generator"),
           "Restarts the stream at `seed`; returns the generator.")
      .def("initial_seed", &st::Generator::seed, "The seed the stream was last started at.")
      .def("get_state", [](const st::Generator& g) { return nb::make_tuple(g.seed(), g.offset()); },
           nb::sig("def get_state(self) -> tuple[int, int]"),
           "(seed, offset): restoring it with set_state replays the same numbers.")
      .def("set_state", [](st::Generator& g, std::pair<uint64_t, uint64_t> state) {
    g.manual_seed(state.first);
    g.set_offset(state.second);
  }, nb::arg("state"), "Restores a (seed, offset) pair from get_state: the stream continues from there.");
  m.attr("default_generator") = nb::cast(&st::default_generator(), nb::rv_policy::reference);

  struct FactoryOptions {
    std::optional<Dtype> dtype;
    st::Device device;
    bool requires_grad = false;
    st::Generator* generator = nullptr;
  };
  auto options = [](nb::kwargs kw, const char* op, bool random) {
    FactoryOptions o;
    for (auto [k, v] : kw) {
      const std::string key = nb::cast<std::string>(k);
      if (key == "dtype") {
        o.dtype = to_optional_dtype(v);
      } else if (key == "device") {
        if (!v.is_none()) o.device = st::Device::parse(nb::cast<std::string>(nb::str(v)));
      } else if (key == "requires_grad") {
        o.requires_grad = nb::cast<bool>(v);
      } else if (key == "generator" && random) {
        if (!v.is_none()) o.generator = nb::cast<st::Generator*>(v);
      } else if (key != "size") {
        throw nb::type_error((std::string(op) + "() got an unexpected keyword argument '" + key + "'").c_str());
      }
    }
    return o;
  };
  auto finish = [](Tensor t, const FactoryOptions& o) {
    if (t.device() != o.device) t = st::to_device(t, o.device);
    if (o.requires_grad) t.set_requires_grad(true);
    return t;
  };
  auto shape_of = [](nb::args args, nb::kwargs kw) {
    return kw.contains("size") ? to_shape_obj(kw["size"]) : to_shape(args);
  };
  m.def("zeros",
        [=](nb::args a, nb::kwargs kw) {
    const FactoryOptions o = options(kw, "zeros", false);
    return finish(st::zeros(shape_of(a, kw), o.dtype.value_or(Dtype::Float32), o.device), o);
  },
        nb::sig("def zeros(*size: int | collections.abc.Sequence[int], dtype: dtype | str | None = None, device: str | "
                "None = None, requires_grad: bool = False) -> Tensor"),
        "A tensor of zeros of shape `size` (zeros(2, 3), zeros((2, 3)) or zeros(size=(2, 3))); dtype defaults to "
        "float32. TypeError on an unknown keyword, ShapeError on a negative size.");
  m.def("ones",
        [=](nb::args a, nb::kwargs kw) {
    const FactoryOptions o = options(kw, "ones", false);
    return finish(st::ones(shape_of(a, kw), o.dtype.value_or(Dtype::Float32), o.device), o);
  },
        nb::sig("def ones(*size: int | collections.abc.Sequence[int], dtype: dtype | str | None = None, device: str | "
                "None = None, requires_grad: bool = False) -> Tensor"),
        "A tensor of ones of shape `size` (ones(2, 3), ones((2, 3)) or ones(size=(2, 3))); dtype defaults to float32.");
  m.def(
      "empty",
      [=](nb::args a, nb::kwargs kw) {
    const FactoryOptions o = options(kw, "empty", false);
    return finish(Tensor::empty(shape_of(a, kw), o.dtype.value_or(Dtype::Float32), o.device), o);
  },
      nb::sig("def empty(*size: int | collections.abc.Sequence[int], dtype: dtype | str | None = None, device: str | "
              "None = None, requires_grad: bool = False) -> Tensor"),
      "An uninitialised tensor of shape `size` (its values are whatever the memory held); dtype defaults to float32.");
  m.def("rand",
        [=](nb::args a, nb::kwargs kw) {
    const FactoryOptions o = options(kw, "rand", true);
    return finish(st::rand(shape_of(a, kw), o.dtype.value_or(Dtype::Float32), o.generator), o);
  },
        nb::sig("def rand(*size: int | collections.abc.Sequence[int], dtype: dtype | str | None = None, device: str | "
                "None = None, requires_grad: bool = False, generator: Generator | None = None) -> Tensor"),
        "Uniform samples in [0, 1) of shape `size`, drawn from `generator` (default: the global one, see manual_seed); "
        "float32 by default.");
  m.def(
      "randn",
      [=](nb::args a, nb::kwargs kw) {
    const FactoryOptions o = options(kw, "randn", true);
    return finish(st::randn(shape_of(a, kw), o.dtype.value_or(Dtype::Float32), o.generator), o);
  },
      nb::sig("def randn(*size: int | collections.abc.Sequence[int], dtype: dtype | str | None = None, device: str | "
              "None = None, requires_grad: bool = False, generator: Generator | None = None) -> Tensor"),
      "Standard normal samples of shape `size`, drawn from `generator` (default: the global one); float32 by default.");
  m.def("full",
        [=](nb::handle size, nb::handle value, nb::kwargs kw) {
    auto v = to_scalar(value);
    if (!v) throw st::DtypeError("full: fill value must be a number");
    const FactoryOptions o = options(kw, "full", false);
    return finish(st::full(to_shape_obj(size), *v, o.dtype), o);
  }, nb::arg("size"), nb::arg("fill_value"), nb::arg("kwargs"),
        nb::sig("def full(size: collections.abc.Sequence[int], fill_value: float, *, dtype: dtype | str | None = None, "
                "device: str | None = None, requires_grad: bool = False) -> Tensor"),
        "A tensor of shape `size` filled with `fill_value`; the dtype follows the value (bool, int64 or float32) "
        "unless given. DtypeError when fill_value is not a number.");
  m.def("randint",
        [=](nb::args a, nb::kwargs kw) {
    // randint(high, size) or randint(low, high, size), size also as a keyword.
    const FactoryOptions o = options(kw, "randint", true);
    std::vector<nb::handle> pos(a.begin(), a.end());
    if (kw.contains("size")) pos.push_back(kw["size"]);
    for (const char* key : {"low", "high"}) {
      if (kw.contains(key)) throw nb::type_error("randint: pass low and high positionally: randint([low,] high, size)");
    }
    if (pos.size() != 2 && pos.size() != 3) {
      throw nb::type_error("randint: expected randint(high, size) or randint(low, high, size)");
    }
    const int64_t low = pos.size() == 3 ? nb::cast<int64_t>(pos[0]) : 0;
    const int64_t high = nb::cast<int64_t>(pos[pos.size() - 2]);
    const Dtype dt = o.dtype.value_or(Dtype::Int64);
    return finish(st::randint(low, high, to_shape_obj(pos.back()), dt, o.generator), o);
  },
        nb::sig("def randint(*args: int | collections.abc.Sequence[int], size: collections.abc.Sequence[int] | None = "
                "None, dtype: dtype | str | None = None, device: str | None = None, requires_grad: bool = False, "
                "generator: Generator | None = None) -> Tensor"),
        "randint(high, size) or randint(low, high, size): integers uniform in [low, high) (low defaults to 0), "
        "int64 unless dtype is given. TypeError for another argument count or low=/high= keywords.");
  m.def(
      "normal",
      [=](double mean, double std, nb::handle size, nb::kwargs kw) {
    const FactoryOptions o = options(kw, "normal", true);
    return finish(st::normal(mean, std, to_shape_obj(size), o.dtype.value_or(Dtype::Float32), o.generator), o);
  }, nb::arg("mean"), nb::arg("std"), nb::arg("size"), nb::arg("kwargs"),
      nb::sig("def normal(mean: float, std: float, size: collections.abc.Sequence[int], *, dtype: dtype | str | None = "
              "None, device: str | None = None, requires_grad: bool = False, generator: Generator | None = None) -> "
              "Tensor"),
      "Normal samples N(mean, std^2) of shape `size` from `generator` (default: the global one); float32 by default.");
  m.def("arange",
        [=](nb::handle a, nb::handle b, nb::handle step_h, nb::kwargs kw) {
    // Like PyTorch, any Python float among the bounds/step gives a floating result.
    FactoryOptions o = options(kw, "arange", false);
    const bool any_float = PyFloat_Check(a.ptr()) || (!b.is_none() && PyFloat_Check(b.ptr())) ||
                           (!step_h.is_none() && PyFloat_Check(step_h.ptr()));
    if (!o.dtype && any_float) o.dtype = Dtype::Float32;
    const double step = step_h.is_none() ? 1.0 : nb::cast<double>(step_h);
    const Tensor t = b.is_none() ? st::arange(0, nb::cast<double>(a), step, o.dtype, o.device)
                                 : st::arange(nb::cast<double>(a), nb::cast<double>(b), step, o.dtype, o.device);
    return finish(t, o);
  }, nb::arg("start"), nb::arg("end") = nb::none(), nb::arg("step") = nb::none(), nb::arg("kwargs"),
        nb::sig("def arange(start: float, end: float | None = None, step: float | None = None, *, dtype: dtype | str | "
                "None = None, device: str | None = None, requires_grad: bool = False) -> Tensor"),
        "Values start, start+step, ... below end (arange(n) counts 0..n-1). int64 for integer bounds, float32 when "
        "any bound or the step is a Python float, unless dtype is given. Example: arange(0, 1, 0.25).tolist() == "
        "[0.0, 0.25, 0.5, 0.75]");
  m.def("linspace",
        [=](double a, double b, int64_t steps, nb::kwargs kw) {
    const FactoryOptions o = options(kw, "linspace", false);
    return finish(st::linspace(a, b, steps, o.dtype.value_or(Dtype::Float32)), o);
  }, nb::arg("start"), nb::arg("end"), nb::arg("steps"), nb::arg("kwargs"),
        nb::sig("def linspace(start: float, end: float, steps: int, *, dtype: dtype | str | None = None, device: str | "
                "None = None, requires_grad: bool = False) -> Tensor"),
        "`steps` evenly spaced values from start to end inclusive; float32 by default.");
  m.def("eye",
        [=](int64_t n, std::optional<int64_t> mcols, nb::kwargs kw) {
    const FactoryOptions o = options(kw, "eye", false);
    return finish(st::eye(n, mcols, o.dtype.value_or(Dtype::Float32)), o);
  }, nb::arg("n"), nb::arg("m") = nb::none(), nb::arg("kwargs"),
        nb::sig("def eye(n: int, m: int | None = None, *, dtype: dtype | str | None = None, device: str | None = None, "
                "requires_grad: bool = False) -> Tensor"),
        "The n x m identity matrix (m defaults to n); float32 by default.");
  m.def("logspace",
        [=](double start, double end, int64_t steps, double base, nb::kwargs kw) {
    const FactoryOptions o = options(kw, "logspace", false);
    return finish(st::logspace(start, end, steps, base, o.dtype.value_or(Dtype::Float32), o.device), o);
  }, nb::arg("start"), nb::arg("end"), nb::arg("steps"), nb::arg("base") = 10.0, nb::arg("kwargs"),
        nb::sig("def logspace(start: float, end: float, steps: int, base: float = 10.0, *, dtype: dtype | str | None = "
                "None, device: str | None = None, requires_grad: bool = False) -> Tensor"),
        "``steps`` values ``base ** e`` for exponents evenly spaced from ``start`` to ``end`` (computed in float64), "
        "float32 by default, as torch.logspace.");
  for (const bool upper : {false, true}) {
    const char* name = upper ? "triu_indices" : "tril_indices";
    m.def(name,
          [=](int64_t row, int64_t col, int64_t offset, nb::kwargs kw) {
      const FactoryOptions o = options(kw, name, false);
      const Dtype dt = o.dtype.value_or(Dtype::Int64);
      return upper ? st::triu_indices(row, col, offset, dt, o.device)
                   : st::tril_indices(row, col, offset, dt, o.device);
    }, nb::arg("row"), nb::arg("col"), nb::arg("offset") = 0, nb::arg("kwargs"),
          nb::sig(upper ? "def triu_indices(row: int, col: int, offset: int = 0, *, dtype: dtype | str | None = None, "
                          "device: str | None = None) -> Tensor"
                        : "def tril_indices(row: int, col: int, offset: int = 0, *, dtype: dtype | str | None = None, "
                          "device: str | None = None) -> Tensor"),
          upper
              ? "The (2, N) row-major coordinates of the upper triangle (on and above diagonal ``offset``) of a row x "
                "col matrix, int64 unless dtype is given, as torch.triu_indices."
              : "The (2, N) row-major coordinates of the lower triangle (on and below diagonal ``offset``) of a row x "
                "col matrix, int64 unless dtype is given, as torch.tril_indices.");
  }
  // *_like: dtype and device default to the input's.
  auto like = [=](const Tensor& t, nb::kwargs kw, const char* op, bool random) {
    FactoryOptions o = options(kw, op, random);
    if (!kw.contains("device") || kw["device"].is_none()) o.device = t.device();
    if (!o.dtype) o.dtype = t.dtype();
    return o;
  };
  m.def("zeros_like",
        [=](const Tensor& t, nb::kwargs kw) {
    const FactoryOptions o = like(t, kw, "zeros_like", false);
    return finish(st::zeros(t.shape(), *o.dtype, o.device), o);
  }, nb::arg("input"), nb::arg("kwargs"),
        nb::sig("def zeros_like(input: Tensor, *, dtype: dtype | str | None = None, device: str | None = None, "
                "requires_grad: bool = False) -> Tensor"),
        "Zeros with the shape of `input`; dtype and device default to its.");
  m.def("ones_like",
        [=](const Tensor& t, nb::kwargs kw) {
    const FactoryOptions o = like(t, kw, "ones_like", false);
    return finish(st::ones(t.shape(), *o.dtype, o.device), o);
  }, nb::arg("input"), nb::arg("kwargs"),
        nb::sig("def ones_like(input: Tensor, *, dtype: dtype | str | None = None, device: str | None = None, "
                "requires_grad: bool = False) -> Tensor"),
        "Ones with the shape of `input`; dtype and device default to its.");
  m.def("empty_like",
        [=](const Tensor& t, nb::kwargs kw) {
    const FactoryOptions o = like(t, kw, "empty_like", false);
    return finish(Tensor::empty(t.shape(), *o.dtype, o.device), o);
  }, nb::arg("input"), nb::arg("kwargs"),
        nb::sig("def empty_like(input: Tensor, *, dtype: dtype | str | None = None, device: str | None = None, "
                "requires_grad: bool = False) -> Tensor"),
        "An uninitialised tensor with the shape of `input`; dtype and device default to its.");
  m.def("full_like",
        [=](const Tensor& t, nb::handle v, nb::kwargs kw) {
    const FactoryOptions o = like(t, kw, "full_like", false);
    auto value = to_scalar(v);
    if (!value) throw st::DtypeError("full_like: fill value must be a number");
    return finish(st::full(t.shape(), *value, *o.dtype), o);
  }, nb::arg("input"), nb::arg("fill_value"), nb::arg("kwargs"),
        nb::sig("def full_like(input: Tensor, fill_value: float, *, dtype: dtype | str | None = None, device: str | "
                "None = None, requires_grad: bool = False) -> Tensor"),
        "A tensor with the shape of `input` filled with `fill_value`; dtype and device default to its.");
  m.def("rand_like",
        [=](const Tensor& t, nb::kwargs kw) {
    const FactoryOptions o = like(t, kw, "rand_like", true);
    return finish(st::rand(t.shape(), *o.dtype, o.generator), o);
  }, nb::arg("input"), nb::arg("kwargs"),
        nb::sig("def rand_like(input: Tensor, *, dtype: dtype | str | None = None, device: str | None = None, "
                "requires_grad: bool = False, generator: Generator | None = None) -> Tensor"),
        "Uniform samples in [0, 1) with the shape and dtype of `input`.");
  m.def("randn_like",
        [=](const Tensor& t, nb::kwargs kw) {
    const FactoryOptions o = like(t, kw, "randn_like", true);
    return finish(st::randn(t.shape(), *o.dtype, o.generator), o);
  }, nb::arg("input"), nb::arg("kwargs"),
        nb::sig("def randn_like(input: Tensor, *, dtype: dtype | str | None = None, device: str | None = None, "
                "requires_grad: bool = False, generator: Generator | None = None) -> Tensor"),
        "Standard normal samples with the shape and dtype of `input`.");
  m.def("tensor",
        [](nb::handle data, nb::handle dtype, nb::handle device, bool requires_grad) {
    Tensor t = tensor_from_data(data, to_optional_dtype(dtype));
    if (!device.is_none()) t = st::to_device(t, st::Device::parse(nb::cast<std::string>(nb::str(device))));
    if (requires_grad) t.set_requires_grad(true);
    return t;
  }, nb::arg("data"), nb::arg("dtype") = nb::none(), nb::arg("device") = nb::none(), nb::arg("requires_grad") = false,
        nb::sig("def tensor(data: typing.Any, dtype: dtype | str | None = None, device: str | None = None, "
                "requires_grad: bool = False) -> Tensor"),
        "A new tensor holding a copy of `data` (nested lists, numbers, NumPy arrays, tensors). The dtype is "
        "inferred (bool, int64, float32) unless given; a list is always data, never a shape. ShapeError on "
        "ragged lists. Example: tensor([[1, 2], [3, 4]], dtype='float64')");
  m.def("_rand_seeded",
        [](int64_t rows, int64_t cols, uint64_t seed) {
    if (rows < 0 || cols < 0) throw st::ShapeError("Tensor.rand: rows and cols must be non-negative");
    return st::rand_seeded({rows, cols}, seed);
  }, nb::arg("rows"), nb::arg("cols"), nb::arg("seed"),
        "Tensor.rand(rows, cols, seed=): uniform [0, 1) float32 samples from a fresh stream at `seed`.");

  // ---- randomness, autograd, threads ----
  m.def("manual_seed", [](uint64_t seed) { st::manual_seed(seed); }, nb::arg("seed"),
        "Seeds the global Philox generator; same seed, same numbers, whatever the thread count.");
  m.def("initial_seed", []() { return st::default_generator().seed(); },
        "The seed the global generator was last seeded with.");
  m.def("_get_rng_state", []() {
    return nb::make_tuple(st::default_generator().seed(), st::default_generator().offset());
  }, "The global generator's (seed, offset).");
  m.def("_set_rng_state", [](uint64_t seed, uint64_t offset) {
    st::default_generator().manual_seed(seed);
    st::default_generator().set_offset(offset);
  }, nb::arg("seed"), nb::arg("offset"), "Restores the global generator's (seed, offset).");
  m.def("is_grad_enabled", &st::grad_enabled, "True unless gradient recording is off on this thread (no_grad).");
  m.def("set_grad_enabled", &st::set_grad_enabled, nb::arg("mode"),
        "Turns gradient recording on or off for this thread (what no_grad / enable_grad switch).");
  m.def("_autograd_grad",
        [](const std::vector<Tensor>& outputs, const std::vector<Tensor>& inputs,
           std::vector<std::optional<Tensor>> grad_outputs, bool retain_graph, bool create_graph, bool allow_unused) {
    std::vector<Tensor> go;
    for (auto& g : grad_outputs) go.push_back(g ? *g : Tensor());
    std::vector<std::optional<Tensor>> out;
    for (const Tensor& g : st::grad(outputs, inputs, go, retain_graph, create_graph, allow_unused)) {
      out.push_back(g.defined() ? std::optional<Tensor>(g) : std::nullopt);
    }
    return out;
  },
        nb::arg("outputs"), nb::arg("inputs"), nb::arg("grad_outputs"), nb::arg("retain_graph"),
        nb::arg("create_graph"), nb::arg("allow_unused"),
        "autograd.grad: the gradients of outputs with respect to inputs (None for an unused input when allow_unused).");
  m.def("_backward_many",
        [](const std::vector<Tensor>& outputs, std::vector<std::optional<Tensor>> grads, bool retain_graph) {
    std::vector<Tensor> go;
    for (auto& g : grads) go.push_back(g ? *g : Tensor());
    st::run_backward(outputs, go, retain_graph, false);
  }, nb::arg("outputs"), nb::arg("grads"), nb::arg("retain_graph"),
        "autograd.backward over several outputs in one pass (None: the output has one element, gradient 1).");
  m.def("get_num_threads", &st::get_num_threads, "The number of threads CPU kernels use.");
  m.def("set_num_threads", &st::set_num_threads, nb::arg("n"),
        "Sets the number of threads CPU kernels use; ValueError (the setting unchanged) outside [1, 4 per processor].");
  m.def("_describe_cpu", &describe_cpu,
        "describe_device('cpu'): model, cores, threads, SIMD, CPU capability, BLAS/oneDNN/MKL and GEMM dispatch.");
  // The oneDNN headers the build compiled against (None without oneDNN); the tests check
  // that describe_device reports a matching library.
  m.def("_onednn_header_version", &st::backend::onednn::header_version,
        "The oneDNN headers' version (None without oneDNN).");
  // The conv2d path switch ("auto", "im2col", "onednn"); tests use it to compare both paths.
  m.def("_conv_backend", &st::backend::onednn::conv_backend, "The conv2d path: 'auto', 'im2col' or 'onednn'.");
  m.def("_set_conv_backend", &st::backend::onednn::set_conv_backend, nb::arg("name"), "Sets the conv2d path.");
  // The LSTM path switch ("auto", "loop", "onednn").
  m.def("_rnn_backend", &st::backend::onednn::rnn_backend, "The LSTM path: 'auto', 'loop' or 'onednn'.");
  m.def("_set_rnn_backend", &st::backend::onednn::set_rnn_backend, nb::arg("name"), "Sets the LSTM path.");
}
