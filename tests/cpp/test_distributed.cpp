// Distributed parts testable in one process: post-accumulate-grad hooks and backward-end
// callbacks of the autograd engine, the DDP reducer's bucketing and launch order (on a
// world-size-1 group that records what it is asked to do), the sampler's shards, and the MPI
// backend with world size 1 when the build has MPI.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "runtime/distributed_backends.h"
#include "spiraltorch/data/sampler.h"
#include "spiraltorch/nn/activation.h"
#include "spiraltorch/nn/linear.h"
#include "spiraltorch/nn/sequential.h"
#include "spiraltorch/runtime/ddp.h"
#include "spiraltorch/spiraltorch.h"

using namespace st;
namespace dist = st::distributed;

namespace {

class DoneWork : public dist::Work {
 public:
  void wait() override {}
  bool is_completed() override { return true; }
};

// World size 1: every collective's result is its input, so the group completes each operation
// at once and records its name, size and whether a backward pass was running at issue time.
class RecordingGroup : public dist::ProcessGroup {
 public:
  struct Call {
    std::string op;
    int64_t numel;
    bool in_backward;
  };
  RecordingGroup() : ProcessGroup(0, 1, std::chrono::seconds(5)) {}
  std::string backend() const override { return "recording"; }
  std::shared_ptr<dist::Work> barrier() override { return log("barrier", 0); }
  std::shared_ptr<dist::Work> all_reduce(Tensor& t, dist::ReduceOp op) override {
    return log(std::string("all_reduce_") + dist::reduce_op_name(op), t.numel());
  }
  std::shared_ptr<dist::Work> broadcast(Tensor& t, int) override { return log("broadcast", t.numel()); }
  std::shared_ptr<dist::Work> all_gather(Tensor& out, const Tensor& in) override {
    copy_(out, in);
    return log("all_gather", in.numel());
  }
  std::shared_ptr<dist::Work> reduce_scatter(Tensor& out, const Tensor& in, dist::ReduceOp) override {
    copy_(out, in);
    return log("reduce_scatter", in.numel());
  }
  std::vector<Call> calls;

 private:
  std::shared_ptr<dist::Work> log(std::string op, int64_t n) {
    calls.push_back({std::move(op), n, backward_running()});
    return std::make_shared<DoneWork>();
  }
};

std::shared_ptr<nn::Sequential> mlp() {
  manual_seed(11);
  auto m = std::make_shared<nn::Sequential>();
  m->add(std::make_shared<nn::Linear>(6, 5));  // weight 30, bias 5
  m->add(std::make_shared<nn::ReLU>());
  m->add(std::make_shared<nn::Linear>(5, 4));  // weight 20, bias 4
  return m;
}

}  // namespace

TEST(DistributedHooks, PostAccumulateHookSeesTheFullGradientOncePerBackward) {
  Tensor w = Tensor::from_vector<double>({1.0, 2.0, 3.0}, {3});
  w.set_requires_grad(true);
  std::vector<std::vector<double>> seen;
  const int64_t id = register_post_accumulate_grad_hook(
      w, [&](const Tensor& leaf) { seen.push_back(leaf.grad().to_vector<double>()); });
  // w is used twice: the hook runs once, after both contributions (2w + 3 per element).
  sum(add(mul(w, w), mul(w, 3.0))).backward();
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0], (std::vector<double>{5.0, 7.0, 9.0}));
  // A second backward accumulates: the hook sees the running .grad.
  sum(w).backward();
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[1], (std::vector<double>{6.0, 8.0, 10.0}));
  // autograd::grad accumulates nothing, so no hook runs.
  (void)st::grad({sum(w)}, {w});
  EXPECT_EQ(seen.size(), 2u);
  remove_post_accumulate_grad_hook(id);
  sum(w).backward();
  EXPECT_EQ(seen.size(), 2u);
}

TEST(DistributedHooks, HookRunsOnlyWhenAGradientArrived) {
  Tensor a = Tensor::from_vector<double>({1.0, 2.0}, {2});
  Tensor b = Tensor::from_vector<double>({3.0, 4.0}, {2});
  a.set_requires_grad(true);
  b.set_requires_grad(true);
  int a_calls = 0, b_calls = 0;
  const int64_t ia = register_post_accumulate_grad_hook(a, [&](const Tensor&) { ++a_calls; });
  const int64_t ib = register_post_accumulate_grad_hook(b, [&](const Tensor&) { ++b_calls; });
  sum(mul(a, 2.0)).backward();
  EXPECT_EQ(a_calls, 1);
  EXPECT_EQ(b_calls, 0);
  remove_post_accumulate_grad_hook(ia);
  remove_post_accumulate_grad_hook(ib);
  remove_post_accumulate_grad_hook(123456789);  // unknown ids are ignored
}

TEST(DistributedHooks, BackwardCallbackRunsAfterEveryHookInQueueOrder) {
  Tensor w = Tensor::from_vector<double>({1.0, -1.0}, {2});
  w.set_requires_grad(true);
  std::vector<std::string> events;
  const int64_t id = register_post_accumulate_grad_hook(w, [&](const Tensor&) {
    events.push_back("hook");
    queue_backward_callback([&] {
      events.push_back("first");
      queue_backward_callback([&] { events.push_back("queued by first"); });
    });
    queue_backward_callback([&] { events.push_back("second"); });
  });
  sum(mul(w, w)).backward();
  EXPECT_EQ(events, (std::vector<std::string>{"hook", "first", "second", "queued by first"}));
  EXPECT_FALSE(backward_running());
  remove_post_accumulate_grad_hook(id);
}

TEST(DistributedHooks, ErrorsNameTheOperation) {
  Tensor plain = Tensor::from_vector<double>({1.0}, {1});
  try {
    register_post_accumulate_grad_hook(plain, [](const Tensor&) {});
    FAIL() << "expected an error";
  } catch (const SpiralError& e) {
    EXPECT_NE(std::string(e.what()).find("register_post_accumulate_grad_hook"), std::string::npos) << e.what();
  }
  EXPECT_THROW(queue_backward_callback([] {}), SpiralError);
}

TEST(DistributedReducer, BucketsFollowReverseRegistrationOrderUnderTheCap) {
  auto group = std::make_shared<RecordingGroup>();
  auto m = mlp();
  const std::vector<Tensor> params = m->parameters();  // w0 (30), b0 (5), w1 (20), b1 (4) in float32
  // 100 bytes = 25 floats: b1+w1 (24) fit one bucket, b0 starts a new one, w0 (30) fills one alone.
  dist::Reducer tight(params, group, 100.0 / (1024 * 1024));
  EXPECT_EQ(tight.bucket_indices(), (std::vector<std::vector<size_t>>{{3, 2}, {1}, {0}}));
  dist::Reducer roomy(params, group, 25.0);
  EXPECT_EQ(roomy.bucket_indices(), (std::vector<std::vector<size_t>>{{3, 2, 1, 0}}));
  EXPECT_THROW(dist::Reducer(params, group, 0.0), ValueError);
  EXPECT_THROW(dist::Reducer(params, nullptr, 1.0), SpiralError);
}

TEST(DistributedReducer, AllReducesEachBucketInOrderDuringBackward) {
  auto group = std::make_shared<RecordingGroup>();
  auto m = mlp();
  const std::vector<Tensor> params = m->parameters();
  dist::DistributedDataParallel ddp(m, group, 100.0 / (1024 * 1024));
  // Wrapping broadcasts the four parameters from rank 0.
  ASSERT_EQ(group->calls.size(), 4u);
  for (const auto& c : group->calls) EXPECT_EQ(c.op, "broadcast");
  group->calls.clear();

  manual_seed(5);
  const Tensor x = randn({3, 6});
  sum(ddp(x)).backward();
  // One averaging all-reduce per bucket, in bucket order, the buckets' sizes.
  ASSERT_EQ(group->calls.size(), 3u);
  const std::vector<int64_t> sizes{24, 5, 30};
  for (size_t b = 0; b < 3; ++b) {
    EXPECT_EQ(group->calls[b].op, "all_reduce_avg");
    EXPECT_EQ(group->calls[b].numel, sizes[b]);
    EXPECT_TRUE(group->calls[b].in_backward) << "bucket " << b << " was not launched during backward";
  }
  // Same gradients as without DDP (the average over one rank). The hooks sit on the
  // parameters, so the plain pass runs with synchronisation off.
  std::vector<std::vector<float>> with_ddp;
  for (const Tensor& p : params) with_ddp.push_back(p.grad().to_vector<float>());
  for (Tensor p : params) p.set_grad(Tensor());
  ddp.reducer().set_require_sync(false);
  sum((*m)(x)).backward();
  for (size_t i = 0; i < params.size(); ++i) EXPECT_EQ(with_ddp[i], params[i].grad().to_vector<float>()) << i;
  EXPECT_EQ(group->calls.size(), 3u);
  EXPECT_EQ(ddp.reducer().overlapped_buckets(), 3);
  EXPECT_EQ(ddp.reducer().synced_steps(), 1);
}

TEST(DistributedReducer, NoSyncKeepsGradientsLocalAndTheNextStepSendsTheSum) {
  auto group = std::make_shared<RecordingGroup>();
  auto m = mlp();
  const std::vector<Tensor> params = m->parameters();
  dist::DistributedDataParallel ddp(m, group);
  group->calls.clear();
  manual_seed(6);
  const Tensor x1 = randn({2, 6}), x2 = randn({2, 6});
  {
    dist::DistributedDataParallel::NoSync guard(ddp);
    EXPECT_FALSE(ddp.reducer().require_sync());
    sum(ddp(x1)).backward();
  }
  EXPECT_TRUE(ddp.reducer().require_sync());
  EXPECT_TRUE(group->calls.empty());
  EXPECT_EQ(ddp.reducer().synced_steps(), 0);
  sum(ddp(x2)).backward();
  ASSERT_EQ(group->calls.size(), 1u);  // one bucket under the default 25 MB
  EXPECT_EQ(group->calls[0].numel, 59);
  // The accumulated gradient of both passes.
  std::vector<std::vector<float>> got;
  for (const Tensor& p : params) got.push_back(p.grad().to_vector<float>());
  for (Tensor p : params) p.set_grad(Tensor());
  ddp.reducer().set_require_sync(false);
  sum((*m)(x1)).backward();
  sum((*m)(x2)).backward();
  for (size_t i = 0; i < params.size(); ++i) {
    const auto want = params[i].grad().to_vector<float>();
    for (size_t k = 0; k < want.size(); ++k) EXPECT_NEAR(got[i][k], want[k], 1e-6) << i << "," << k;
  }
}

TEST(DistributedReducer, ParameterWithoutGradientGetsZerosAfterSync) {
  auto group = std::make_shared<RecordingGroup>();
  auto m = mlp();
  const std::vector<Tensor> params = m->parameters();
  dist::DistributedDataParallel ddp(m, group);
  // A loss of the first layer's weight only: the others get no gradient from autograd, yet
  // every rank must send them (zeros), so afterwards they hold zero gradients.
  sum(mul(params[0], 2.0)).backward();
  EXPECT_EQ(group->calls.back().op, "all_reduce_avg");
  for (size_t i = 1; i < params.size(); ++i) {
    ASSERT_TRUE(params[i].grad().defined()) << i;
    for (float v : params[i].grad().to_vector<float>()) EXPECT_EQ(v, 0.0f);
  }
  for (float v : params[0].grad().to_vector<float>()) EXPECT_EQ(v, 2.0f);
}

TEST(DistributedReducer, FindUnusedParametersLeavesUnusedOnesWithoutGradient) {
  // The same step with find_unused_parameters: after the buckets, one all_reduce (max) of a
  // per-parameter "held a gradient" map; at world size 1 the unused parameters keep none.
  auto group = std::make_shared<RecordingGroup>();
  auto m = mlp();
  const std::vector<Tensor> params = m->parameters();
  dist::DistributedDataParallel ddp(m, group, 25.0, true, /*find_unused_parameters=*/true);
  EXPECT_TRUE(ddp.reducer().find_unused_parameters());
  sum(mul(params[0], 2.0)).backward();
  ASSERT_GE(group->calls.size(), 2u);
  EXPECT_EQ(group->calls.back().op, "all_reduce_max");
  EXPECT_EQ(group->calls.back().numel, static_cast<int64_t>(params.size()));
  for (size_t i = 1; i < params.size(); ++i) EXPECT_FALSE(params[i].grad().defined()) << i;
  for (float v : params[0].grad().to_vector<float>()) EXPECT_EQ(v, 2.0f);
}

TEST(DistributedSampler, ShardsCoverTheDatasetOncePerEpoch) {
  const auto r0 = data::distributed_shard(10, 0, 3, false, 0, 0, false);
  const auto r1 = data::distributed_shard(10, 1, 3, false, 0, 0, false);
  const auto r2 = data::distributed_shard(10, 2, 3, false, 0, 0, false);
  EXPECT_EQ(r0, (std::vector<int64_t>{0, 3, 6, 9}));
  EXPECT_EQ(r1, (std::vector<int64_t>{1, 4, 7, 0}));  // padded by wrapping around
  EXPECT_EQ(r2, (std::vector<int64_t>{2, 5, 8, 1}));
  EXPECT_EQ(data::distributed_shard(10, 2, 3, false, 0, 0, true), (std::vector<int64_t>{2, 5, 8}));
  // Shuffled: the union of the ranks' shards is a permutation, fixed by (seed, epoch).
  std::vector<int64_t> all;
  for (int r = 0; r < 2; ++r) {
    const auto s = data::distributed_shard(9, r, 2, true, 4, 1, true);
    EXPECT_EQ(s, data::distributed_shard(9, r, 2, true, 4, 1, true));
    all.insert(all.end(), s.begin(), s.end());
  }
  EXPECT_EQ(all.size(), 8u);
  std::sort(all.begin(), all.end());
  EXPECT_EQ(std::unique(all.begin(), all.end()), all.end());
  EXPECT_NE(data::distributed_shard(9, 0, 2, true, 4, 0, true), data::distributed_shard(9, 0, 2, true, 4, 1, true));
  EXPECT_THROW(data::distributed_shard(9, 2, 2, false, 0, 0, false), ValueError);
  EXPECT_THROW(data::distributed_shard(9, 0, 0, false, 0, 0, false), ValueError);
}

TEST(DistributedMpi, WorldSizeOneCollectives) {
  if (!dist::detail::mpi_unavailable_reason().empty()) {
    dist::GroupOptions o;
    o.backend = "mpi";
    EXPECT_THROW(dist::init_process_group(o), DeviceUnavailableError);
    GTEST_SKIP() << dist::detail::mpi_unavailable_reason();
  }
  dist::GroupOptions o;
  o.backend = "mpi";
  o.rank = 0;
  o.world_size = 1;
  o.timeout = std::chrono::seconds(30);
  dist::ProcessGroup& g = dist::init_process_group(o);
  EXPECT_EQ(g.size(), 1);
  EXPECT_EQ(g.rank(), 0);
  EXPECT_THROW(dist::init_process_group(o), SpiralError);  // one default group at a time
  Tensor t = Tensor::from_vector<float>({1.0f, -2.0f, 3.5f}, {3});
  dist::all_reduce(t, dist::ReduceOp::Avg);
  EXPECT_EQ(t.to_vector<float>(), (std::vector<float>{1.0f, -2.0f, 3.5f}));
  const Tensor gathered = dist::all_gather(Tensor::from_vector<float>({1.0f, 2.0f}, {1, 2}));
  EXPECT_EQ(gathered.shape(), (Shape{1, 2}));
  EXPECT_EQ(gathered.to_vector<float>(), (std::vector<float>{1.0f, 2.0f}));
  Tensor wrong = zeros({3, 2});
  EXPECT_THROW(g.all_gather(wrong, Tensor::from_vector<float>({1.0f, 2.0f}, {1, 2})), ShapeError);
  auto work = g.barrier();
  work->wait();
  EXPECT_TRUE(work->is_completed());
  dist::destroy_process_group();
  EXPECT_FALSE(dist::is_initialized());
}
