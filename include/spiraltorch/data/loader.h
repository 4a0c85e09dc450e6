#pragma once
// The data pipeline: seeded shuffle, fixed or row-budget batches, gathering rows into contiguous
// batch tensors (memcpy, threaded for large batches) and background prefetch on C++ threads.
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <thread>
#include <vector>

#include "spiraltorch/data/dataset.h"
#include "spiraltorch/data/sampler.h"
#include "spiraltorch/device.h"
#include "spiraltorch/generator.h"

namespace st::data {

// A batch: one tensor per field. For a CPU->CUDA transfer `ready` is the CUDA event recorded after
// the asynchronous copies and `staging` keeps the pinned source alive until it has fired;
// wait() blocks until it has fired (the copy was issued ahead, so usually it already has) and
// then releases the staging memory.
struct Batch {
  std::vector<Tensor> tensors;
  uintptr_t ready = 0;
  std::vector<std::shared_ptr<void>> staging;
  void wait();
  Batch() = default;
  Batch(Batch&&) noexcept;
  Batch& operator=(Batch&&) noexcept;
  Batch(const Batch&) = delete;
  Batch& operator=(const Batch&) = delete;
  ~Batch();
};

// The rows of `samples` of every field, concatenated along dim 0, on `device`. CPU fields are
// copied with one memcpy per sample (split over OpenMP threads when the batch is large); fields on
// another device use index_select there. When device is CUDA and the fields are on the CPU, rows
// are gathered into pinned host memory and copied asynchronously; see Batch.
// copy_stream: the CUDA stream of the asynchronous copies (0: the current stream).
Batch gather(const TensorDataset& dataset, std::span<const int64_t> samples, Device device = {},
             uintptr_t copy_stream = 0);

struct LoaderOptions {
  BatchingOptions batching;
  bool shuffle = false;
  // Batches assembled ahead of the consumer on a background thread (0: on demand, in next()).
  int64_t prefetch = 0;
  Device device;  // where batches are delivered
  void validate(const char* who) const;
};

// One pass over a dataset. With prefetch > 0 a producer thread assembles batches in order into
// a queue of at most `prefetch` batches; next() waits for the next one. An exception raised
// while assembling is rethrown by next() (after the batches before it); destroying the iterator
// early (or calling close()) stops and joins the producer.
class EpochIterator {
 public:
  EpochIterator(std::shared_ptr<const TensorDataset> dataset, std::vector<std::vector<int64_t>> batches,
                int64_t prefetch, Device device);
  ~EpochIterator();
  EpochIterator(const EpochIterator&) = delete;
  EpochIterator& operator=(const EpochIterator&) = delete;

  // The next batch, or nullopt at the end of the epoch.
  std::optional<std::vector<Tensor>> next();
  // Batches assembled so far (by the producer when prefetching).
  int64_t produced() const { return produced_.load(); }
  int64_t size() const { return static_cast<int64_t>(batches_.size()); }
  void close();

 private:
  void produce();

  std::shared_ptr<const TensorDataset> dataset_;
  std::vector<std::vector<int64_t>> batches_;
  const int64_t prefetch_;
  const Device device_;
  size_t consumed_ = 0;
  std::atomic<int64_t> produced_{0};
  uintptr_t copy_stream_ = 0;  // CUDA targets: the stream of the host-to-device copies

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Batch> queue_;
  std::exception_ptr error_;
  bool done_ = false, stop_ = false;
  std::thread worker_;
};

// A dataset plus batching options: each epoch() draws a fresh order (when shuffling) from a
// Generator in the caller's thread, so the order depends only on the generator's state.
class DataLoader {
 public:
  DataLoader(std::shared_ptr<const TensorDataset> dataset, LoaderOptions options);
  const TensorDataset& dataset() const { return *dataset_; }
  const LoaderOptions& options() const { return options_; }
  // Number of batches of one epoch.
  int64_t num_batches() const;
  // An epoch in natural or shuffled order (gen: the default generator when null).
  std::unique_ptr<EpochIterator> epoch(Generator* gen = nullptr) const;
  // An epoch in a given order (a permutation or any subset of sample indices).
  std::unique_ptr<EpochIterator> epoch(std::vector<int64_t> order) const;

 private:
  std::shared_ptr<const TensorDataset> dataset_;
  LoaderOptions options_;
};

}  // namespace st::data
