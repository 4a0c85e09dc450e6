// The default process group, argument checks shared by the backends, and the blocking forms.
#include "spiraltorch/runtime/distributed.h"

#include <cstdlib>
#include <mutex>

#include "runtime/distributed_backends.h"
#include "spiraltorch/ops.h"

namespace st::distributed {

namespace {
std::mutex g_mu;
std::shared_ptr<ProcessGroup> g_group;
}  // namespace

ReduceOp parse_reduce_op(const std::string& name) {
  if (name == "sum") return ReduceOp::Sum;
  if (name == "avg") return ReduceOp::Avg;
  if (name == "max") return ReduceOp::Max;
  if (name == "min") return ReduceOp::Min;
  throw ValueError("reduce op must be 'sum', 'avg', 'max' or 'min', got '" + name + "'");
}

const char* reduce_op_name(ReduceOp op) {
  switch (op) {
    case ReduceOp::Sum:
      return "sum";
    case ReduceOp::Avg:
      return "avg";
    case ReduceOp::Max:
      return "max";
    case ReduceOp::Min:
      return "min";
  }
  return "?";
}

void ProcessGroup::check_tensor(const char* op, const Tensor& t, bool cuda) const {
  if (!t.defined()) throw ValueError(std::string(op) + ": the tensor is undefined");
  if ((t.device().type == DeviceType::CUDA) != cuda) {
    throw DeviceUnavailableError(std::string(op) + ": the " + backend() + " backend takes " + (cuda ? "CUDA" : "CPU") +
                                 " tensors, got a tensor on " + t.device().str());
  }
}

void ProcessGroup::check_gather(const char* op, const Tensor& big, const Tensor& small, bool cuda) const {
  check_tensor(op, big, cuda);
  check_tensor(op, small, cuda);
  if (big.dtype() != small.dtype()) {
    throw DtypeError(std::string(op) + ": input and output dtypes differ (" + dtype_name(small.dtype()) + " and " +
                     dtype_name(big.dtype()) + ")");
  }
  if (big.device() != small.device()) {
    throw DeviceUnavailableError(std::string(op) + ": input on " + small.device().str() + " and output on " +
                                 big.device().str());
  }
  Shape want = small.shape();
  if (want.empty()) want.push_back(1);
  want[0] *= size();
  Shape have = big.shape();
  if (have.empty()) have.push_back(1);
  if (have != want) {
    throw ShapeError(std::string(op) + ": with world size " + std::to_string(size()) + " a per-rank tensor of shape " +
                     shape_str(small.shape()) + " needs a gathered tensor of shape " + shape_str(want) + ", got " +
                     shape_str(big.shape()));
  }
}

std::vector<std::string> available_backends() {
  std::vector<std::string> out;
  if (detail::mpi_unavailable_reason().empty()) out.push_back("mpi");
  if (detail::nccl_unavailable_reason().empty()) out.push_back("nccl");
  return out;
}

std::string unavailable_reason(const std::string& backend) {
  if (backend == "mpi") return detail::mpi_unavailable_reason();
  if (backend == "nccl") return detail::nccl_unavailable_reason();
  throw ValueError("distributed: unknown backend '" + backend + "' (expected 'mpi' or 'nccl')");
}

namespace detail {
int env_int(const char* name) {
  const char* v = std::getenv(name);
  if (!v || !*v) return -1;
  char* end = nullptr;
  const long x = std::strtol(v, &end, 10);
  if (*end != '\0' || x < 0 || x > (1 << 30)) {
    throw ValueError(std::string("init_process_group: environment variable ") + name +
                     " must be a non-negative integer, got '" + v + "'");
  }
  return static_cast<int>(x);
}
}  // namespace detail

ProcessGroup& init_process_group(const GroupOptions& options) {
  std::lock_guard lock(g_mu);
  if (g_group) {
    throw SpiralError("init_process_group: a process group (" + g_group->backend() + ", rank " +
                      std::to_string(g_group->rank()) + " of " + std::to_string(g_group->size()) +
                      ") already exists; call destroy_process_group first");
  }
  if (options.backend != "mpi" && options.backend != "nccl") {
    throw ValueError("init_process_group: backend must be 'mpi' or 'nccl', got '" + options.backend + "'");
  }
  if (options.init_method != "env://") {
    throw ValueError("init_process_group: init_method must be 'env://' (ranks from the launcher's environment), got '" +
                     options.init_method + "'");
  }
  if (options.timeout.count() <= 0) {
    throw ValueError("init_process_group: timeout must be positive, got " + std::to_string(options.timeout.count()) +
                     " ms");
  }
  if (const std::string why = unavailable_reason(options.backend); !why.empty()) {
    throw DeviceUnavailableError("init_process_group: backend '" + options.backend + "' is unavailable: " + why);
  }
  g_group = options.backend == "mpi" ? detail::make_mpi_group(options) : detail::make_nccl_group(options);
  return *g_group;
}

bool is_initialized() {
  std::lock_guard lock(g_mu);
  return g_group != nullptr;
}

std::shared_ptr<ProcessGroup> default_group_ptr() {
  std::lock_guard lock(g_mu);
  if (!g_group) {
    throw SpiralError("distributed: the default process group is not initialised; call init_process_group first");
  }
  return g_group;
}

ProcessGroup& default_group() { return *default_group_ptr(); }

void destroy_process_group() {
  std::shared_ptr<ProcessGroup> group;
  {
    std::lock_guard lock(g_mu);
    group = std::move(g_group);
  }
  group.reset();  // waits for what is pending, outside the lock
}

void barrier() { default_group().barrier()->wait(); }
void all_reduce(Tensor& tensor, ReduceOp op) { default_group().all_reduce(tensor, op)->wait(); }
void broadcast(Tensor& tensor, int root) { default_group().broadcast(tensor, root)->wait(); }

Tensor all_gather(const Tensor& input) {
  ProcessGroup& g = default_group();
  Shape shape = input.shape();
  if (shape.empty()) shape.push_back(1);
  shape[0] *= g.size();
  Tensor out = Tensor::empty(shape, input.dtype(), input.device());
  g.all_gather(out, input)->wait();
  return out;
}

Tensor reduce_scatter(const Tensor& input, ReduceOp op) {
  ProcessGroup& g = default_group();
  if (input.dim() == 0 || input.size(0) % g.size() != 0) {
    throw ShapeError("reduce_scatter: the first dim of the input " + shape_str(input.shape()) +
                     " must be a multiple of the world size " + std::to_string(g.size()));
  }
  Shape shape = input.shape();
  shape[0] /= g.size();
  Tensor out = Tensor::empty(shape, input.dtype(), input.device());
  g.reduce_scatter(out, input, op)->wait();
  return out;
}

}  // namespace st::distributed
