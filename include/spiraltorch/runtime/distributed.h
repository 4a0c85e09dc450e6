#pragma once
// Process groups and collectives (st::distributed): data parallelism on existing engines.
// "mpi" runs the collectives of Open MPI (or any MPI) on CPU tensors; "nccl" runs NCCL's on CUDA
// tensors. No transport of our own: the only thing SpiralTorch adds is the order in which
// operations are issued and the handles that wait for them.
//
// One process group per process (the default group, like torch.distributed's WORLD). Every
// collective must be called by every rank in the same order with matching shapes and dtypes.
// Operations of a group run in the order they were issued: on the MPI backend one worker thread
// issues them (MPI_THREAD_SERIALIZED), on NCCL one CUDA stream of the group's device.
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "spiraltorch/error.h"
#include "spiraltorch/tensor.h"

namespace st::distributed {

// A collective that did not complete, or ranks that disagree (Python: DistributedError).
class DistributedError : public SpiralError {
 public:
  using SpiralError::SpiralError;
};

enum class ReduceOp { Sum, Avg, Max, Min };
ReduceOp parse_reduce_op(const std::string& name);  // "sum", "avg", "max", "min"
const char* reduce_op_name(ReduceOp op);

// The handle of an issued operation. wait() blocks until it is complete (for NCCL: until the
// caller's current CUDA stream is ordered after it, like torch's Work.wait) and rethrows its
// error; it throws DistributedError when the group's timeout passes first.
class Work {
 public:
  virtual ~Work() = default;
  virtual void wait() = 0;
  virtual bool is_completed() = 0;
};

struct GroupOptions {
  std::string backend;  // "mpi" or "nccl"
  // -1: taken from the backend (MPI's own rank/size) or the RANK/WORLD_SIZE environment.
  int rank = -1;
  int world_size = -1;
  std::string init_method = "env://";
  std::chrono::milliseconds timeout{std::chrono::minutes(30)};
  // NCCL: the CUDA device of this rank (-1: LOCAL_RANK, else rank, modulo the device count).
  int device = -1;
};

class ProcessGroup {
 public:
  virtual ~ProcessGroup() = default;
  virtual std::string backend() const = 0;
  int rank() const { return rank_; }
  int size() const { return size_; }
  std::chrono::milliseconds timeout() const { return timeout_; }

  // Every method checks its arguments on every rank before anything is issued; the tensors
  // are written only by the operation itself. Operations on non-contiguous tensors go through
  // a contiguous copy that is written back when the operation completes.
  virtual std::shared_ptr<Work> barrier() = 0;
  // In place: every rank's `tensor` becomes the reduction over ranks.
  virtual std::shared_ptr<Work> all_reduce(Tensor& tensor, ReduceOp op) = 0;
  // In place: every rank's `tensor` becomes root's.
  virtual std::shared_ptr<Work> broadcast(Tensor& tensor, int root) = 0;
  // output (world_size * n, ...): rank r's input (n, ...) lands at rows [r*n, (r+1)*n).
  virtual std::shared_ptr<Work> all_gather(Tensor& output, const Tensor& input) = 0;
  // input (world_size * n, ...): rank r's output (n, ...) is the reduction over ranks of rows
  // [r*n, (r+1)*n) of every rank's input.
  virtual std::shared_ptr<Work> reduce_scatter(Tensor& output, const Tensor& input, ReduceOp op) = 0;

 protected:
  ProcessGroup(int rank, int size, std::chrono::milliseconds timeout) : rank_(rank), size_(size), timeout_(timeout) {}
  // Shape/dtype/device checks shared by the backends (they name the operation and the values).
  void check_tensor(const char* op, const Tensor& t, bool cuda) const;
  void check_gather(const char* op, const Tensor& big, const Tensor& small, bool cuda) const;

 private:
  int rank_, size_;
  std::chrono::milliseconds timeout_;
};

// Backends compiled into this build ("mpi", "nccl"), and why one is missing ("" when present).
std::vector<std::string> available_backends();
std::string unavailable_reason(const std::string& backend);

// The default group. init_process_group raises when one exists or the backend is missing;
// destroy_process_group waits for pending operations and finalises the engine (MPI can be
// initialised once per process: a later init in the same process raises).
ProcessGroup& init_process_group(const GroupOptions& options);
bool is_initialized();
ProcessGroup& default_group();  // raises when none
// The default group, shared: a holder (a DDP reducer) keeps it usable past destroy_process_group.
std::shared_ptr<ProcessGroup> default_group_ptr();
void destroy_process_group();

// Blocking forms on the default group (issue, then wait).
void barrier();
void all_reduce(Tensor& tensor, ReduceOp op = ReduceOp::Sum);
void broadcast(Tensor& tensor, int root = 0);
Tensor all_gather(const Tensor& input);  // (world_size * n, ...)
Tensor reduce_scatter(const Tensor& input, ReduceOp op = ReduceOp::Sum);

}  // namespace st::distributed
