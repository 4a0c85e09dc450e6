#include "spiraltorch/optim/sgd.h"

#include "optim/kernels.h"
#include "optim/update_queue.h"
#include "backend/capture.h"

namespace st::optim {

SGD::SGD(std::vector<ParamGroup> groups, double lr, double momentum, double dampening, double weight_decay,
         bool nesterov, bool maximize)
    : Optimizer({}, {{"lr", lr},
                     {"momentum", momentum},
                     {"dampening", dampening},
                     {"weight_decay", weight_decay},
                     {"nesterov", nesterov ? 1.0 : 0.0},
                     {"maximize", maximize ? 1.0 : 0.0}}) {
  add_param_groups(std::move(groups));
}

void SGD::update(const ParamGroup& group, Tensor& param, const Tensor& grad, ParamState& state) {
  const double lr = group.get("lr"), momentum = group.get("momentum"), dampening = group.get("dampening"),
               wd = group.get("weight_decay");
  const bool nesterov = group.flag("nesterov"), maximize = group.flag("maximize");
  Tensor buf;
  bool first = false;
  if (momentum != 0.0) {
    first = state.buffers.find("momentum_buffer") == state.buffers.end();
    if (first && st::detail::capturing(param.device())) {
      // The first step initialises the buffer differently; a captured first step would repeat that on every replay.
      throw SpiralError(type_name() +
                        ".step: cannot capture the first momentum step into a CUDA graph; run a "
                        "warm-up step before capturing");
    }
    buf = detail::buffer(state, "momentum_buffer", param);
  }
  ++state.step;
  const backend::Backend::SgdArgs args{lr, momentum, dampening, wd, nesterov, maximize, first};
  update_queue().sgd.push(param.device(), param.dtype(), args, {param, grad.contiguous(), buf});
}

}  // namespace st::optim
