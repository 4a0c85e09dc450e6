#pragma once
// Optimizer updates queued during Optimizer::step and launched together through the backend's
// fused updates (every device, the CPU included), so a step over N parameters costs a few
// multi-tensor launches instead of N (not part of the public API).
#include <utility>
#include <vector>

#include "backend/backend.h"

namespace st::optim::detail {

// Slots grouped by (device, dtype, arguments): one batch is one backend call.
template <typename Args, typename Slot>
class DeviceBatches {
 public:
  void push(const Device& device, Dtype dtype, const Args& args, Slot slot) {
    for (auto& b : batches_) {
      if (b.device == device && b.dtype == dtype && b.args == args) {
        b.slots.push_back(std::move(slot));
        return;
      }
    }
    batches_.push_back({device, dtype, args, {std::move(slot)}});
  }
  // Hands every batch to launch(device, slots, args) and empties the queue, also when a launch throws.
  template <typename Launch>
  void flush(Launch launch) {
    std::vector<Batch> batches = std::exchange(batches_, {});
    for (const Batch& b : batches) launch(b.device, b.slots, b.args);
  }

 private:
  struct Batch {
    Device device;
    Dtype dtype;
    Args args;
    std::vector<Slot> slots;
  };
  std::vector<Batch> batches_;
};

struct UpdateQueue {
  DeviceBatches<backend::Backend::AdamArgs, backend::Backend::AdamSlot> adam;
  DeviceBatches<backend::Backend::SgdArgs, backend::Backend::SgdSlot> sgd;
  DeviceBatches<backend::Backend::AdagradArgs, backend::Backend::AdagradSlot> adagrad;
  DeviceBatches<backend::Backend::RmspropArgs, backend::Backend::RmspropSlot> rmsprop;
  // The step's device-side non-finite flag (Backend::AdamArgs::skip), or null.
  const int32_t* skip = nullptr;

  void flush() {
    adam.flush([this](const Device& d, const auto& slots, auto args) {
      args.skip = skip;
      backend::backend_for(d).adam_update(slots, args);
    });
    sgd.flush([this](const Device& d, const auto& slots, auto args) {
      args.skip = skip;
      backend::backend_for(d).sgd_update(slots, args);
    });
    adagrad.flush([this](const Device& d, const auto& slots, auto args) {
      args.skip = skip;
      backend::backend_for(d).adagrad_update(slots, args);
    });
    rmsprop.flush([this](const Device& d, const auto& slots, auto args) {
      args.skip = skip;
      backend::backend_for(d).rmsprop_update(slots, args);
    });
  }
};

}  // namespace st::optim::detail
