// The native data pipeline: shuffle determinism, epoch coverage, batching, gather and prefetch.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <numeric>
#include <thread>

#include "spiraltorch/cuda.h"
#include "spiraltorch/data/loader.h"
#include "spiraltorch/spiraltorch.h"

using namespace st;

namespace {

// n rows of 3 float32 values (row i holds 3i, 3i+1, 3i+2) and an int64 label column i.
std::shared_ptr<const data::TensorDataset> rows_dataset(int64_t n) {
  std::vector<float> x(static_cast<size_t>(n) * 3);
  std::iota(x.begin(), x.end(), 0.0f);
  std::vector<int64_t> y(static_cast<size_t>(n));
  std::iota(y.begin(), y.end(), int64_t{0});
  return std::make_shared<data::TensorDataset>(
      std::vector<Tensor>{Tensor::from_vector(x, {n, 3}), Tensor::from_vector(y, {n})});
}

std::vector<int64_t> labels_of_epoch(data::EpochIterator& it) {
  std::vector<int64_t> seen;
  while (auto b = it.next()) {
    const auto y = (*b)[1].to_vector<int64_t>();
    const auto x = (*b)[0].to_vector<float>();
    for (size_t k = 0; k < y.size(); ++k) EXPECT_EQ(x[k * 3], static_cast<float>(3 * y[k]));  // rows stay paired
    seen.insert(seen.end(), y.begin(), y.end());
  }
  return seen;
}

}  // namespace

TEST(DataSampler, PermutationIsDeterministicAndUniformEnough) {
  const auto a = data::permutation(1000, 42, 7);
  EXPECT_EQ(a, data::permutation(1000, 42, 7));
  EXPECT_NE(a, data::permutation(1000, 43, 7));
  EXPECT_NE(a, data::permutation(1000, 42, 8 + data::permutation_blocks(1000)));
  auto sorted = a;
  std::sort(sorted.begin(), sorted.end());
  for (int64_t i = 0; i < 1000; ++i) ASSERT_EQ(sorted[i], i);
  // Position of element 0 over many seeds: roughly uniform over 4 buckets of 0..7.
  std::array<int, 4> buckets{};
  for (uint64_t s = 0; s < 4000; ++s) {
    const auto p = data::permutation(8, s);
    buckets[static_cast<size_t>(std::find(p.begin(), p.end(), 0) - p.begin()) / 2]++;
  }
  for (int c : buckets) EXPECT_NEAR(c, 1000, 120);
  Generator g(5);
  const auto first = data::permutation(10, g);
  EXPECT_EQ(g.offset(), data::permutation_blocks(10));
  EXPECT_NE(first, data::permutation(10, g));  // the generator moved on
}

TEST(DataSampler, FixedAndRowBudgetPlans) {
  const auto ds = rows_dataset(10);
  std::vector<int64_t> order(10);
  std::iota(order.begin(), order.end(), 0);
  data::BatchingOptions o;
  o.batch_size = 4;
  EXPECT_EQ(data::plan_batches(*ds, order, o).size(), 3u);
  o.drop_last = true;
  EXPECT_EQ(data::plan_batches(*ds, order, o).size(), 2u);
  // Segments of 2, 2, 3, 5, 1, 1 rows with a budget of 4: 2+2 | 3 | 5 alone | 1+1.
  const std::vector<int64_t> offs{0, 2, 4, 7, 12, 13, 14};
  const data::TensorDataset seg({zeros({14, 3}), zeros({14, 1})}, {offs, offs});
  data::BatchingOptions r;
  r.max_rows = 4;
  std::vector<int64_t> six(6);
  std::iota(six.begin(), six.end(), 0);
  const auto plan = data::plan_batches(seg, six, r);
  ASSERT_EQ(plan.size(), 4u);
  EXPECT_EQ(plan[0], (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(plan[2], (std::vector<int64_t>{3}));
  r.drop_last = true;
  EXPECT_EQ(data::plan_batches(seg, six, r).size(), 3u);
  const auto b = data::gather(seg, plan[2]);
  EXPECT_EQ(b.tensors[0].shape(), (Shape{5, 3}));
  EXPECT_THROW(data::TensorDataset({zeros({3, 2}), zeros({4, 1})}), ShapeError);
  EXPECT_THROW(data::TensorDataset({zeros({3, 2})}, {{0, 1, 4}}), ShapeError);
  EXPECT_THROW(data::plan_batches(*ds, std::vector<int64_t>{10}, o), IndexError);
  o.batch_size = 0;
  EXPECT_THROW(data::plan_batches(*ds, order, o), ValueError);
}

TEST(DataLoader, EveryRowOnceAndDeterministicRegardlessOfPrefetch) {
  const auto ds = rows_dataset(1003);
  for (const int64_t prefetch : {0, 1, 3}) {
    data::LoaderOptions o;
    o.batching.batch_size = 64;
    o.shuffle = true;
    o.prefetch = prefetch;
    const data::DataLoader loader(ds, o);
    EXPECT_EQ(loader.num_batches(), 16);
    Generator g1(9), g2(9);
    auto e1 = loader.epoch(&g1);
    const auto seen = labels_of_epoch(*e1);
    auto e2 = loader.epoch(&g2);
    EXPECT_EQ(seen, labels_of_epoch(*e2));  // same generator state, same order and batches
    auto sorted = seen;
    std::sort(sorted.begin(), sorted.end());
    ASSERT_EQ(sorted.size(), 1003u);
    for (int64_t i = 0; i < 1003; ++i) ASSERT_EQ(sorted[i], i);
    EXPECT_FALSE(std::is_sorted(seen.begin(), seen.end()));
    auto e3 = loader.epoch(&g1);  // next epoch of the same generator: a different order
    EXPECT_NE(seen, labels_of_epoch(*e3));
  }
}

TEST(DataLoader, LargeBatchesAreGatheredByThreads) {
  // 4096 rows of 784 float32 exceed the single-thread copy threshold.
  const Tensor x = rand({4096, 784});
  const auto ds = std::make_shared<data::TensorDataset>(std::vector<Tensor>{x});
  const auto order = data::permutation(4096, 3);
  const auto b = data::gather(*ds, order);
  const auto got = b.tensors[0].to_vector<float>();
  const auto src = x.to_vector<float>();
  for (size_t k = 0; k < order.size(); k += 97)
    for (size_t c = 0; c < 784; c += 101) ASSERT_EQ(got[k * 784 + c], src[static_cast<size_t>(order[k]) * 784 + c]);
}

TEST(DataLoader, PrefetchRunsAheadAndStopsMidEpoch) {
  const auto ds = rows_dataset(200);
  data::LoaderOptions o;
  o.batching.batch_size = 10;
  o.prefetch = 3;
  const data::DataLoader loader(ds, o);
  auto it = loader.epoch();
  ASSERT_TRUE(it->next().has_value());
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (it->produced() < 4 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_EQ(it->produced(), 4);  // one taken, three waiting in the bounded queue, no more
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(it->produced(), 4);
  it.reset();  // destroying mid-epoch stops and joins the producer
  auto again = loader.epoch();
  again->close();
  EXPECT_FALSE(again->next().has_value());
}

TEST(DataLoader, ProducerErrorsReachTheConsumerAfterEarlierBatches) {
  const auto ds = rows_dataset(20);
  // An out-of-range index in the third batch makes the producer throw while gathering it.
  std::vector<std::vector<int64_t>> batches{{0, 1}, {2, 3}, {4, 99}, {5, 6}};
  data::EpochIterator it(ds, batches, 2, Device{});
  EXPECT_TRUE(it.next().has_value());
  EXPECT_TRUE(it.next().has_value());
  EXPECT_THROW(it.next(), IndexError);
  EXPECT_FALSE(it.next().has_value());
}

TEST(DataLoader, CudaTargetWithoutCudaIsRefused) {
  if (cuda::is_available()) GTEST_SKIP() << "CUDA present: covered by the device tests";
  data::LoaderOptions o;
  o.device = Device(DeviceType::CUDA, 0);
  EXPECT_THROW(data::DataLoader(rows_dataset(4), o), DeviceUnavailableError);
}

TEST(DataLoader, CudaTargetGetsPinnedAsyncCopies) {
  if (!cuda::is_available()) GTEST_SKIP() << "CUDA not available";
  const auto ds = rows_dataset(300);
  data::LoaderOptions o;
  o.batching.batch_size = 32;
  o.shuffle = true;
  o.prefetch = 2;
  o.device = Device(DeviceType::CUDA, 0);
  const data::DataLoader loader(ds, o);
  Generator g(1);
  auto it = loader.epoch(&g);
  std::vector<int64_t> seen;
  while (auto b = it->next()) {
    ASSERT_EQ((*b)[0].device(), o.device);
    const auto x = to_device((*b)[0], Device{}).to_vector<float>();
    const auto y = to_device((*b)[1], Device{}).to_vector<int64_t>();
    for (size_t k = 0; k < y.size(); ++k) ASSERT_EQ(x[k * 3], static_cast<float>(3 * y[k]));
    seen.insert(seen.end(), y.begin(), y.end());
  }
  std::sort(seen.begin(), seen.end());
  ASSERT_EQ(seen.size(), 300u);
  for (int64_t i = 0; i < 300; ++i) ASSERT_EQ(seen[i], i);
}
