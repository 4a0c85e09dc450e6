// spiraltorch._core.distributed: process groups, collectives and DistributedDataParallel
// (src/runtime/distributed*.cpp, src/runtime/ddp.cpp). spiraltorch.distributed and
// spiraltorch.nn.parallel are thin views of these.
#include <nanobind/stl/pair.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <chrono>
#include <cmath>

#include "convert.h"
#include "runtime/distributed_backends.h"
#include "spiraltorch/runtime/ddp.h"

namespace stpy {

namespace dist = st::distributed;

namespace {

PyObject* g_distributed_error = nullptr;

dist::ReduceOp reduce_op_of(nb::handle op) {
  if (nb::isinstance<nb::str>(op)) return dist::parse_reduce_op(nb::cast<std::string>(op));
  return nb::cast<dist::ReduceOp>(op);
}

// The blocking or asynchronous form of an issued operation.
nb::object finish(std::shared_ptr<dist::Work> work, bool async_op) {
  if (async_op) return nb::cast(std::move(work));
  {
    nb::gil_scoped_release release;
    work->wait();
  }
  return nb::none();
}

}  // namespace

void bind_distributed(nb::module_& root) {
  nb::module_ m = root.def_submodule("distributed",
                                     "Process groups (MPI on CPU tensors, NCCL on CUDA tensors), collectives and DDP.");

  g_distributed_error =
      PyErr_NewExceptionWithDoc("spiraltorch.DistributedError",
                                "A collective that did not complete (timeout, a failed rank) or ranks that disagree.",
                                root.attr("SpiralError").ptr(), nullptr);
  m.attr("DistributedError") = nb::borrow(g_distributed_error);
  root.attr("DistributedError") = nb::borrow(g_distributed_error);
  // Tried before the hierarchy's translator (nanobind tries the latest first).
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const dist::DistributedError& e) {
      PyErr_SetString(g_distributed_error, e.what());
    }
  });

  nb::enum_<dist::ReduceOp>(m, "ReduceOp", "Reductions of all_reduce / reduce_scatter.")
      .value("SUM", dist::ReduceOp::Sum)
      .value("AVG", dist::ReduceOp::Avg)
      .value("MAX", dist::ReduceOp::Max)
      .value("MIN", dist::ReduceOp::Min);

  nb::class_<dist::Work>(m, "Work", "The handle of an asynchronous operation (async_op=True).")
      .def("wait",
           [](dist::Work& w) {
    nb::gil_scoped_release release;
    w.wait();
    return true;
  },
           "Blocks until the operation is complete (raising its error, or DistributedError after the group's "
           "timeout); returns True.")
      .def("is_completed", &dist::Work::is_completed, "Whether the operation has finished.");

  m.def("available_backends", &dist::available_backends, "Backends compiled into this build ('mpi', 'nccl').");
  m.def("unavailable_reason", &dist::unavailable_reason, nb::arg("backend"),
        "Why `backend` is unavailable ('' when it is available).");
  m.def("mpi_library_version", &dist::detail::mpi_library_version,
        "The MPI library's version line ('Open MPI v5.0.11'), '' in a build without MPI.");

  m.def("init_process_group",
        [](const std::string& backend, int rank, int world_size, const std::string& init_method, double timeout,
           int device) {
    if (!(timeout > 0) || !std::isfinite(timeout)) {
      throw st::ValueError("init_process_group: timeout must be a positive number of seconds, got " +
                           std::to_string(timeout));
    }
    dist::GroupOptions o;
    o.backend = backend;
    o.rank = rank;
    o.world_size = world_size;
    o.init_method = init_method;
    o.timeout = std::chrono::milliseconds(static_cast<int64_t>(timeout * 1000.0));
    o.device = device;
    nb::gil_scoped_release release;
    dist::init_process_group(o);
  },
        nb::arg("backend"), nb::kw_only(), nb::arg("rank") = -1, nb::arg("world_size") = -1,
        nb::arg("init_method") = "env://", nb::arg("timeout") = 1800.0, nb::arg("device") = -1,
        "Joins the default process group: backend 'mpi' (CPU tensors) or 'nccl' (CUDA tensors). rank and "
        "world_size default (-1) to the RANK / WORLD_SIZE environment or MPI's own; init_method must be 'env://' "
        "(the launcher's environment); timeout (seconds) bounds every collective, after which it raises "
        "DistributedError; device is this rank's CUDA device for NCCL (-1: LOCAL_RANK, else the rank, modulo the "
        "device count). ValueError for a bad backend, init_method or timeout, DeviceUnavailableError for a backend "
        "this build or machine lacks, SpiralError when a group already exists.");
  m.def("is_initialized", &dist::is_initialized, "Whether init_process_group has run (and not been destroyed).");
  m.def("destroy_process_group", [] {
    nb::gil_scoped_release release;
    dist::destroy_process_group();
  }, "Leaves the default process group (its communicators are freed); init_process_group may run again.");
  m.def("get_rank", [] { return dist::default_group().rank(); },
        "This process's rank in the default group (0..world_size-1); SpiralError before init_process_group.");
  m.def("get_world_size", [] { return dist::default_group().size(); },
        "The number of ranks in the default group; SpiralError before init_process_group.");
  m.def("get_backend", [] { return dist::default_group().backend(); },
        "The default group's backend ('mpi' or 'nccl'); SpiralError before init_process_group.");

  m.def("barrier", [](bool async_op) { return finish(dist::default_group().barrier(), async_op); }, nb::kw_only(),
        nb::arg("async_op") = false, nb::sig("def barrier(*, async_op: bool = False) -> Work | None"),
        "Waits until every rank reaches the barrier; with async_op=True returns a Work to wait on instead.");
  m.def("all_reduce",
        [](Tensor& tensor, nb::handle op, bool async_op) {
    const dist::ReduceOp rop = reduce_op_of(op);  // a bad op is reported before a missing group
    return finish(dist::default_group().all_reduce(tensor, rop), async_op);
  }, nb::arg("tensor"), nb::arg("op") = "sum", nb::kw_only(), nb::arg("async_op") = false,
        nb::sig("def all_reduce(tensor: spiraltorch._core.Tensor, op: ReduceOp | str = 'sum', *, async_op: bool = "
                "False) -> Work | None"),
        "Reduces `tensor` over all ranks in place (op: 'sum', 'avg', 'max', 'min' or a ReduceOp); every rank ends "
        "with the result. Returns None, or a Work with async_op=True. ValueError for an unknown op.");
  m.def("broadcast",
        [](Tensor& tensor, int src, bool async_op) {
    return finish(dist::default_group().broadcast(tensor, src), async_op);
  }, nb::arg("tensor"), nb::arg("src") = 0, nb::kw_only(), nb::arg("async_op") = false,
        nb::sig(
            "def broadcast(tensor: spiraltorch._core.Tensor, src: int = 0, *, async_op: bool = False) -> Work | None"),
        "Copies rank src's `tensor` into `tensor` on every other rank (in place). Returns None, or a Work with "
        "async_op=True.");
  m.def("all_gather_into_tensor",
        [](Tensor& output, const Tensor& input, bool async_op) {
    return finish(dist::default_group().all_gather(output, input), async_op);
  }, nb::arg("output"), nb::arg("input"), nb::kw_only(), nb::arg("async_op") = false,
        nb::sig("def all_gather_into_tensor(output: spiraltorch._core.Tensor, input: spiraltorch._core.Tensor, *, "
                "async_op: bool = False) -> Work | None"),
        "Concatenates every rank's `input` along dim 0, in rank order, into `output` (world_size times input's "
        "first dim). Returns None, or a Work with async_op=True.");
  m.def("reduce_scatter_tensor",
        [](Tensor& output, const Tensor& input, nb::handle op, bool async_op) {
    const dist::ReduceOp rop = reduce_op_of(op);
    return finish(dist::default_group().reduce_scatter(output, input, rop), async_op);
  }, nb::arg("output"), nb::arg("input"), nb::arg("op") = "sum", nb::kw_only(), nb::arg("async_op") = false,
        nb::sig("def reduce_scatter_tensor(output: spiraltorch._core.Tensor, input: spiraltorch._core.Tensor, op: "
                "ReduceOp | str = 'sum', *, "
                "async_op: bool = False) -> Work | None"),
        "Reduces `input` over the ranks and leaves rank r the r-th of world_size equal dim-0 chunks of the result "
        "in `output`. Returns None, or a Work with async_op=True.");

  nb::class_<dist::DistributedDataParallel, st::nn::Module>(
      m, "DistributedDataParallel",
      "Wraps a module for data-parallel training on the default process group (see spiraltorch.nn.parallel).")
      .def("__init__",
           [](dist::DistributedDataParallel* self, std::shared_ptr<st::nn::Module> module, double bucket_cap_mb,
              bool broadcast_buffers, bool find_unused_parameters) {
    nb::gil_scoped_release release;
    new (self) dist::DistributedDataParallel(std::move(module), nullptr, bucket_cap_mb, broadcast_buffers,
                                             find_unused_parameters);
  },
           nb::arg("module"), nb::kw_only(), nb::arg("bucket_cap_mb") = 25.0, nb::arg("broadcast_buffers") = true,
           nb::arg("find_unused_parameters") = false,
           "Broadcasts rank 0's parameters (and buffers) to every rank, then averages gradients during backward in "
           "buckets of about bucket_cap_mb MB; broadcast_buffers re-sends rank 0's buffers before each forward; "
           "find_unused_parameters leaves a parameter that got no gradient on any rank without one (None).")
      .def("_prepare_forward",
           [](dist::DistributedDataParallel& d) {
    nb::gil_scoped_release release;
    d.prepare_forward();
  })
      .def_prop_ro("_module", [](const dist::DistributedDataParallel& d) { return d.module_ptr(); })
      .def_prop_rw("require_backward_grad_sync",
                   [](dist::DistributedDataParallel& d) { return d.reducer().require_sync(); },
                   [](dist::DistributedDataParallel& d, bool v) { d.reducer().set_require_sync(v); },
                   "False inside no_sync(): backward passes keep gradients local.")
      .def_prop_ro("find_unused_parameters",
                   [](dist::DistributedDataParallel& d) { return d.reducer().find_unused_parameters(); },
                   "Whether parameters that got no gradient on any rank keep none (PyTorch's flag).")
      .def_prop_ro("bucket_indices", [](dist::DistributedDataParallel& d) { return d.reducer().bucket_indices(); },
                   "Parameter indices (into parameters()) of each gradient bucket, in all-reduce order.")
      .def_prop_ro("overlapped_buckets",
                   [](dist::DistributedDataParallel& d) { return d.reducer().overlapped_buckets(); },
                   "Buckets of the last synchronised backward whose all-reduce started while backward still ran.")
      .def_prop_ro("synced_steps", [](dist::DistributedDataParallel& d) { return d.reducer().synced_steps(); },
                   "Backward passes whose gradients were averaged over the ranks.");
}

}  // namespace stpy
