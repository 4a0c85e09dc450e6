// JSONL traces: the writer's lines, the reader, and the traces of AmegagradSession and ModuleTrainer.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>

#include "spiraltorch/io/trace.h"
#include "spiraltorch/nn/linear.h"
#include "spiraltorch/spiraltorch.h"
#include "spiraltorch/train/module_trainer.h"
#include "spiraltorch/zspace/session.h"
#include "temp_dir.h"

using namespace st;

TEST(Trace, LineCarriesSchemaVersionAndNullForNonFinite) {
  io::TraceEvent e;
  e.event = "step";
  e.timestamp = 12.5;
  e.step = 3;
  e.metrics = {{"b.loss", 0.5}, {"a.bad", std::numeric_limits<double>::quiet_NaN()}};
  EXPECT_EQ(io::trace_line(e, "Test"),
            "{\"schema\":\"spiraltorch.trace\",\"version\":1,\"event\":\"step\",\"source\":\"Test\","
            "\"timestamp\":12.5,\"step\":3,\"metrics\":{\"b.loss\":0.5,\"a.bad\":null}}");
}

TEST(Trace, WriterAndReaderRoundTrip) {
  st::testing::TempDir dir;
  const std::string path = dir / "t.jsonl";
  {
    io::TraceWriter w(path, "Test");
    w.write({"run_start", 1.0, std::nullopt, std::nullopt, {}, {{"lr", 0.1}}, {"hello"}});
    w.write({"step", 2.0, 1, 1, {{"x.loss", 1.5}, {"x.nan", NAN}}, {}, {}});
    EXPECT_EQ(w.events_written(), 2);
    EXPECT_THROW(w.write({}), ValueError);
  }
  const auto events = io::read_trace(path);
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].event, "run_start");
  EXPECT_EQ(events[0].config[0].first, "lr");
  EXPECT_EQ(events[0].notes, std::vector<std::string>{"hello"});
  EXPECT_EQ(*events[1].step, 1);
  EXPECT_EQ(events[1].timestamp, 2.0);
  ASSERT_EQ(events[1].metrics.size(), 2u);
  // Append mode keeps what is there.
  {
    io::TraceWriter(path, "Test", io::TraceMode::Append).write({"eval", 3.0, {}, {}, {}, {}, {}});
  }
  EXPECT_EQ(io::read_trace(path).size(), 3u);
  // A line from a newer schema version, or not of this schema, is refused with its line number.
  {
    std::ofstream(path, std::ios::app) << "{\"schema\":\"spiraltorch.trace\",\"version\":99,\"event\":\"step\"}\n";
  }
  try {
    io::read_trace(path);
    FAIL();
  } catch (const CheckpointError& err) {
    EXPECT_NE(std::string(err.what()).find("line 4"), std::string::npos) << err.what();
  }
  EXPECT_THROW(io::TraceWriter(dir / "missing/t.jsonl", "Test"), SpiralError);
}

TEST(Trace, AmegagradSessionWritesRunStartAndSteps) {
  st::testing::TempDir dir;
  zspace::AmegagradSession::Options o;
  o.trace = std::make_shared<io::TraceWriter>(dir / "s.jsonl", "AmegagradSession");
  zspace::AmegagradSession s(1, 3, o);
  for (int i = 0; i < 3; ++i) s.step_wave(Tensor::from_vector<double>({0.4, -0.6, 0.2 * i}, {1, 3}));
  const auto events = io::read_trace(dir / "s.jsonl");
  ASSERT_EQ(events.size(), 4u);
  EXPECT_EQ(events[0].event, "run_start");
  EXPECT_EQ(events[3].event, "step");
  EXPECT_EQ(*events[3].step, 3);
  bool has_zloss = false;
  for (const auto& [k, v] : events[3].metrics) has_zloss |= k == "zspace.loss" && std::isfinite(v);
  EXPECT_TRUE(has_zloss);
  EXPECT_EQ(s.trace_errors(), 0);
}

TEST(Trace, ModuleTrainerWritesStepsAndEpochs) {
  st::testing::TempDir dir;
  train::ModuleTrainer trainer("cpu", -1.0, 1e-2, 1e-1);
  trainer.set_trace(std::make_shared<io::TraceWriter>(dir / "m.jsonl", "ModuleTrainer"));
  const auto schedule = trainer.roundtable(4, 1, train::RoundtableConfig{1, 1, 1, 1e-5});
  manual_seed(0);
  nn::Linear model(3, 1);
  const Tensor x = rand({4, 3}), y = rand({4, 1});
  auto loss = [](const Tensor& p, const Tensor& t) { return mean(square(sub(p, t))); };
  for (int epoch = 0; epoch < 2; ++epoch) {
    int given = 0;
    trainer.train_epoch(model, loss, [&](Tensor& xi, Tensor& yi) {
      if (given == 2) return false;
      xi = x, yi = y, ++given;
      return true;
    }, schedule);
  }
  const auto events = io::read_trace(dir / "m.jsonl");
  ASSERT_EQ(events.size(), 6u);  // (2 steps + 1 epoch) x 2
  EXPECT_EQ(events[2].event, "epoch");
  EXPECT_EQ(*events[4].step, 4);
  EXPECT_EQ(*events[4].epoch, 2);
  double first = NAN, last = NAN;
  for (const auto& [k, v] : events[0].metrics)
    if (k == "trainer.loss") first = v;
  for (const auto& [k, v] : events[4].metrics)
    if (k == "trainer.loss") last = v;
  EXPECT_LT(last, first);
}

TEST(Trace, FileAppearsWithTheFirstEventAndRefusedSessionsLeaveNone) {
  st::testing::TempDir dir;
  const std::string path = dir / "late.jsonl";
  auto writer = std::make_shared<io::TraceWriter>(path, "AmegagradSession");
  EXPECT_FALSE(std::filesystem::exists(path));
  zspace::AmegagradSession::Options o;
  o.trace = writer;
  o.telemetry_bound = -1;  // refused by the constructor
  EXPECT_THROW(zspace::AmegagradSession(1, 2, o), ValueError);
  EXPECT_FALSE(std::filesystem::exists(path));
  EXPECT_THROW(io::TraceWriter(dir.path.string(), "X"), ValueError);  // a directory
}
