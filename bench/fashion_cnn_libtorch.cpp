// The libtorch twin of examples/cpp/fashion_cnn.cpp: the same CNN, hyper-parameters, learning-rate
// schedule, checkpoint/resume and evaluation, written as a user of libtorch's C++ frontend writes
// them. Built by bench/libtorch/CMakeLists.txt; bench/bench_fashion_cnn.sh runs both.
//
//   fashion_cnn_libtorch [--data DIR] [--epochs N] [--checkpoint FILE] [--resume] [--limit N]
//
// libtorch's MNIST dataset reads uncompressed IDX files: DIR holds Fashion-MNIST's files gunzipped.
// The learning rate is set in closed form each epoch (lr 1e-3, divided by 10 after two epochs, as
// the example's StepLR(2, 0.1)): libtorch's StepLR keeps no state to checkpoint and decays one
// step later than torch.optim.lr_scheduler.StepLR. CPU threads: OMP_NUM_THREADS.
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace nn = torch::nn;

// Share of test images the model classifies correctly.
template <typename Loader>
double evaluate(nn::Sequential& model, Loader& loader) {
  model->eval();
  torch::NoGradGuard no_grad;
  int64_t correct = 0, total = 0;
  for (const auto& batch : loader) {
    correct += model->forward(batch.data).argmax(1).eq(batch.target).sum().template item<int64_t>();
    total += batch.target.size(0);
  }
  model->train();
  return static_cast<double>(correct) / static_cast<double>(total);
}

int main(int argc, char** argv) {
  std::string data_dir = "fashion-mnist", checkpoint = "fashion_cnn_libtorch.pt";
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
  torch::manual_seed(0);  // initial weights

  // Data: (N, 1, 28, 28) float32 images in [0, 1] and int64 labels.
  using torch::data::datasets::MNIST;
  auto train_set = MNIST(data_dir, MNIST::Mode::kTrain).map(torch::data::transforms::Stack<>());
  auto test_set = MNIST(data_dir, MNIST::Mode::kTest).map(torch::data::transforms::Stack<>());
  const size_t train_size = limit > 0 ? std::min<size_t>(limit, *train_set.size()) : *train_set.size();
  auto train_loader =
      torch::data::make_data_loader(std::move(train_set), torch::data::samplers::RandomSampler(train_size), 64);
  auto test_loader = torch::data::make_data_loader<torch::data::samplers::SequentialSampler>(std::move(test_set), 1000);

  // Model: two conv blocks and a two-layer classifier head.
  nn::Sequential model(nn::Conv2d(nn::Conv2dOptions(1, 32, 3).padding(1)), nn::ReLU(), nn::MaxPool2d(2),
                       nn::Conv2d(nn::Conv2dOptions(32, 64, 3).padding(1)), nn::ReLU(), nn::MaxPool2d(2), nn::Flatten(),
                       nn::Linear(64 * 7 * 7, 128), nn::ReLU(), nn::Linear(128, 10));
  torch::optim::Adam optimizer(model->parameters(), torch::optim::AdamOptions(1e-3));
  nn::CrossEntropyLoss loss_fn;

  int64_t start_epoch = 0;
  if (resume) {
    torch::serialize::InputArchive archive, model_archive, optimizer_archive;
    archive.load_from(checkpoint);
    archive.read("model", model_archive);
    archive.read("optimizer", optimizer_archive);
    model->load(model_archive);
    optimizer.load(optimizer_archive);
    torch::Tensor epoch;
    archive.read("epoch", epoch);
    start_epoch = epoch.item<int64_t>();
    std::printf("resumed from %s after epoch %lld\n", checkpoint.c_str(), static_cast<long long>(start_epoch));
  }

  for (int64_t epoch = start_epoch; epoch < epochs; ++epoch) {
    const double lr = 1e-3 * std::pow(0.1, static_cast<double>(epoch / 2));  // lr / 10 after two epochs
    for (auto& group : optimizer.param_groups()) group.options().set_lr(lr);
    const auto start = std::chrono::steady_clock::now();
    torch::manual_seed(1000 + epoch);  // the shuffle depends on the epoch alone, so a resumed run sees the same
    double loss_sum = 0;
    int64_t steps = 0;
    for (auto& batch : *train_loader) {
      optimizer.zero_grad();
      torch::Tensor loss = loss_fn(model->forward(batch.data), batch.target);
      loss.backward();
      optimizer.step();
      loss_sum += loss.item<double>();
      ++steps;
    }
    const double train_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const double accuracy = evaluate(model, *test_loader);
    torch::serialize::OutputArchive archive, model_archive, optimizer_archive;
    model->save(model_archive);
    optimizer.save(optimizer_archive);
    archive.write("model", model_archive);
    archive.write("optimizer", optimizer_archive);
    archive.write("epoch", torch::tensor(epoch + 1));
    archive.save_to(checkpoint);
    std::printf("epoch %lld  lr %.0e  loss %.4f  test accuracy %.4f  train %.2f s\n", static_cast<long long>(epoch + 1),
                lr, loss_sum / static_cast<double>(steps), accuracy, train_s);
    std::fflush(stdout);
  }
  const double accuracy = evaluate(model, *test_loader);
  std::printf("final test accuracy %.4f\n", accuracy);
  return 0;
}
