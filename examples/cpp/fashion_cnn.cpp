// A small CNN trained on Fashion-MNIST from C++ alone: the IDX dataset and a shuffling DataLoader,
// nn modules, Adam with a step learning-rate schedule, a checkpoint after every epoch (--resume
// continues from it) and evaluation on the test set. bench/fashion_cnn_libtorch.cpp is the same
// program written against libtorch's C++ frontend.
//
//   example_fashion_cnn [--data DIR] [--epochs N] [--checkpoint FILE] [--resume] [--limit N]
//
// --limit trains on the first N training images only (a quick run). CPU threads: OMP_NUM_THREADS.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "spiraltorch/data/idx.h"
#include "spiraltorch/data/loader.h"
#include "spiraltorch/io/training_state.h"
#include "spiraltorch/nn/activation.h"
#include "spiraltorch/nn/conv.h"
#include "spiraltorch/nn/flatten.h"
#include "spiraltorch/nn/linear.h"
#include "spiraltorch/nn/loss.h"
#include "spiraltorch/nn/sequential.h"
#include "spiraltorch/optim/adam.h"
#include "spiraltorch/optim/lr_scheduler.h"
#include "spiraltorch/spiraltorch.h"

using namespace st;
using std::make_shared;

// Share of test images the model classifies correctly.
double evaluate(nn::Module& model, const data::DataLoader& loader) {
  model.eval();
  NoGradGuard no_grad;
  int64_t correct = 0, total = 0;
  auto batches = loader.epoch();
  while (auto batch = batches->next()) {
    const Tensor& images = (*batch)[0];
    const Tensor& labels = (*batch)[1];
    correct += static_cast<int64_t>(sum(eq(argmax(model(images), 1), labels)).item());
    total += labels.size(0);
  }
  model.train();
  return static_cast<double>(correct) / static_cast<double>(total);
}

int main(int argc, char** argv) {
  std::string data_dir = "/usr/share/datasets/fashion-mnist", checkpoint = "fashion_cnn.safetensors";
  int64_t epochs = 3, limit = 0;
  bool resume = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool has_value = i + 1 < argc;
    if (arg == "--data" && has_value)
      data_dir = argv[++i];
    else if (arg == "--epochs" && has_value)
      epochs = std::atoll(argv[++i]);
    else if (arg == "--checkpoint" && has_value)
      checkpoint = argv[++i];
    else if (arg == "--limit" && has_value)
      limit = std::atoll(argv[++i]);
    else if (arg == "--resume")
      resume = true;
    else {
      std::fprintf(stderr, "usage: %s [--data DIR] [--epochs N] [--checkpoint FILE] [--resume] [--limit N]\n", argv[0]);
      return 2;
    }
  }
  manual_seed(0);  // initial weights

  // Data: (N, 1, 28, 28) float32 images in [0, 1] and int64 labels.
  data::ImageSplit train = data::load_fashion_mnist(data_dir, "train");
  const data::ImageSplit test = data::load_fashion_mnist(data_dir, "test");
  if (limit > 0 && limit < train.images.size(0)) {
    train.images = narrow(train.images, 0, 0, limit);
    train.labels = narrow(train.labels, 0, 0, limit);
  }
  const data::DataLoader train_loader(make_shared<data::TensorDataset>(std::vector<Tensor>{train.images, train.labels}),
                                      {.batching = {.batch_size = 64}, .shuffle = true});
  const data::DataLoader test_loader(make_shared<data::TensorDataset>(std::vector<Tensor>{test.images, test.labels}),
                                     {.batching = {.batch_size = 1000}});

  // Model: two conv blocks and a two-layer classifier head.
  auto model = make_shared<nn::Sequential>(
      make_shared<nn::Conv2d>(1, 32, nn::Pair{3, 3}, nn::Pair{1, 1}, nn::Pair{1, 1}), make_shared<nn::ReLU>(),
      make_shared<nn::MaxPool2d>(nn::Pair{2, 2}),
      make_shared<nn::Conv2d>(32, 64, nn::Pair{3, 3}, nn::Pair{1, 1}, nn::Pair{1, 1}), make_shared<nn::ReLU>(),
      make_shared<nn::MaxPool2d>(nn::Pair{2, 2}), make_shared<nn::Flatten>(), make_shared<nn::Linear>(64 * 7 * 7, 128),
      make_shared<nn::ReLU>(), make_shared<nn::Linear>(128, 10));
  auto optimizer = make_shared<optim::Adam>(std::vector<optim::ParamGroup>{{model->parameters(), {}}}, 1e-3);
  optim::StepLR scheduler(optimizer, /*step_size=*/2, /*gamma=*/0.1);  // lr / 10 after two epochs
  nn::CategoricalCrossEntropy loss_fn;

  int64_t start_epoch = 0;
  if (resume) {
    start_epoch = io::load_training_state(checkpoint, *model, *optimizer, &scheduler).at("epoch");
    std::printf("resumed from %s after epoch %lld\n", checkpoint.c_str(), static_cast<long long>(start_epoch));
  }

  for (int64_t epoch = start_epoch; epoch < epochs; ++epoch) {
    const auto start = std::chrono::steady_clock::now();
    Generator order(1000 + epoch);  // the shuffle depends on the epoch alone, so a resumed run sees the same
    auto batches = train_loader.epoch(&order);
    double loss_sum = 0;
    int64_t steps = 0;
    while (auto batch = batches->next()) {
      optimizer->zero_grad();
      Tensor loss = loss_fn(model->forward((*batch)[0]), (*batch)[1]);
      loss.backward();
      optimizer->step();
      loss_sum += loss.item();
      ++steps;
    }
    const double lr = scheduler.get_last_lr()[0];
    scheduler.step();
    const double train_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const double accuracy = evaluate(*model, test_loader);
    io::save_training_state(checkpoint, *model, *optimizer, &scheduler, {{"epoch", epoch + 1}});
    std::printf("epoch %lld  lr %.0e  loss %.4f  test accuracy %.4f  train %.2f s\n", static_cast<long long>(epoch + 1),
                lr, loss_sum / static_cast<double>(steps), accuracy, train_s);
    std::fflush(stdout);
  }
  const double accuracy = evaluate(*model, test_loader);
  std::printf("final test accuracy %.4f\n", accuracy);
  return 0;
}
