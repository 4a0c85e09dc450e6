// st::cuda::Graph: capture records without running, replay reruns on data copied into the
// static input; without CUDA every entry refuses with DeviceUnavailableError.
#include <gtest/gtest.h>

#include <vector>

#include "spiraltorch/cuda.h"
#include "spiraltorch/spiraltorch.h"

using namespace st;

TEST(CudaGraph, WithoutCudaRefusesClearly) {
  if (cuda::is_available()) GTEST_SKIP() << "CUDA present: covered by the capture test";
  cuda::Graph g;
  EXPECT_FALSE(cuda::is_current_stream_capturing());
  EXPECT_THROW(g.capture_begin(), DeviceUnavailableError);
  EXPECT_THROW(g.replay(), DeviceUnavailableError);
  EXPECT_FALSE(g.is_captured());
  EXPECT_EQ(g.num_nodes(), 0);
}

TEST(CudaGraph, ReplayRerunsCapturedWorkOnNewInputs) {
  if (!cuda::is_available()) GTEST_SKIP() << "CUDA not available";
  const Device gpu(DeviceType::CUDA, 0);
  Tensor x = to_device(Tensor::from_vector<float>({1, 2, 3, 4}, {4}), gpu);
  cuda::Graph g;
  EXPECT_THROW(g.replay(), SpiralError);
  g.capture_begin();
  EXPECT_TRUE(cuda::is_current_stream_capturing());
  const Tensor y = add(mul(x, 2.0), 1.0);
  g.capture_end();
  EXPECT_FALSE(cuda::is_current_stream_capturing());
  EXPECT_GE(g.num_nodes(), 2);
  EXPECT_THROW(g.capture_begin(), SpiralError);  // one capture per graph until reset()
  Tensor fresh = to_device(Tensor::from_vector<float>({10, 20, 30, 40}, {4}), gpu);
  copy_(x, fresh);
  g.replay();
  const Tensor host = to_device(y, Device(DeviceType::CPU, 0));
  const std::vector<float> expect{21, 41, 61, 81};
  for (int64_t i = 0; i < 4; ++i) EXPECT_FLOAT_EQ(host.data<float>()[i], expect[i]);
  g.reset();
  EXPECT_FALSE(g.is_captured());
}
