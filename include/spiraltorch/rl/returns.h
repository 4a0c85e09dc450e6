#pragma once
// Return and advantage estimates over rollouts laid out time-major: element (t, e) of a
// [steps, envs] array sits at t * envs + e.
#include <cstdint>
#include <span>
#include <vector>

namespace st::rl {

struct Advantages {
  std::vector<float> advantages;  // [steps, envs]
  std::vector<float> returns;     // advantages + values: the value-function targets
};

// Discounted returns G_t = r_t + gamma (1 - done_t) G_{t+1}, with G_steps = bootstrap[e]
// (0 for finished episodes). rewards, dones: [steps, envs]; bootstrap: [envs].
std::vector<float> discounted_returns(std::span<const float> rewards, std::span<const float> dones,
                                      std::span<const float> bootstrap, int64_t envs, float gamma);

// Generalised advantage estimation (Schulman et al. 2016), per step t and env e:
//   delta_t = r_t + gamma (1 - terminated_t) next_value_t - value_t
//   A_t     = delta_t + gamma lambda (1 - episode_end_t) A_{t+1}
// next_value_t is V(s_{t+1}) of the observation that followed step t (for a truncated episode, its
// final observation); terminated_t stops bootstrapping, episode_end_t (terminated or truncated)
// stops the recursion. All arrays are [steps, envs].
Advantages generalized_advantage_estimation(std::span<const float> rewards, std::span<const float> values,
                                            std::span<const float> next_values, std::span<const float> terminated,
                                            std::span<const float> episode_end, int64_t envs, float gamma,
                                            float lambda);

}  // namespace st::rl
