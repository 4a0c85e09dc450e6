#pragma once
// A fixed-capacity ring buffer of transitions (obs, action, reward, next_obs, terminated) with
// uniform sampling, for off-policy agents such as DQN.
#include <cstdint>
#include <span>
#include <vector>

#include "spiraltorch/generator.h"

namespace st::rl {

struct TransitionBatch {
  std::vector<float> obs;         // [batch, obs_dim]
  std::vector<int64_t> actions;   // [batch]
  std::vector<float> rewards;     // [batch]
  std::vector<float> next_obs;    // [batch, obs_dim]
  std::vector<float> terminated;  // [batch]: 1 where the episode ended in a terminal state
  std::vector<int64_t> indices;   // [batch]: the slots drawn
};

class ReplayBuffer {
 public:
  // Draws come from Philox under `seed`, so a seeded buffer samples the same slots every run.
  ReplayBuffer(int64_t capacity, int64_t obs_dim, uint64_t seed = 0);

  // Appends n = actions.size() transitions (obs and next_obs hold n * obs_dim values); when full,
  // the oldest are overwritten. Checks every size before writing anything.
  void push(std::span<const float> obs, std::span<const int64_t> actions, std::span<const float> rewards,
            std::span<const float> next_obs, std::span<const float> terminated);
  // `batch` transitions drawn uniformly with replacement from the stored ones.
  TransitionBatch sample(int64_t batch);

  int64_t size() const { return size_; }
  int64_t capacity() const { return capacity_; }
  int64_t obs_dim() const { return obs_dim_; }
  uint64_t seed() const { return gen_.seed(); }
  void clear() { size_ = head_ = 0; }

 private:
  int64_t capacity_;
  int64_t obs_dim_;
  int64_t size_ = 0;
  int64_t head_ = 0;  // next slot to write
  std::vector<float> obs_, next_obs_, rewards_, terminated_;
  std::vector<int64_t> actions_;
  Generator gen_;
};

}  // namespace st::rl
