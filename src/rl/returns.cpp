#include "spiraltorch/rl/returns.h"

#include <cmath>
#include <string>

#include "spiraltorch/error.h"

namespace st::rl {

namespace {

int64_t check_layout(const char* op, int64_t envs, std::span<const float> rewards) {
  if (envs <= 0) throw ValueError(std::string(op) + ": envs must be positive, got " + std::to_string(envs));
  const auto n = static_cast<int64_t>(rewards.size());
  if (n % envs != 0)
    throw ShapeError(std::string(op) + ": " + std::to_string(n) + " rewards do not split into " + std::to_string(envs) +
                     " envs");
  return n / envs;
}

void check_same(const char* op, const char* name, std::span<const float> a, size_t expected) {
  if (a.size() != expected)
    throw ShapeError(std::string(op) + ": " + name + " has " + std::to_string(a.size()) + " values, rewards have " +
                     std::to_string(expected));
}

void check_discount(const char* op, float gamma, float lambda) {
  if (!(gamma >= 0.0f && gamma <= 1.0f))
    throw ValueError(std::string(op) + ": gamma must be in [0, 1], got " + std::to_string(gamma));
  if (!(lambda >= 0.0f && lambda <= 1.0f))
    throw ValueError(std::string(op) + ": lambda must be in [0, 1], got " + std::to_string(lambda));
}

}  // namespace

std::vector<float> discounted_returns(std::span<const float> rewards, std::span<const float> dones,
                                      std::span<const float> bootstrap, int64_t envs, float gamma) {
  const char* op = "discounted_returns";
  const int64_t steps = check_layout(op, envs, rewards);
  check_same(op, "dones", dones, rewards.size());
  if (static_cast<int64_t>(bootstrap.size()) != envs)
    throw ShapeError(std::string(op) + ": bootstrap has " + std::to_string(bootstrap.size()) + " values, expected " +
                     std::to_string(envs) + " (one per env)");
  check_discount(op, gamma, 0.0f);
  std::vector<float> out(rewards.size());
  for (int64_t e = 0; e < envs; ++e) {
    double g = bootstrap[e];
    for (int64_t t = steps - 1; t >= 0; --t) {
      const size_t k = static_cast<size_t>(t * envs + e);
      g = rewards[k] + gamma * (1.0 - dones[k]) * g;
      out[k] = static_cast<float>(g);
    }
  }
  return out;
}

Advantages generalized_advantage_estimation(std::span<const float> rewards, std::span<const float> values,
                                            std::span<const float> next_values, std::span<const float> terminated,
                                            std::span<const float> episode_end, int64_t envs, float gamma,
                                            float lambda) {
  const char* op = "generalized_advantage_estimation";
  const int64_t steps = check_layout(op, envs, rewards);
  check_same(op, "values", values, rewards.size());
  check_same(op, "next_values", next_values, rewards.size());
  check_same(op, "terminated", terminated, rewards.size());
  check_same(op, "episode_end", episode_end, rewards.size());
  check_discount(op, gamma, lambda);
  Advantages out{std::vector<float>(rewards.size()), std::vector<float>(rewards.size())};
  for (int64_t e = 0; e < envs; ++e) {
    double a = 0.0;
    for (int64_t t = steps - 1; t >= 0; --t) {
      const size_t k = static_cast<size_t>(t * envs + e);
      const double delta = rewards[k] + gamma * (1.0 - terminated[k]) * next_values[k] - values[k];
      a = delta + gamma * lambda * (1.0 - episode_end[k]) * a;
      out.advantages[k] = static_cast<float>(a);
      out.returns[k] = static_cast<float>(a + values[k]);
    }
  }
  return out;
}

}  // namespace st::rl
