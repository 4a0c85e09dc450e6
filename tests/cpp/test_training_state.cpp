// Checkpoint and resume (io/training_state.h): a resumed run continues exactly like an uninterrupted
// one; a failed load leaves model, optimizer and scheduler unchanged; the file is st.save's layout.
#include <gtest/gtest.h>

#include <map>

#include "spiraltorch/io/safetensors.h"
#include "spiraltorch/io/structure.h"
#include "spiraltorch/io/training_state.h"
#include "spiraltorch/nn/activation.h"
#include "spiraltorch/nn/linear.h"
#include "spiraltorch/nn/loss.h"
#include "spiraltorch/nn/sequential.h"
#include "spiraltorch/optim/adam.h"
#include "spiraltorch/optim/lr_scheduler.h"
#include "spiraltorch/optim/sgd.h"
#include "spiraltorch/spiraltorch.h"
#include "temp_dir.h"

using namespace st;

namespace {

struct Training {
  std::shared_ptr<nn::Sequential> model;
  std::shared_ptr<optim::Adam> optimizer;
  std::unique_ptr<optim::StepLR> scheduler;

  explicit Training(uint64_t seed) {
    manual_seed(seed);
    model = std::make_shared<nn::Sequential>(std::make_shared<nn::Linear>(4, 8), std::make_shared<nn::ReLU>(),
                                             std::make_shared<nn::Linear>(8, 3));
    optimizer = std::make_shared<optim::Adam>(std::vector<optim::ParamGroup>{{model->parameters(), {}}}, 0.01);
    scheduler = std::make_unique<optim::StepLR>(optimizer, 2, 0.5);
  }
  // One epoch of three full-batch steps on fixed data, then a schedule step.
  void epoch() {
    manual_seed(99);
    const Tensor x = randn({16, 4});
    const Tensor y = Tensor::from_vector<int64_t>({0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2, 0}, {16});
    for (int i = 0; i < 3; ++i) {
      optimizer->zero_grad();
      nn::cross_entropy(model->forward(x), y).backward();
      optimizer->step();
    }
    scheduler->step();
  }
  std::vector<float> weights() const {
    std::vector<float> out;
    for (const Tensor& p : model->parameters()) {
      const auto v = p.to_vector<float>();
      out.insert(out.end(), v.begin(), v.end());
    }
    return out;
  }
};

}  // namespace

TEST(Sequential, VariadicConstructorKeysLayersByIndex) {
  nn::Sequential net(std::make_shared<nn::Linear>(2, 3), std::make_shared<nn::ReLU>(),
                     std::make_shared<nn::Linear>(3, 1));
  EXPECT_EQ(net.size(), 3u);
  const nn::StateDict sd = net.state_dict();
  ASSERT_EQ(sd.size(), 4u);
  EXPECT_EQ(sd[0].first, "0::weight");
  EXPECT_EQ(sd[3].first, "2::bias");
}

TEST(TrainingState, ResumedRunMatchesUninterruptedRun) {
  st::testing::TempDir dir;
  const std::string path = dir / "run.safetensors";
  Training straight(7);
  for (int e = 0; e < 4; ++e) straight.epoch();

  Training first(7);
  first.epoch();
  first.epoch();
  first.epoch();  // the schedule has halved the rate once
  io::save_training_state(path, *first.model, *first.optimizer, first.scheduler.get(), {{"epoch", 3}, {"step", 9}});

  Training resumed(123);  // other initial weights: everything must come from the file
  const io::Progress p = io::load_training_state(path, *resumed.model, *resumed.optimizer, resumed.scheduler.get());
  EXPECT_EQ(p, (io::Progress{{"epoch", 3}, {"step", 9}}));
  EXPECT_EQ(resumed.weights(), first.weights());
  EXPECT_EQ(resumed.scheduler->last_epoch(), 3);
  EXPECT_DOUBLE_EQ(resumed.optimizer->param_groups()[0]->get("lr"), 0.005);
  EXPECT_EQ(resumed.optimizer->state_of(resumed.model->parameters()[0])->step, 9);
  resumed.epoch();
  EXPECT_EQ(resumed.weights(), straight.weights());
  EXPECT_DOUBLE_EQ(resumed.scheduler->get_last_lr()[0], straight.scheduler->get_last_lr()[0]);
}

TEST(TrainingState, FileIsStSaveLayout) {
  st::testing::TempDir dir;
  const std::string path = dir / "run.safetensors";
  Training run(1);
  run.epoch();
  io::save_training_state(path, *run.model, *run.optimizer, run.scheduler.get(), {{"epoch", 1}});
  const io::Checkpoint file = io::load_safetensors(path);
  std::map<std::string, uint64_t> keys;  // key -> byte size
  for (const auto& [k, t] : file.tensors) keys[k] = static_cast<uint64_t>(t.numel()) * t.itemsize();
  EXPECT_TRUE(keys.count("model/0::weight"));
  EXPECT_TRUE(keys.count("optimizer/0/exp_avg"));
  EXPECT_TRUE(keys.count("optimizer/3/exp_avg_sq"));
  const io::Structure root = io::decode_structure(file.metadata.at(io::kStructureMetadataKey), keys);
  ASSERT_EQ(root.kind, io::Structure::Kind::Dict);
  std::vector<std::string> top;
  for (const auto& [k, v] : root.entries) top.push_back(k.text);
  EXPECT_EQ(top, (std::vector<std::string>{"model", "optimizer", "scheduler", "progress"}));
}

TEST(TrainingState, FailedLoadChangesNothing) {
  st::testing::TempDir dir;
  const std::string path = dir / "run.safetensors";
  Training saved(1);
  saved.epoch();
  io::save_training_state(path, *saved.model, *saved.optimizer, saved.scheduler.get());

  Training other(2);
  const std::vector<float> before = other.weights();
  // A model with other shapes: refused by the model's strict load.
  auto wide = std::make_shared<nn::Sequential>(std::make_shared<nn::Linear>(4, 9), std::make_shared<nn::ReLU>(),
                                               std::make_shared<nn::Linear>(9, 3));
  EXPECT_THROW(io::load_training_state(path, *wide, *other.optimizer, other.scheduler.get()), CheckpointError);
  // An SGD's state does not load into an Adam.
  auto sgd = std::make_shared<optim::SGD>(std::vector<optim::ParamGroup>{{saved.model->parameters(), {}}}, 0.1, 0.9);
  io::save_training_state(dir / "sgd.safetensors", *saved.model, *sgd);
  EXPECT_THROW(io::load_training_state(dir / "sgd.safetensors", *other.model, *other.optimizer), CheckpointError);
  EXPECT_EQ(other.weights(), before);
  // An Adam of two groups does not fit one of one group: its load fails after the model's, which is put back.
  const std::vector<Tensor> ps = saved.model->parameters();
  optim::Adam two({optim::ParamGroup{{ps[0], ps[1]}, {}}, optim::ParamGroup{{ps[2], ps[3]}, {}}});
  io::save_training_state(dir / "two.safetensors", *saved.model, two);
  EXPECT_THROW(io::load_training_state(dir / "two.safetensors", *other.model, *other.optimizer), CheckpointError);
  EXPECT_EQ(other.weights(), before);
  // A file without a scheduler, loaded with one: refused, nothing changed.
  EXPECT_THROW(io::load_training_state(dir / "sgd.safetensors", *other.model, *sgd, other.scheduler.get()),
               CheckpointError);
  EXPECT_EQ(other.weights(), before);
  EXPECT_EQ(other.optimizer->state_of(other.model->parameters()[0]), nullptr);
  // A plain safetensors file is no training state.
  io::save_safetensors(dir / "plain.safetensors", saved.model->state_dict());
  EXPECT_THROW(io::load_training_state(dir / "plain.safetensors", *other.model, *other.optimizer), CheckpointError);
  EXPECT_EQ(other.weights(), before);
}
