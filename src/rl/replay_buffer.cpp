#include "spiraltorch/rl/replay_buffer.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "spiraltorch/error.h"

namespace st::rl {

ReplayBuffer::ReplayBuffer(int64_t capacity, int64_t obs_dim, uint64_t seed)
    : capacity_(capacity), obs_dim_(obs_dim), gen_(seed) {
  if (capacity <= 0) throw ValueError("ReplayBuffer: capacity must be positive, got " + std::to_string(capacity));
  if (obs_dim <= 0) throw ValueError("ReplayBuffer: obs_dim must be positive, got " + std::to_string(obs_dim));
  const auto c = static_cast<size_t>(capacity);
  obs_.resize(c * static_cast<size_t>(obs_dim));
  next_obs_.resize(obs_.size());
  rewards_.resize(c);
  terminated_.resize(c);
  actions_.resize(c);
}

void ReplayBuffer::push(std::span<const float> obs, std::span<const int64_t> actions, std::span<const float> rewards,
                        std::span<const float> next_obs, std::span<const float> terminated) {
  const size_t n = actions.size();
  const size_t d = static_cast<size_t>(obs_dim_);
  auto need = [&](const char* name, size_t got, size_t want) {
    if (got != want)
      throw ShapeError("ReplayBuffer.push: " + std::string(name) + " has " + std::to_string(got) +
                       " values, expected " + std::to_string(want) + " for " + std::to_string(n) +
                       " transitions of obs_dim " + std::to_string(obs_dim_));
  };
  need("obs", obs.size(), n * d);
  need("next_obs", next_obs.size(), n * d);
  need("rewards", rewards.size(), n);
  need("terminated", terminated.size(), n);
  for (size_t k = 0; k < n; ++k) {
    if (actions[k] < 0) throw ValueError("ReplayBuffer.push: action " + std::to_string(actions[k]) + " is negative");
    if (!std::isfinite(rewards[k]))
      throw ValueError("ReplayBuffer.push: reward " + std::to_string(rewards[k]) + " is not finite");
  }
  for (size_t k = 0; k < n; ++k) {
    const auto slot = static_cast<size_t>(head_);
    std::copy_n(obs.begin() + static_cast<std::ptrdiff_t>(k * d), d,
                obs_.begin() + static_cast<std::ptrdiff_t>(slot * d));
    std::copy_n(next_obs.begin() + static_cast<std::ptrdiff_t>(k * d), d,
                next_obs_.begin() + static_cast<std::ptrdiff_t>(slot * d));
    actions_[slot] = actions[k];
    rewards_[slot] = rewards[k];
    terminated_[slot] = terminated[k] != 0.0f ? 1.0f : 0.0f;
    head_ = (head_ + 1) % capacity_;
    size_ = std::min(size_ + 1, capacity_);
  }
}

TransitionBatch ReplayBuffer::sample(int64_t batch) {
  if (batch <= 0) throw ValueError("ReplayBuffer.sample: batch must be positive, got " + std::to_string(batch));
  if (size_ == 0) throw ValueError("ReplayBuffer.sample: the buffer is empty");
  const size_t b = static_cast<size_t>(batch);
  const size_t d = static_cast<size_t>(obs_dim_);
  TransitionBatch out;
  out.obs.resize(b * d);
  out.next_obs.resize(b * d);
  out.actions.resize(b);
  out.rewards.resize(b);
  out.terminated.resize(b);
  out.indices.resize(b);
  // One Philox block (four 32-bit words) gives two 64-bit draws.
  const uint64_t start = gen_.reserve((b + 1) / 2);
  for (size_t k = 0; k < b; ++k) {
    const auto block = Generator::philox(gen_.seed(), start + k / 2);
    const int w = static_cast<int>(k % 2) * 2;
    const uint64_t r = (static_cast<uint64_t>(block[w]) << 32) | block[w + 1];
    const auto slot = static_cast<size_t>((static_cast<unsigned __int128>(r) * static_cast<uint64_t>(size_)) >> 64);
    out.indices[k] = static_cast<int64_t>(slot);
    std::copy_n(obs_.begin() + static_cast<std::ptrdiff_t>(slot * d), d,
                out.obs.begin() + static_cast<std::ptrdiff_t>(k * d));
    std::copy_n(next_obs_.begin() + static_cast<std::ptrdiff_t>(slot * d), d,
                out.next_obs.begin() + static_cast<std::ptrdiff_t>(k * d));
    out.actions[k] = actions_[slot];
    out.rewards[k] = rewards_[slot];
    out.terminated[k] = terminated_[slot];
  }
  return out;
}

}  // namespace st::rl
