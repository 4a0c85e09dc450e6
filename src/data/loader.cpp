#include "spiraltorch/data/loader.h"

#include <cstring>
#include <numeric>
#include <string>
#include <utility>

#if defined(__linux__)
#include <pthread.h>
#endif

#include "spiraltorch/cuda.h"
#include "spiraltorch/error.h"
#include "spiraltorch/ops.h"
#include "spiraltorch/threads.h"

namespace st::data {
namespace {

// Below this many bytes per field a batch is copied by one thread: starting a parallel region
// costs more than the copy (a 64-row Fashion-MNIST batch is 200 KB).
constexpr size_t kParallelCopyBytes = size_t{1} << 20;

Shape batch_shape(const Tensor& field, int64_t rows) {
  Shape s = field.shape();
  s[0] = rows;
  return s;
}

// Copies the row segments of `samples` from a contiguous CPU field into dst (contiguous).
void copy_rows(const TensorDataset& ds, size_t f, std::span<const int64_t> samples, char* dst) {
  const Tensor& src_t = ds.field(f);
  const int64_t trailing = src_t.size(0) > 0 ? src_t.numel() / src_t.size(0) : shape_numel(batch_shape(src_t, 1));
  const auto row_bytes = static_cast<size_t>(trailing) * src_t.itemsize();
  const auto* src = static_cast<const char*>(src_t.raw_data());
  const auto n = static_cast<int64_t>(samples.size());
  std::vector<size_t> dst_off(samples.size() + 1, 0);
  for (int64_t k = 0; k < n; ++k) dst_off[k + 1] = dst_off[k] + static_cast<size_t>(ds.rows(f, samples[k])) * row_bytes;
  // Host orchestration, not a device kernel: large batches split into one range per thread.
  const bool parallel = dst_off.back() >= kParallelCopyBytes;
  const int64_t threads = get_num_threads();
  parallel_for(n, parallel ? (n + threads - 1) / threads : n, [&](int64_t begin, int64_t end) {
    for (int64_t k = begin; k < end; ++k) {
      const size_t bytes = dst_off[k + 1] - dst_off[k];
      if (bytes)
        std::memcpy(dst + dst_off[k], src + static_cast<size_t>(ds.row_begin(f, samples[k])) * row_bytes, bytes);
    }
  });
}

Tensor row_index(const TensorDataset& ds, size_t f, std::span<const int64_t> samples, Device device) {
  std::vector<int64_t> rows;
  for (const int64_t i : samples)
    for (int64_t r = 0; r < ds.rows(f, i); ++r) rows.push_back(ds.row_begin(f, i) + r);
  const auto count = static_cast<int64_t>(rows.size());
  Tensor idx = Tensor::from_vector(rows, Shape{count});
  return device == Device{} ? idx : to_device(idx, device);
}

}  // namespace

Batch gather(const TensorDataset& ds, std::span<const int64_t> samples, Device device, uintptr_t copy_stream) {
  for (const int64_t i : samples)
    if (i < 0 || i >= ds.size())
      throw IndexError("gather: sample index " + std::to_string(i) + " is out of range for a dataset of " +
                       std::to_string(ds.size()));
  Batch batch;
  const bool to_cuda = device.type == DeviceType::CUDA;
  for (size_t f = 0; f < ds.num_fields(); ++f) {
    const Tensor& field = ds.field(f);
    if (field.device().type != DeviceType::CPU) {
      // Device-resident data is gathered where it lives, then moved if asked.
      Tensor out = index_select(field, 0, row_index(ds, f, samples, field.device()));
      batch.tensors.push_back(out.device() == device ? out : to_device(out, device));
      continue;
    }
    int64_t rows = 0;
    for (const int64_t i : samples) rows += ds.rows(f, i);
    const Shape shape = batch_shape(field, rows);
    if (!to_cuda) {
      Tensor out = Tensor::empty(shape, field.dtype(), device);  // host memory (any CPU index)
      copy_rows(ds, f, samples, static_cast<char*>(out.raw_data()));
      batch.tensors.push_back(std::move(out));
      continue;
    }
    // CPU -> CUDA: gather into pinned memory, then an asynchronous copy the consumer waits for.
    const size_t nbytes = static_cast<size_t>(shape_numel(shape)) * field.itemsize();
    void* pinned = cuda::host_allocate_pinned(nbytes);
    std::shared_ptr<void> staging(pinned, [](void* p) { cuda::host_release_pinned(p); });
    copy_rows(ds, f, samples, static_cast<char*>(pinned));
    Tensor out = Tensor::empty(shape, field.dtype(), device);
    const uintptr_t stream = copy_stream ? copy_stream : cuda::current_stream(device.index);
    cuda::memcpy_async(out.raw_data(), pinned, nbytes, true, false, device.index, stream);
    batch.staging.push_back(std::move(staging));
    batch.tensors.push_back(std::move(out));
    if (f + 1 == ds.num_fields()) {
      batch.ready = cuda::event_create(device.index, false);
      cuda::event_record(batch.ready, stream);
    }
  }
  if (to_cuda && !batch.staging.empty() && !batch.ready) {
    // The last field was device-resident: still mark the end of the staged copies.
    const uintptr_t stream = copy_stream ? copy_stream : cuda::current_stream(device.index);
    batch.ready = cuda::event_create(device.index, false);
    cuda::event_record(batch.ready, stream);
  }
  return batch;
}

void Batch::wait() {
  if (ready) {
    cuda::event_synchronize(ready);
    cuda::event_destroy(ready);
    ready = 0;
  }
  staging.clear();
}

Batch::Batch(Batch&& o) noexcept
    : tensors(std::move(o.tensors)), ready(std::exchange(o.ready, 0)), staging(std::move(o.staging)) {}

Batch& Batch::operator=(Batch&& o) noexcept {
  if (this != &o) {
    try {
      wait();
    } catch (...) {
    }
    tensors = std::move(o.tensors);
    ready = std::exchange(o.ready, 0);
    staging = std::move(o.staging);
  }
  return *this;
}

Batch::~Batch() {
  try {
    wait();  // the pinned staging memory may only be freed once its copy has finished
  } catch (...) {
  }
}

void LoaderOptions::validate(const char* who) const {
  batching.validate(who);
  if (prefetch < 0)
    throw ValueError(std::string(who) + ": prefetch must be non-negative, got " + std::to_string(prefetch));
  if (device.type == DeviceType::CUDA && !cuda::is_available())
    throw DeviceUnavailableError(std::string(who) + ": device " + device.str() +
                                 " is not available: " + cuda::unavailable_reason());
}

// ---------------------------------------------------------------- EpochIterator

EpochIterator::EpochIterator(std::shared_ptr<const TensorDataset> dataset, std::vector<std::vector<int64_t>> batches,
                             int64_t prefetch, Device device)
    : dataset_(std::move(dataset)), batches_(std::move(batches)), prefetch_(prefetch), device_(device) {
  if (prefetch_ < 0) throw ValueError("EpochIterator: prefetch must be non-negative, got " + std::to_string(prefetch_));
  if (device_.type == DeviceType::CUDA) copy_stream_ = cuda::stream_create(device_.index);
  if (prefetch_ > 0 && !batches_.empty()) {
    worker_ = std::thread([this] { produce(); });
#if defined(__linux__)
    pthread_setname_np(worker_.native_handle(), "st-prefetch");
#endif
  }
}

EpochIterator::~EpochIterator() {
  close();
  if (copy_stream_) {
    try {
      cuda::stream_synchronize(copy_stream_);
    } catch (...) {
    }
    cuda::stream_destroy(copy_stream_);
  }
}

void EpochIterator::close() {
  {
    const std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (worker_.joinable()) worker_.join();
  const std::lock_guard lock(mu_);
  queue_.clear();
  done_ = true;
}

void EpochIterator::produce() {
  try {
    for (const auto& samples : batches_) {
      {
        std::unique_lock lock(mu_);
        cv_.wait(lock, [&] { return stop_ || static_cast<int64_t>(queue_.size()) < prefetch_; });
        if (stop_) break;
      }
      Batch b = gather(*dataset_, samples, device_, copy_stream_);
      ++produced_;
      {
        const std::lock_guard lock(mu_);
        if (stop_) break;
        queue_.push_back(std::move(b));
      }
      cv_.notify_all();
    }
  } catch (...) {
    const std::lock_guard lock(mu_);
    error_ = std::current_exception();
  }
  {
    const std::lock_guard lock(mu_);
    done_ = true;
  }
  cv_.notify_all();
}

std::optional<std::vector<Tensor>> EpochIterator::next() {
  if (prefetch_ == 0) {
    if (consumed_ >= batches_.size() || stop_) return std::nullopt;
    Batch b = gather(*dataset_, batches_[consumed_], device_, copy_stream_);
    ++consumed_;
    ++produced_;
    b.wait();
    return std::move(b.tensors);
  }
  Batch b;
  {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [&] { return !queue_.empty() || done_; });
    if (queue_.empty()) {
      if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
      return std::nullopt;
    }
    b = std::move(queue_.front());
    queue_.pop_front();
  }
  cv_.notify_all();
  ++consumed_;
  b.wait();
  return std::move(b.tensors);
}

// ---------------------------------------------------------------- DataLoader

DataLoader::DataLoader(std::shared_ptr<const TensorDataset> dataset, LoaderOptions options)
    : dataset_(std::move(dataset)), options_(std::move(options)) {
  if (!dataset_) throw ValueError("DataLoader: got no dataset");
  options_.validate("DataLoader");
}

int64_t DataLoader::num_batches() const {
  const auto& b = options_.batching;
  const int64_t n = dataset_->size();
  if (!b.max_rows) return b.drop_last ? n / b.batch_size : (n + b.batch_size - 1) / b.batch_size;
  std::vector<int64_t> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), int64_t{0});
  return static_cast<int64_t>(plan_batches(*dataset_, order, b).size());
}

std::unique_ptr<EpochIterator> DataLoader::epoch(Generator* gen) const {
  std::vector<int64_t> order;
  if (options_.shuffle) {
    order = permutation(dataset_->size(), gen ? *gen : default_generator());
  } else {
    order.resize(static_cast<size_t>(dataset_->size()));
    std::iota(order.begin(), order.end(), int64_t{0});
  }
  return epoch(std::move(order));
}

std::unique_ptr<EpochIterator> DataLoader::epoch(std::vector<int64_t> order) const {
  return std::make_unique<EpochIterator>(dataset_, plan_batches(*dataset_, order, options_.batching), options_.prefetch,
                                         options_.device);
}

}  // namespace st::data
