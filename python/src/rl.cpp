// spiraltorch._core.rl: the per-step numerics of the RL agents (src/rl): returns, GAE and the
// replay buffer. The agent loops live in spiraltorch.spiral_rl.
#include <nanobind/stl/tuple.h>

#include "convert.h"
#include "toolkit_args.h"
#include "spiraltorch/rl/replay_buffer.h"
#include "spiraltorch/rl/returns.h"

namespace stpy {

namespace {

// A float32 copy of `h` (tensor, NumPy array or sequence) in row-major order.
std::vector<float> floats(nb::handle h) { return tensor_from_data(h, Dtype::Float32).contiguous().to_vector<float>(); }
std::vector<int64_t> ints(nb::handle h) { return tensor_from_data(h, Dtype::Int64).contiguous().to_vector<int64_t>(); }

int64_t envs_of(nb::handle h) {
  const Tensor t = tensor_from_data(h, Dtype::Float32);
  return t.dim() >= 2 ? t.size(1) : 1;
}

Tensor shaped(const std::vector<float>& v, nb::handle like) {
  return Tensor::from_vector(v, tensor_from_data(like, Dtype::Float32).shape());
}

}  // namespace

void bind_rl(nb::module_& root) {
  nb::module_ m = root.def_submodule("rl", "Per-step RL numerics: discounted returns, GAE, replay buffer.");
  namespace rl = st::rl;

  m.def("discounted_returns",
        [](ArrayDataArg rewards, ArrayDataArg dones, OptArrayDataArg bootstrap, float gamma) {
    const int64_t envs = envs_of(rewards);
    std::vector<float> boot =
        bootstrap.is_none() ? std::vector<float>(static_cast<size_t>(envs), 0.0f) : floats(bootstrap);
    return shaped(rl::discounted_returns(floats(rewards), floats(dones), boot, envs, gamma), rewards);
  }, nb::arg("rewards"), nb::arg("dones"), nb::arg("bootstrap") = nb::none(), nb::arg("gamma").sig("0.99") = 0.99f,
        "G_t = r_t + gamma (1 - done_t) G_{t+1} over [steps] or [steps, envs] arrays, G after the last step = "
        "bootstrap (zeros when None). Returns a float32 tensor shaped like rewards.");

  m.def("gae",
        [](ArrayDataArg rewards, ArrayDataArg values, ArrayDataArg next_values, ArrayDataArg terminated,
           ArrayDataArg episode_end, float gamma, float lam) -> std::tuple<Tensor, Tensor> {
    const rl::Advantages a =
        rl::generalized_advantage_estimation(floats(rewards), floats(values), floats(next_values), floats(terminated),
                                             floats(episode_end), envs_of(rewards), gamma, lam);
    return {shaped(a.advantages, rewards), shaped(a.returns, rewards)};
  },
        nb::arg("rewards"), nb::arg("values"), nb::arg("next_values"), nb::arg("terminated"), nb::arg("episode_end"),
        nb::arg("gamma").sig("0.99") = 0.99f, nb::arg("lam").sig("0.95") = 0.95f,
        "Generalised advantage estimation over [steps] or [steps, envs] arrays: delta_t = r_t + gamma (1 - "
        "terminated_t) next_value_t - value_t, A_t = delta_t + gamma lam (1 - episode_end_t) A_{t+1}. Returns "
        "(advantages, returns = advantages + values).");

  nb::class_<rl::ReplayBuffer>(m, "ReplayBuffer",
                               "Ring buffer of (obs, action, reward, next_obs, terminated) with uniform sampling.")
      .def(nb::init<int64_t, int64_t, uint64_t>(), nb::arg("capacity"), nb::arg("obs_dim"), nb::arg("seed") = 0)
      .def("push",
           [](rl::ReplayBuffer& b, ArrayDataArg obs, ArrayDataArg actions, ArrayDataArg rewards, ArrayDataArg next_obs,
              ArrayDataArg terminated) {
    b.push(floats(obs), ints(actions), floats(rewards), floats(next_obs), floats(terminated));
  },
           nb::arg("obs"), nb::arg("actions"), nb::arg("rewards"), nb::arg("next_obs"), nb::arg("terminated"),
           "Appends a batch of transitions: obs/next_obs [n, obs_dim], actions (int64)/rewards/terminated [n]; "
           "once full, the oldest are overwritten. ShapeError when a size disagrees, ValueError for a "
           "negative action or non-finite reward; nothing is written then.")
      .def("sample",
           [](rl::ReplayBuffer& b, int64_t batch) {
    rl::TransitionBatch s = b.sample(batch);
    const int64_t d = b.obs_dim();
    nb::dict out;
    out["obs"] = Tensor::from_vector(s.obs, Shape{batch, d});
    out["actions"] = Tensor::from_vector(s.actions, Shape{batch});
    out["rewards"] = Tensor::from_vector(s.rewards, Shape{batch});
    out["next_obs"] = Tensor::from_vector(s.next_obs, Shape{batch, d});
    out["terminated"] = Tensor::from_vector(s.terminated, Shape{batch});
    out["indices"] = Tensor::from_vector(s.indices, Shape{batch});
    return out;
  }, nb::sig("def sample(self, batch: int) -> dict[str, spiraltorch._core.Tensor]"), nb::arg("batch"),
           "A dict of tensors for `batch` transitions drawn uniformly with replacement: 'obs' and 'next_obs' "
           "[batch, obs_dim] float32, 'actions' and 'indices' [batch] int64, 'rewards' and 'terminated' [batch]. "
           "ValueError when the buffer is empty or batch <= 0.")
      .def("__len__", &rl::ReplayBuffer::size, "The number of stored transitions (at most capacity).")
      .def("clear", &rl::ReplayBuffer::clear, "Drops every stored transition.")
      .def_prop_ro("capacity", &rl::ReplayBuffer::capacity, "The most transitions the ring keeps.")
      .def_prop_ro("obs_dim", &rl::ReplayBuffer::obs_dim, "The length of one observation.")
      .def_prop_ro("seed", &rl::ReplayBuffer::seed, "The seed of the sampling generator.");
}

}  // namespace stpy
