#pragma once
// Checkpoint and resume for a training loop written in C++: a model's state dict, its optimizer's
// state and optionally its learning-rate schedule's, with the caller's counters (epoch, step), in
// one safetensors file written atomically (the C++ counterpart of torch::save(model) +
// torch::save(optimizer), in one file).
//
// The file is what st.save writes for the Python dict
//   {"model": {"<key>": Tensor, ...},
//    "optimizer": {"state": {<i>: {"step": int, "<buffer>": Tensor, ...}},
//                  "param_groups": [{"<option>": float, ..., "params": [<i>, ...]}, ...],
//                  "skipped_steps": int, "type": "<Optimizer::type_name()>"},
//    "scheduler": {"last_epoch": int, "_step_count": int, "base_lrs": [float], "_last_lr": [float],
//                  "<extra>": float, ..., "_schedulers": [<child>, ...], "type": "<type_name()>"},
//    "progress": {"<name>": int, ...}}
// ("scheduler" only when one is saved; "_schedulers" only for composite schedules), so Python's
// st.load reads it as that dict and Optimizer.load_state_dict / LRScheduler.load_state_dict take
// its parts. Tensors are stored under "model/<key>" and "optimizer/<i>/<buffer>".
#include <cstdint>
#include <map>
#include <string>

#include "spiraltorch/nn/module.h"
#include "spiraltorch/optim/lr_scheduler.h"
#include "spiraltorch/optim/optimizer.h"

namespace st::io {

// The metadata key under which st.save keeps an object's structure (see io/structure.h).
inline constexpr const char* kStructureMetadataKey = "spiraltorch.structure";

using Progress = std::map<std::string, int64_t>;

// Writes the state of `model`, `optimizer` and (when given) `scheduler`, and `progress`, to `path`
// atomically: a failed save leaves an earlier file untouched.
void save_training_state(const std::string& path, const nn::Module& model, const optim::Optimizer& optimizer,
                         const optim::LRScheduler* scheduler = nullptr, const Progress& progress = {});

// Loads what save_training_state wrote into `model` (strictly: same keys and shapes), `optimizer` and
// (when given) `scheduler`, and returns the progress counters. The optimizer and scheduler must be of
// the types that were saved. Everything is checked before anything stays changed: on any error
// (CheckpointError for a malformed file or a state that does not fit) the model, optimizer and
// scheduler are as they were.
Progress load_training_state(const std::string& path, nn::Module& model, optim::Optimizer& optimizer,
                             optim::LRScheduler* scheduler = nullptr);

}  // namespace st::io
