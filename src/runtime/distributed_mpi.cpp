// The "mpi" backend: collectives of the MPI library on CPU tensors. Only this file sees mpi.h
// and SPIRALTORCH_WITH_MPI (cmake/SpiralMPI.cmake), so a build without MPI compiles the
// fallback at the bottom and reports why.
//
// One worker thread per process makes every MPI call: MPI_Init_thread (FUNNELED), the
// operations of every group in the order they were issued, and MPI_Finalize at exit. Callers
// enqueue and get a Work handle, so a collective can run while the caller computes (the DDP
// reducer's overlap) and every rank issues the same sequence in the same order.
#include "runtime/distributed_backends.h"

#if SPIRALTORCH_WITH_MPI

#include <mpi.h>

#include <climits>
#include <condition_variable>
#include <cstdlib>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

#include "spiraltorch/autograd.h"
#include "spiraltorch/ops.h"

namespace st::distributed::detail {

namespace {

std::string mpi_error_text(int rc) {
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, text, &len);
  return std::string(text, static_cast<size_t>(len));
}

void check_mpi(int rc, const std::string& what) {
  if (rc != MPI_SUCCESS) throw DistributedError(what + ": MPI error: " + mpi_error_text(rc));
}

class MpiWork : public Work {
 public:
  MpiWork(std::string what, std::chrono::milliseconds timeout) : what_(std::move(what)), timeout_(timeout) {}

  void finish(std::exception_ptr error) {
    {
      std::lock_guard lock(mu_);
      done_ = true;
      error_ = std::move(error);
    }
    cv_.notify_all();
  }

  void wait() override {
    std::unique_lock lock(mu_);
    if (!cv_.wait_for(lock, timeout_, [&] { return done_; })) {
      throw DistributedError(what_ + ": not complete after " + std::to_string(timeout_.count() / 1000.0).substr(0, 6) +
                             " s (the process group's timeout); another rank has failed, is slower, or issued a "
                             "different collective");
    }
    if (error_) std::rethrow_exception(error_);
  }

  bool is_completed() override {
    std::lock_guard lock(mu_);
    return done_;
  }

 private:
  const std::string what_;
  const std::chrono::milliseconds timeout_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
  std::exception_ptr error_;
};

// The process's MPI thread. MPI may be initialised once per process, so the engine lives until
// exit; process groups come and go on top of it (each with its own communicator).
class MpiEngine {
 public:
  static MpiEngine& get() {
    static MpiEngine* engine = [] {
      auto* e = new MpiEngine();  // lives until exit; the atexit handler finalises MPI
      std::atexit([] { get().shutdown(); });
      return e;
    }();
    return *engine;
  }

  // Runs `task` on the MPI thread, in issue order.
  void submit(std::function<void()> task) {
    {
      std::lock_guard lock(mu_);
      if (stopped_) throw DistributedError("mpi: MPI was finalised (the process is exiting)");
      queue_.push_back(std::move(task));
    }
    cv_.notify_one();
  }

  // Runs `fn` on the MPI thread and waits for it, rethrowing its error.
  void run(const std::function<void()>& fn) {
    auto work = std::make_shared<MpiWork>("mpi", std::chrono::hours(24));
    submit([&fn, work] {
      try {
        fn();
        work->finish(nullptr);
      } catch (...) {
        work->finish(std::current_exception());
      }
    });
    work->wait();
  }

 private:
  MpiEngine() {
    worker_ = std::thread([this] { loop(); });
    try {
      init();
    } catch (...) {
      stop();
      throw;
    }
  }

  void init() {
    run([] {
      int initialized = 0;
      MPI_Initialized(&initialized);
      if (!initialized) {
        int provided = 0;
        check_mpi(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided), "init_process_group");
        if (provided < MPI_THREAD_FUNNELED) {
          throw DistributedError("init_process_group: the MPI library provides no MPI_THREAD_FUNNELED support");
        }
      }
    });
  }

  void loop() {
    for (;;) {
      std::function<void()> task;
      {
        std::unique_lock lock(mu_);
        cv_.wait(lock, [&] { return !queue_.empty() || stopping_; });
        if (queue_.empty()) break;
        task = std::move(queue_.front());
        queue_.pop_front();
      }
      task();
    }
    int initialized = 0, finalized = 0;
    MPI_Initialized(&initialized);
    MPI_Finalized(&finalized);
    if (initialized && !finalized) MPI_Finalize();
  }

  void shutdown() {
    st::distributed::destroy_process_group();
    stop();
  }

  void stop() {
    {
      std::lock_guard lock(mu_);
      stopped_ = stopping_ = true;
    }
    cv_.notify_one();
    if (worker_.joinable()) worker_.join();
  }

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> queue_;
  bool stopping_ = false, stopped_ = false;
  std::thread worker_;
};

MPI_Datatype reduce_type(Dtype d) {
  switch (d) {
    case Dtype::Float32:
      return MPI_FLOAT;
    case Dtype::Float64:
      return MPI_DOUBLE;
    case Dtype::Int64:
      return MPI_INT64_T;
    case Dtype::Int32:
      return MPI_INT32_T;
    case Dtype::UInt8:
      return MPI_UINT8_T;
    default:
      return MPI_DATATYPE_NULL;
  }
}

MPI_Op mpi_op(ReduceOp op) {
  switch (op) {
    case ReduceOp::Sum:
    case ReduceOp::Avg:
      return MPI_SUM;
    case ReduceOp::Max:
      return MPI_MAX;
    case ReduceOp::Min:
      return MPI_MIN;
  }
  return MPI_SUM;
}

int checked_count(const char* op, int64_t n) {
  if (n > INT_MAX) {
    throw ValueError(std::string(op) + ": " + std::to_string(n) + " elements exceed MPI's int count; split the tensor");
  }
  return static_cast<int>(n);
}

// A contiguous buffer in the dtype the wire carries (half types reduce in float32), and the
// tensor to write it back into when that is not the buffer itself.
struct Staged {
  Tensor user;
  Tensor buf;
  bool copy_back = false;

  static Staged of(const Tensor& t, bool reduce) {
    const bool half = t.dtype() == Dtype::Float16 || t.dtype() == Dtype::BFloat16;
    if (t.is_contiguous() && !(reduce && half)) return {t, t, false};
    NoGradGuard ng;
    Tensor buf = reduce && half ? t.to(Dtype::Float32).contiguous() : t.contiguous();
    if (buf.same(t)) buf = t.clone();
    return {t, buf, true};
  }

  // Called on the MPI thread once the buffer holds the result.
  void commit() {
    if (copy_back) {
      NoGradGuard ng;
      copy_(user, buf);
    } else {
      user.storage()->bump_version();
    }
  }
};

class MpiGroup : public ProcessGroup {
 public:
  MpiGroup(MpiEngine& engine, MPI_Comm comm, int rank, int size, std::chrono::milliseconds timeout)
      : ProcessGroup(rank, size, timeout), engine_(engine), comm_(comm) {}

  ~MpiGroup() override {
    try {
      MPI_Comm comm = comm_;
      engine_.run([comm]() mutable { MPI_Comm_free(&comm); });
    } catch (...) {
      // The engine is gone (process exit): MPI_Finalize frees the communicator.
    }
  }

  std::string backend() const override { return "mpi"; }

  std::shared_ptr<Work> barrier() override {
    return issue("barrier", [comm = comm_] { check_mpi(MPI_Barrier(comm), "barrier"); });
  }

  std::shared_ptr<Work> all_reduce(Tensor& tensor, ReduceOp op) override {
    check_tensor("all_reduce", tensor, false);
    check_reduce("all_reduce", tensor.dtype(), op);
    Staged s = Staged::of(tensor, true);
    const int count = checked_count("all_reduce", s.buf.numel());
    return issue("all_reduce", [comm = comm_, s, count, op, n = size()]() mutable {
      check_mpi(MPI_Allreduce(MPI_IN_PLACE, s.buf.raw_data(), count, reduce_type(s.buf.dtype()), mpi_op(op), comm),
                "all_reduce");
      if (op == ReduceOp::Avg) divide(s.buf, n);
      s.commit();
    });
  }

  std::shared_ptr<Work> broadcast(Tensor& tensor, int root) override {
    check_tensor("broadcast", tensor, false);
    check_root("broadcast", root);
    Staged s = Staged::of(tensor, false);
    const int bytes = checked_count("broadcast", s.buf.numel() * static_cast<int64_t>(s.buf.itemsize()));
    return issue("broadcast", [comm = comm_, s, bytes, root]() mutable {
      check_mpi(MPI_Bcast(s.buf.raw_data(), bytes, MPI_BYTE, root, comm), "broadcast");
      s.commit();
    });
  }

  std::shared_ptr<Work> all_gather(Tensor& output, const Tensor& input) override {
    check_gather("all_gather", output, input, false);
    Staged in = Staged::of(input, false);
    if (!in.copy_back) in.buf = input.clone();  // a snapshot: the caller may change its input meanwhile
    Staged out = Staged::of(output, false);
    const int bytes = checked_count("all_gather", in.buf.numel() * static_cast<int64_t>(in.buf.itemsize()));
    return issue("all_gather", [comm = comm_, in, out, bytes]() mutable {
      check_mpi(MPI_Allgather(in.buf.raw_data(), bytes, MPI_BYTE, out.buf.raw_data(), bytes, MPI_BYTE, comm),
                "all_gather");
      out.commit();
    });
  }

  std::shared_ptr<Work> reduce_scatter(Tensor& output, const Tensor& input, ReduceOp op) override {
    check_gather("reduce_scatter", input, output, false);
    check_reduce("reduce_scatter", input.dtype(), op);
    Staged in = Staged::of(input, true);
    if (!in.copy_back) in.buf = input.clone();
    Staged out = Staged::of(output, true);
    const int count = checked_count("reduce_scatter", out.buf.numel());
    return issue("reduce_scatter", [comm = comm_, in, out, count, op, n = size()]() mutable {
      check_mpi(MPI_Reduce_scatter_block(in.buf.raw_data(), out.buf.raw_data(), count, reduce_type(in.buf.dtype()),
                                         mpi_op(op), comm),
                "reduce_scatter");
      if (op == ReduceOp::Avg) divide(out.buf, n);
      out.commit();
    });
  }

 private:
  std::shared_ptr<Work> issue(const std::string& op, std::function<void()> body) {
    auto work = std::make_shared<MpiWork>(
        op + " (rank " + std::to_string(rank()) + " of " + std::to_string(size()) + ")", timeout());
    engine_.submit([body = std::move(body), work] {
      try {
        body();
        work->finish(nullptr);
      } catch (...) {
        work->finish(std::current_exception());
      }
    });
    return work;
  }

  void check_reduce(const char* op, Dtype d, ReduceOp rop) const {
    const bool half = d == Dtype::Float16 || d == Dtype::BFloat16;
    if (reduce_type(d) == MPI_DATATYPE_NULL && !half) {
      throw DtypeError(std::string(op) + ": the mpi backend cannot reduce " + dtype_name(d) + " tensors");
    }
    if (rop == ReduceOp::Avg && !is_floating(d)) {
      throw DtypeError(std::string(op) + ": op 'avg' needs a floating dtype, got " + dtype_name(d));
    }
  }

  void check_root(const char* op, int root) const {
    if (root < 0 || root >= size()) {
      throw ValueError(std::string(op) + ": root " + std::to_string(root) + " is outside [0, " +
                       std::to_string(size()) + ")");
    }
  }

  static void divide(Tensor& buf, int n) {
    const int64_t count = buf.numel();
    if (buf.dtype() == Dtype::Float64) {
      double* p = buf.data<double>();
      for (int64_t i = 0; i < count; ++i) p[i] /= n;
    } else {
      float* p = buf.data<float>();
      for (int64_t i = 0; i < count; ++i) p[i] /= static_cast<float>(n);
    }
  }

  MpiEngine& engine_;
  const MPI_Comm comm_;
};

}  // namespace

std::string mpi_unavailable_reason() { return ""; }

std::string mpi_library_version() {
  char text[MPI_MAX_LIBRARY_VERSION_STRING];
  int len = 0;
  MPI_Get_library_version(text, &len);
  std::string s(text, static_cast<size_t>(len));
  if (auto nl = s.find_first_of("\n,"); nl != std::string::npos) s.resize(nl);
  return s;
}

std::unique_ptr<ProcessGroup> make_mpi_group(const GroupOptions& options) {
  MpiEngine& engine = MpiEngine::get();
  MPI_Comm comm = MPI_COMM_NULL;
  int rank = 0, size = 0;
  engine.run([&] {
    check_mpi(MPI_Comm_dup(MPI_COMM_WORLD, &comm), "init_process_group");
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
  });
  auto group = std::make_unique<MpiGroup>(engine, comm, rank, size, options.timeout);
  // What the caller (or the launcher's RANK/WORLD_SIZE) says must be what MPI says.
  const int want_rank = options.rank >= 0 ? options.rank : env_int("RANK");
  const int want_size = options.world_size >= 0 ? options.world_size : env_int("WORLD_SIZE");
  if ((want_rank >= 0 && want_rank != rank) || (want_size >= 0 && want_size != size)) {
    throw ValueError("init_process_group: rank " + std::to_string(want_rank) + " of world size " +
                     std::to_string(want_size) + " was asked for, but MPI started this process as rank " +
                     std::to_string(rank) + " of " + std::to_string(size) +
                     " (start every rank with spiral-run or mpirun)");
  }
  return group;
}

std::pair<int, int> mpi_broadcast_bytes(std::vector<char>& bytes) {
  MpiEngine& engine = MpiEngine::get();
  int rank = 0, size = 0;
  engine.run([&] {
    check_mpi(MPI_Bcast(bytes.data(), checked_count("init_process_group", static_cast<int64_t>(bytes.size())), MPI_BYTE,
                        0, MPI_COMM_WORLD),
              "init_process_group (NCCL id exchange)");
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
  });
  return {rank, size};
}

}  // namespace st::distributed::detail

#else  // !SPIRALTORCH_WITH_MPI

#ifndef SPIRALTORCH_MPI_REASON
#define SPIRALTORCH_MPI_REASON "MPI is not compiled into this build"
#endif

namespace st::distributed::detail {

std::string mpi_unavailable_reason() { return SPIRALTORCH_MPI_REASON; }
std::string mpi_library_version() { return ""; }

std::unique_ptr<ProcessGroup> make_mpi_group(const GroupOptions&) {
  throw DeviceUnavailableError(std::string("init_process_group: backend 'mpi' is unavailable: ") +
                               SPIRALTORCH_MPI_REASON);
}

std::pair<int, int> mpi_broadcast_bytes(std::vector<char>&) {
  throw DeviceUnavailableError(std::string("init_process_group: NCCL with more than one rank exchanges its id over "
                                           "MPI, which is unavailable: ") +
                               SPIRALTORCH_MPI_REASON);
}

}  // namespace st::distributed::detail

#endif
