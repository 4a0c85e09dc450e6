// The event bus: ordering, ids, failures, and TensorOp events from built-in ops.
#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
#include <thread>
#include <string>
#include <vector>

#include "spiraltorch/ops.h"
#include "spiraltorch/runtime/events.h"

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
  const uint64_t b = ev::subscribe("Ping", [&](const ev::Event& e) {
    seen.push_back("ping:" + std::get<std::string>(*e.find("payload")));
  });
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
