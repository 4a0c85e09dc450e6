#include "spiraltorch/runtime/ddp.h"

#include <algorithm>

#include "spiraltorch/autograd.h"
#include "spiraltorch/ops.h"

namespace st::distributed {

Reducer::Reducer(std::vector<Tensor> params, std::shared_ptr<ProcessGroup> group, double bucket_cap_mb,
                 bool find_unused_parameters)
    : group_(std::move(group)), find_unused_(find_unused_parameters) {
  if (!group_) throw SpiralError("DistributedDataParallel: no process group; call init_process_group first");
  if (!(bucket_cap_mb > 0.0)) {
    throw ValueError("DistributedDataParallel: bucket_cap_mb must be positive, got " + std::to_string(bucket_cap_mb));
  }
  for (Tensor& p : params) {
    if (p.defined() && p.requires_grad()) params_.push_back(std::move(p));
  }
  const auto cap = static_cast<int64_t>(bucket_cap_mb * 1024 * 1024);
  // Reverse registration order, one dtype and device per bucket, at most `cap` bytes (a larger
  // parameter fills a bucket alone).
  where_.resize(params_.size());
  std::vector<std::vector<size_t>> plan;
  std::vector<std::pair<Dtype, Device>> plan_kind;
  std::vector<int64_t> plan_bytes;
  for (size_t i = params_.size(); i-- > 0;) {
    const Tensor& p = params_[i];
    const int64_t bytes = p.numel() * static_cast<int64_t>(p.itemsize());
    size_t b = plan.size();
    for (size_t k = plan.size(); k-- > 0;) {
      if (plan_kind[k] == std::make_pair(p.dtype(), p.device())) {
        b = k;
        break;
      }
    }
    if (b == plan.size() || (plan_bytes[b] > 0 && plan_bytes[b] + bytes > cap)) {
      plan.emplace_back();
      plan_kind.emplace_back(p.dtype(), p.device());
      plan_bytes.push_back(0);
      b = plan.size() - 1;
    }
    plan[b].push_back(i);
    plan_bytes[b] += bytes;
  }
  for (size_t b = 0; b < plan.size(); ++b) {
    Bucket bucket;
    int64_t total = 0;
    for (size_t k = 0; k < plan[b].size(); ++k) {
      const size_t i = plan[b][k];
      bucket.params.push_back(i);
      bucket.offsets.push_back(total);
      where_[i] = {b, k};
      total += params_[i].numel();
    }
    bucket.flat = zeros({total}, plan_kind[b].first, plan_kind[b].second);
    buckets_.push_back(std::move(bucket));
  }
  ready_.assign(params_.size(), false);
  for (size_t i = 0; i < params_.size(); ++i) {
    hook_ids_.push_back(register_post_accumulate_grad_hook(params_[i], [this, i](const Tensor&) { on_grad_ready(i); }));
  }
}

Reducer::~Reducer() {
  for (int64_t id : hook_ids_) remove_post_accumulate_grad_hook(id);
  for (Bucket& b : buckets_) {
    if (b.work) {
      try {
        b.work->wait();
      } catch (...) {
      }
    }
  }
}

std::vector<std::vector<size_t>> Reducer::bucket_indices() const {
  std::vector<std::vector<size_t>> out;
  for (const Bucket& b : buckets_) out.push_back(b.params);
  return out;
}

Tensor Reducer::slot(const Bucket& b, size_t k) const {
  const Tensor& p = params_[b.params[k]];
  return view(narrow(b.flat, 0, b.offsets[k], p.numel()), p.shape());
}

void Reducer::reset() {
  for (Bucket& b : buckets_) {
    if (b.work) {
      try {
        b.work->wait();
      } catch (...) {
      }
      b.work.reset();
    }
  }
  in_backward_ = false;
}

void Reducer::on_grad_ready(size_t index) {
  if (!require_sync_) return;
  if (!in_backward_) {
    reset();
    in_backward_ = true;
    std::fill(ready_.begin(), ready_.end(), false);
    for (Bucket& b : buckets_) b.pending = b.params.size();
    next_launch_ = 0;
    overlapped_ = 0;
    queue_backward_callback([this] { finish_backward(); });
  }
  if (ready_[index]) return;  // a second backward through a retained graph before the end callback
  ready_[index] = true;
  const auto [b, k] = where_[index];
  NoGradGuard ng;
  Tensor dst = slot(buckets_[b], k);
  copy_(dst, params_[index].grad());
  --buckets_[b].pending;
  const size_t before = next_launch_;
  launch_ready_buckets();
  overlapped_ += static_cast<int64_t>(next_launch_ - before);
}

void Reducer::launch_ready_buckets() {
  while (next_launch_ < buckets_.size() && buckets_[next_launch_].pending == 0) {
    Bucket& b = buckets_[next_launch_++];
    b.work = group_->all_reduce(b.flat, ReduceOp::Avg);
  }
}

void Reducer::finish_backward() {
  if (!in_backward_) return;
  NoGradGuard ng;
  // find_unused_parameters: which parameters hold a gradient on this rank (from this pass or an
  // accumulating no_sync one), read before the zero-fill below marks every parameter ready.
  std::vector<float> held;
  if (find_unused_) {
    held.resize(params_.size());
    for (size_t i = 0; i < params_.size(); ++i) held[i] = ready_[i] || params_[i].grad().defined() ? 1.0f : 0.0f;
  }
  // Parameters that got no gradient in this pass contribute what they hold (zeros if nothing).
  for (size_t b = next_launch_; b < buckets_.size(); ++b) {
    Bucket& bucket = buckets_[b];
    for (size_t k = 0; k < bucket.params.size(); ++k) {
      const size_t i = bucket.params[k];
      if (ready_[i]) continue;
      Tensor dst = slot(bucket, k);
      const Tensor g = params_[i].grad();
      if (g.defined()) {
        copy_(dst, g);
      } else {
        zero_(dst);
      }
      ready_[i] = true;
    }
    bucket.pending = 0;
  }
  launch_ready_buckets();
  in_backward_ = false;
  // Issued after every bucket on every rank, so all ranks call the collectives in one order.
  Tensor used;
  if (find_unused_ && !params_.empty()) {
    used = to_device(Tensor::from_vector(held, {static_cast<int64_t>(held.size())}), params_[0].device());
    group_->all_reduce(used, ReduceOp::Max)->wait();
    held = to_device(used, Device{}).to_vector<float>();
  }
  for (Bucket& bucket : buckets_) {
    std::shared_ptr<Work> work = std::move(bucket.work);
    work->wait();
    for (size_t k = 0; k < bucket.params.size(); ++k) {
      Tensor& p = params_[bucket.params[k]];
      const Tensor avg = slot(bucket, k);
      Tensor g = p.grad();
      if (g.defined()) {
        copy_(g, avg);
      } else if (!used.defined() || held[bucket.params[k]] > 0.0f) {
        p.set_grad(avg.clone());
      }  // else: no rank had a gradient for it (find_unused_parameters): it stays None
    }
  }
  ++synced_steps_;
}

DistributedDataParallel::DistributedDataParallel(std::shared_ptr<nn::Module> module,
                                                 std::shared_ptr<ProcessGroup> group, double bucket_cap_mb,
                                                 bool broadcast_buffers, bool find_unused_parameters)
    : module_(std::move(module)),
      group_(group ? std::move(group) : default_group_ptr()),
      broadcast_buffers_(broadcast_buffers) {
  if (!module_) throw ValueError("DistributedDataParallel: the module is null");
  // Every rank starts from rank 0's weights: issue all broadcasts, then wait for them.
  std::vector<std::shared_ptr<Work>> works;
  for (Tensor& t : module_->parameters()) works.push_back(group_->broadcast(t, 0));
  for (auto& [key, t] : module_->named_buffers()) works.push_back(group_->broadcast(t, 0));
  for (auto& w : works) w->wait();
  reducer_ = std::make_unique<Reducer>(module_->parameters(), group_, bucket_cap_mb, find_unused_parameters);
  register_module("module", module_);
}

void DistributedDataParallel::prepare_forward() {
  // (A forward re-run inside a backward pass, by activation checkpointing, keeps its state.)
  if (!backward_running()) reducer_->reset();
  if (!broadcast_buffers_) return;
  std::vector<std::shared_ptr<Work>> works;
  for (auto& [key, t] : module_->named_buffers()) works.push_back(group_->broadcast(t, 0));
  for (auto& w : works) w->wait();
}

Tensor DistributedDataParallel::forward(const Tensor& input) {
  prepare_forward();
  return (*module_)(input);
}

}  // namespace st::distributed
