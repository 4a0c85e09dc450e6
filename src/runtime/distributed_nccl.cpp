// The "nccl" backend: NCCL's collectives on CUDA tensors. Only this file sees nccl.h and
// SPIRALTORCH_WITH_NCCL (cmake/SpiralCUDA.cmake); a build without CUDA or NCCL compiles the
// fallback at the bottom and reports why.
//
// Each group owns one communicator and one CUDA stream on its device. An operation makes that
// stream wait for the caller's current stream (so it reads finished inputs), runs the NCCL
// call there and records an event; Work::wait blocks until the event has fired (polling, so
// the group's timeout and NCCL's asynchronous errors are noticed) and then writes back any
// staged copy. The Work keeps every tensor it uses alive until then.
// Rendezvous: with one rank the unique id is local; with more, rank 0's id goes to the others
// over MPI (spiral-run starts the ranks through mpirun).
#include "runtime/distributed_backends.h"

#if SPIRALTORCH_WITH_NCCL

#include <nccl.h>

#include <cstring>
#include <thread>
#include <tuple>

#include "spiraltorch/autograd.h"
#include "spiraltorch/cuda.h"
#include "spiraltorch/ops.h"

namespace st::distributed::detail {

namespace {

void check_nccl(ncclResult_t rc, const std::string& what) {
  if (rc != ncclSuccess && rc != ncclInProgress) {
    throw DistributedError(what + ": NCCL error: " + ncclGetErrorString(rc));
  }
}

ncclDataType_t nccl_type(Dtype d) {
  switch (d) {
    case Dtype::Float32:
      return ncclFloat32;
    case Dtype::Float64:
      return ncclFloat64;
    case Dtype::Float16:
      return ncclFloat16;
    case Dtype::BFloat16:
      return ncclBfloat16;
    case Dtype::Int64:
      return ncclInt64;
    case Dtype::Int32:
      return ncclInt32;
    case Dtype::UInt8:
    case Dtype::Bool:
      return ncclUint8;
  }
  return ncclUint8;
}

ncclRedOp_t nccl_op(ReduceOp op) {
  switch (op) {
    case ReduceOp::Sum:
      return ncclSum;
    case ReduceOp::Avg:
      return ncclAvg;
    case ReduceOp::Max:
      return ncclMax;
    case ReduceOp::Min:
      return ncclMin;
  }
  return ncclSum;
}

// Makes the current device `device` for a scope.
class DeviceGuard {
 public:
  explicit DeviceGuard(int device) : prev_(st::cuda::current_device()) { st::cuda::set_device(device); }
  ~DeviceGuard() { st::cuda::set_device(prev_); }
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int prev_;
};

class NcclWork : public Work {
 public:
  NcclWork(std::string what, ncclComm_t comm, int device, std::chrono::milliseconds timeout, uintptr_t event,
           std::vector<Tensor> keep, std::vector<std::pair<Tensor, Tensor>> write_back)
      : what_(std::move(what)),
        comm_(comm),
        device_(device),
        timeout_(timeout),
        event_(event),
        keep_(std::move(keep)),
        write_back_(std::move(write_back)) {}

  ~NcclWork() override {
    // Never hand the buffers back to the allocator while NCCL may still use them.
    try {
      if (event_) {
        st::cuda::event_synchronize(event_);
        st::cuda::event_destroy(event_);
      }
    } catch (...) {
    }
  }

  void wait() override {
    if (done_) return;
    const auto deadline = std::chrono::steady_clock::now() + timeout_;
    while (!st::cuda::event_query(event_)) {
      ncclResult_t async = ncclSuccess;
      ncclCommGetAsyncError(comm_, &async);
      if (async != ncclSuccess && async != ncclInProgress) {
        throw DistributedError(what_ + ": NCCL reported an asynchronous error: " + ncclGetErrorString(async));
      }
      if (std::chrono::steady_clock::now() > deadline) {
        throw DistributedError(what_ + ": not complete after " +
                               std::to_string(timeout_.count() / 1000.0).substr(0, 6) +
                               " s (the process group's timeout); another rank has failed, is slower, or issued a "
                               "different collective");
      }
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
    DeviceGuard dg(device_);
    NoGradGuard ng;
    for (auto& [user, result] : write_back_) {
      if (user.same(result)) {
        user.storage()->bump_version();
      } else {
        copy_(user, result);
      }
    }
    write_back_.clear();
    keep_.clear();
    done_ = true;
  }

  bool is_completed() override { return done_ || st::cuda::event_query(event_); }

 private:
  const std::string what_;
  ncclComm_t comm_;
  const int device_;
  const std::chrono::milliseconds timeout_;
  uintptr_t event_;
  std::vector<Tensor> keep_;
  std::vector<std::pair<Tensor, Tensor>> write_back_;  // (user tensor, staged result)
  bool done_ = false;
};

// A contiguous tensor the collective can use directly (the tensor itself when it is one).
Tensor staged(const Tensor& t) {
  if (t.is_contiguous()) return t;
  NoGradGuard ng;
  return t.contiguous();
}

class NcclGroup : public ProcessGroup {
 public:
  NcclGroup(ncclComm_t comm, int device, int rank, int size, std::chrono::milliseconds timeout)
      : ProcessGroup(rank, size, timeout), comm_(comm), device_(device) {
    DeviceGuard dg(device_);
    stream_ = st::cuda::stream_create(device_);
    scratch_ = Tensor::empty({1}, Dtype::Float32, Device(DeviceType::CUDA, device_));
  }

  ~NcclGroup() override {
    try {
      DeviceGuard dg(device_);
      st::cuda::stream_synchronize(stream_);
      ncclCommDestroy(comm_);
      st::cuda::stream_destroy(stream_);
    } catch (...) {
    }
  }

  std::string backend() const override { return "nccl"; }

  std::shared_ptr<Work> barrier() override {
    // NCCL has no barrier: a one-element all-reduce that every rank must join.
    return launch("barrier", {scratch_}, {}, [&](cudaStream_t s) {
      check_nccl(ncclAllReduce(scratch_.raw_data(), scratch_.raw_data(), 1, ncclFloat32, ncclSum, comm_, s), "barrier");
    });
  }

  std::shared_ptr<Work> all_reduce(Tensor& tensor, ReduceOp op) override {
    check_tensor("all_reduce", tensor, true);
    check_here("all_reduce", tensor);
    check_reduce("all_reduce", tensor.dtype(), op);
    Tensor buf = staged(tensor);
    return launch("all_reduce", {buf}, {{tensor, buf}}, [&](cudaStream_t s) {
      check_nccl(ncclAllReduce(buf.raw_data(), buf.raw_data(), static_cast<size_t>(buf.numel()), nccl_type(buf.dtype()),
                               nccl_op(op), comm_, s),
                 "all_reduce");
    });
  }

  std::shared_ptr<Work> broadcast(Tensor& tensor, int root) override {
    check_tensor("broadcast", tensor, true);
    check_here("broadcast", tensor);
    if (root < 0 || root >= size()) {
      throw ValueError("broadcast: root " + std::to_string(root) + " is outside [0, " + std::to_string(size()) + ")");
    }
    Tensor buf = staged(tensor);
    return launch("broadcast", {buf}, {{tensor, buf}}, [&](cudaStream_t s) {
      check_nccl(ncclBroadcast(buf.raw_data(), buf.raw_data(), static_cast<size_t>(buf.numel()), nccl_type(buf.dtype()),
                               root, comm_, s),
                 "broadcast");
    });
  }

  std::shared_ptr<Work> all_gather(Tensor& output, const Tensor& input) override {
    check_gather("all_gather", output, input, true);
    check_here("all_gather", input);
    Tensor in = staged(input);
    Tensor out = staged(output);
    return launch("all_gather", {in, out}, {{output, out}}, [&](cudaStream_t s) {
      check_nccl(ncclAllGather(in.raw_data(), out.raw_data(), static_cast<size_t>(in.numel()), nccl_type(in.dtype()),
                               comm_, s),
                 "all_gather");
    });
  }

  std::shared_ptr<Work> reduce_scatter(Tensor& output, const Tensor& input, ReduceOp op) override {
    check_gather("reduce_scatter", input, output, true);
    check_here("reduce_scatter", input);
    check_reduce("reduce_scatter", input.dtype(), op);
    Tensor in = staged(input);
    Tensor out = staged(output);
    return launch("reduce_scatter", {in, out}, {{output, out}}, [&](cudaStream_t s) {
      check_nccl(ncclReduceScatter(in.raw_data(), out.raw_data(), static_cast<size_t>(out.numel()),
                                   nccl_type(in.dtype()), nccl_op(op), comm_, s),
                 "reduce_scatter");
    });
  }

 private:
  template <typename Call>
  std::shared_ptr<Work> launch(const std::string& op, std::vector<Tensor> keep,
                               std::vector<std::pair<Tensor, Tensor>> write_back, Call&& call) {
    DeviceGuard dg(device_);
    // The collective starts after everything already queued on the caller's stream.
    const uintptr_t ready = st::cuda::event_create(device_, false);
    st::cuda::event_record(ready, st::cuda::current_stream(device_));
    st::cuda::stream_wait_event(stream_, ready);
    st::cuda::event_destroy(ready);
    call(reinterpret_cast<cudaStream_t>(stream_));
    const uintptr_t done = st::cuda::event_create(device_, false);
    st::cuda::event_record(done, stream_);
    // The caller's stream, too, waits for the result before it touches these tensors again.
    st::cuda::stream_wait_event(st::cuda::current_stream(device_), done);
    return std::make_shared<NcclWork>(op + " (rank " + std::to_string(rank()) + " of " + std::to_string(size()) + ")",
                                      comm_, device_, timeout(), done, std::move(keep), std::move(write_back));
  }

  void check_here(const char* op, const Tensor& t) const {
    if (t.device().index != device_) {
      throw DeviceUnavailableError(std::string(op) + ": this rank's NCCL group runs on cuda:" +
                                   std::to_string(device_) + ", got a tensor on " + t.device().str());
    }
  }

  static void check_reduce(const char* op, Dtype d, ReduceOp rop) {
    if (d == Dtype::Bool) throw DtypeError(std::string(op) + ": the nccl backend cannot reduce bool tensors");
    if (rop == ReduceOp::Avg && !is_floating(d)) {
      throw DtypeError(std::string(op) + ": op 'avg' needs a floating dtype, got " + dtype_name(d));
    }
  }

  ncclComm_t comm_;
  const int device_;
  uintptr_t stream_ = 0;
  Tensor scratch_;
};

}  // namespace

std::string nccl_unavailable_reason() {
  if (!st::cuda::is_available()) return "no CUDA device: " + st::cuda::unavailable_reason();
  return "";
}

std::unique_ptr<ProcessGroup> make_nccl_group(const GroupOptions& options) {
  const int want_rank = options.rank >= 0 ? options.rank : env_int("RANK");
  const int want_size = options.world_size >= 0 ? options.world_size : env_int("WORLD_SIZE");
  ncclUniqueId id;
  std::vector<char> bytes(sizeof(id));
  int rank = 0, size = 1;
  if (want_size > 1) {
    if (want_rank <= 0) check_nccl(ncclGetUniqueId(&id), "init_process_group");
    std::memcpy(bytes.data(), &id, sizeof(id));
    std::tie(rank, size) = mpi_broadcast_bytes(bytes);  // rank 0's id reaches every rank
    std::memcpy(&id, bytes.data(), sizeof(id));
    if ((want_rank >= 0 && want_rank != rank) || want_size != size) {
      throw ValueError("init_process_group: rank " + std::to_string(want_rank) + " of world size " +
                       std::to_string(want_size) + " was asked for, but the launcher started this process as rank " +
                       std::to_string(rank) + " of " + std::to_string(size));
    }
  } else {
    if (want_rank > 0) {
      throw ValueError("init_process_group: rank " + std::to_string(want_rank) + " needs a world size above it, got " +
                       std::to_string(want_size));
    }
    check_nccl(ncclGetUniqueId(&id), "init_process_group");
  }
  const int count = st::cuda::device_count();
  int device = options.device;
  if (device < 0) {
    const int local = env_int("LOCAL_RANK");
    device = (local >= 0 ? local : rank) % count;
  }
  if (device >= count) {
    throw ValueError("init_process_group: device " + std::to_string(device) + " is outside the " +
                     std::to_string(count) + " CUDA devices");
  }
  ncclComm_t comm = nullptr;
  {
    DeviceGuard dg(device);
    check_nccl(ncclCommInitRank(&comm, size, id, rank), "init_process_group");
  }
  return std::make_unique<NcclGroup>(comm, device, rank, size, options.timeout);
}

}  // namespace st::distributed::detail

#else  // !SPIRALTORCH_WITH_NCCL

#ifndef SPIRALTORCH_NCCL_REASON
#define SPIRALTORCH_NCCL_REASON "NCCL is not compiled into this build"
#endif

namespace st::distributed::detail {

std::string nccl_unavailable_reason() { return SPIRALTORCH_NCCL_REASON; }

std::unique_ptr<ProcessGroup> make_nccl_group(const GroupOptions&) {
  throw DeviceUnavailableError(std::string("init_process_group: backend 'nccl' is unavailable: ") +
                               SPIRALTORCH_NCCL_REASON);
}

}  // namespace st::distributed::detail

#endif
