// The event bus: ordering, ids, failures, and TensorOp events from built-in ops.
#include <gtest/gtest.h>

#include <atomic>
#include <limits>
#include <stdexcept>
#include <thread>
#include <string>
#include <vector>

#include "spiraltorch/nn/linear.h"
#include "spiraltorch/ops.h"
#include "spiraltorch/runtime/events.h"
#include "spiraltorch/train/module_trainer.h"

using namespace st;
namespace ev = st::events;

namespace {
struct BusGuard {  // every test starts and ends with an empty bus
  BusGuard() { ev::clear(); }
  ~BusGuard() { ev::clear(); }
};
}  // namespace

TEST(EventBus, SpecificListenersFirstThenWildcard) {
  const BusGuard guard;
  std::vector<std::string> seen;
  const uint64_t a = ev::subscribe("*", [&](const ev::Event& e) { seen.push_back("wild:" + e.type); });
  const uint64_t b = ev::subscribe(
      "Ping", [&](const ev::Event& e) { seen.push_back("ping:" + std::get<std::string>(*e.find("payload"))); });
  EXPECT_EQ(b, a + 1);
  const ev::PublishReport r = ev::publish({"Ping", {{"payload", std::string("x")}}});
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(r.matched, 2u);
  EXPECT_EQ(r.delivered, 2u);
  EXPECT_EQ(seen, (std::vector<std::string>{"ping:x", "wild:Ping"}));
  EXPECT_TRUE(ev::has_listeners("Other"));  // through the wildcard
  EXPECT_TRUE(ev::unsubscribe("Ping", b));
  EXPECT_FALSE(ev::unsubscribe("Ping", b));
  EXPECT_EQ(ev::publish({"*", {}}).matched, 1u);  // a "*" event reaches the wildcard once
  EXPECT_EQ(ev::clear(), 1u);
  EXPECT_FALSE(ev::has_listeners("Other"));
}

TEST(EventBus, FailingListenerIsReportedAndOthersRun) {
  const BusGuard guard;
  int ran = 0;
  const uint64_t bad = ev::subscribe("Ping", [](const ev::Event&) { throw std::runtime_error("boom"); });
  ev::subscribe("Ping", [&](const ev::Event&) { ++ran; });
  const ev::PublishReport r = ev::publish({"Ping", {}});
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.delivered, 1u);
  ASSERT_EQ(r.failures.size(), 1u);
  EXPECT_EQ(r.failures[0].subscription_id, bad);
  EXPECT_EQ(r.failures[0].message, "boom");
  EXPECT_EQ(ran, 1);
  EXPECT_THROW(ev::subscribe("", [](const ev::Event&) {}), ValueError);
}

TEST(EventBus, ListenerMayUnsubscribeItselfDuringDispatch) {
  const BusGuard guard;
  int calls = 0;
  uint64_t id = 0;
  id = ev::subscribe("Tick", [&](const ev::Event&) {
    ++calls;
    ev::unsubscribe("Tick", id);
  });
  ev::publish({"Tick", {}});
  ev::publish({"Tick", {}});
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(ev::listener_count(), 0u);
}

TEST(EventBus, BuiltInOpsPublishTensorOpOnlyWhenListened) {
  const BusGuard guard;
  EXPECT_FALSE(ev::tensor_op_listened());
  std::vector<std::string> names;
  std::vector<std::vector<int64_t>> outs;
  const uint64_t id = ev::subscribe("TensorOp", [&](const ev::Event& e) {
    names.push_back(std::get<std::string>(*e.find("op_name")));
    outs.push_back(std::get<std::vector<int64_t>>(*e.find("output_shape")));
    // An op run by a listener does not announce itself (no recursion).
    (void)add(ones({1}), ones({1}));
  });
  EXPECT_TRUE(ev::tensor_op_listened());
  const Tensor a = ones({2, 3}), b = ones({3, 4});
  const Tensor c = add(a, a, 2.0);  // one event: the scaling multiply is part of add
  const Tensor d = matmul(a, b);
  const Tensor e = sum(d);
  (void)exp(c);
  EXPECT_EQ(names, (std::vector<std::string>{"add", "matmul", "sum", "exp"}));
  EXPECT_EQ(outs[1], (std::vector<int64_t>{2, 4}));
  EXPECT_TRUE(outs[2].empty());
  EXPECT_TRUE(ev::unsubscribe("TensorOp", id));
  EXPECT_FALSE(ev::tensor_op_listened());
  (void)add(a, a);
  EXPECT_EQ(names.size(), 4u);
  // A wildcard listener also hears ops.
  int wild = 0;
  ev::subscribe("*", [&](const ev::Event&) { ++wild; });
  (void)mul(a, a);
  EXPECT_EQ(wild, 1);
}

TEST(EventBus, ConcurrentPublishAndSubscribe) {
  const BusGuard guard;
  std::atomic<long> delivered{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 500; ++i) {
        const std::string type = "T" + std::to_string(t);
        const uint64_t id = ev::subscribe(type, [&](const ev::Event&) { delivered.fetch_add(1); });
        EXPECT_EQ(ev::publish({type, {}}).delivered, 1u);  // its own listener, nobody else's
        EXPECT_TRUE(ev::unsubscribe(type, id));
        (void)add(ones({2}), ones({2}));  // ops race with the TensorOp counter changing
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(delivered.load(), 2000);
  EXPECT_EQ(ev::listener_count(), 0u);
  EXPECT_FALSE(ev::tensor_op_listened());
}

TEST(EventBus, ModuleTrainerPublishesTrainerStepPerBatch) {
  const BusGuard guard;
  train::ModuleTrainer trainer("cpu", -1.0, 1e-2, 1e-1);
  const auto schedule = trainer.roundtable(4, 1, train::RoundtableConfig{1, 1, 1, 1e-5});
  manual_seed(0);
  nn::Linear model(3, 1);
  const Tensor x = rand({4, 3}), y = rand({4, 1});
  auto loss = [](const Tensor& p, const Tensor& t) { return mean(square(sub(p, t))); };
  int given = 0;
  auto batches = [&](Tensor& xi, Tensor& yi) {
    if (given == 2) return false;
    xi = x, yi = y, ++given;
    return true;
  };
  trainer.train_epoch(model, loss, batches, schedule);  // nobody listens: nothing published, steps counted
  EXPECT_EQ(trainer.steps(), 2);
  std::vector<ev::Event> seen;
  const uint64_t id = ev::subscribe(train::ModuleTrainer::kStepEvent, [&](const ev::Event& e) { seen.push_back(e); });
  given = 0;
  const train::EpochStats stats = trainer.train_epoch(model, loss, batches, schedule);
  EXPECT_TRUE(ev::unsubscribe(train::ModuleTrainer::kStepEvent, id));
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0].type, "TrainerStep");
  EXPECT_EQ(std::get<int64_t>(*seen[0].find("epoch")), 2);
  EXPECT_EQ(std::get<int64_t>(*seen[0].find("step")), 3);
  EXPECT_EQ(std::get<int64_t>(*seen[1].find("step")), 4);
  EXPECT_EQ(std::get<int64_t>(*seen[1].find("samples")), 4);
  EXPECT_FALSE(std::get<bool>(*seen[1].find("skipped")));
  ASSERT_NE(seen[1].find("band_above"), nullptr);
  EXPECT_EQ(std::get<double>(*seen[1].find("lr_scale")), 1.0);
  const double l0 = std::get<double>(*seen[0].find("loss")), l1 = std::get<double>(*seen[1].find("loss"));
  EXPECT_DOUBLE_EQ(stats.total_loss, l0 + l1);
  EXPECT_LT(l1, l0);
  EXPECT_EQ(trainer.steps(), 4);
}

TEST(EventBus, ModuleTrainerReportsASkippedBatch) {
  const BusGuard guard;
  train::ModuleTrainer trainer("cpu", -1.0, 1e-2, 1e-1);
  const auto schedule = trainer.roundtable(2, 1, train::RoundtableConfig{1, 1, 1, 1e-5});
  nn::Linear model(3, 1);
  std::vector<ev::Event> seen;
  ev::subscribe("TrainerStep", [&](const ev::Event& e) { seen.push_back(e); });
  bool given = false;
  const auto stats = trainer.train_epoch(model, [](const Tensor& p, const Tensor&) {
    return mul(sum(p), std::numeric_limits<double>::quiet_NaN());
  }, [&](Tensor& xi, Tensor& yi) {
    if (given) return false;
    xi = rand({2, 3}), yi = rand({2, 1}), given = true;
    return true;
  }, schedule);
  EXPECT_EQ(stats.skipped_steps, 1);
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_TRUE(std::get<bool>(*seen[0].find("skipped")));
  EXPECT_EQ(seen[0].find("band_above"), nullptr);
  EXPECT_EQ(std::get<int64_t>(*seen[0].find("samples")), 2);
}
