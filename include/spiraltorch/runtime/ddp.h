#pragma once
// Data-parallel training (PyTorch's DistributedDataParallel): every rank runs the same model
// on its own batch; during backward the gradients are averaged over the ranks, bucket by
// bucket, while the rest of the backward still runs, so after backward every rank holds the
// gradient of the mean loss over all ranks' batches and any optimizer takes the same step.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "spiraltorch/nn/module.h"
#include "spiraltorch/runtime/distributed.h"

namespace st::distributed {

// Averages the .grad of `params` over the ranks of `group` during each backward pass.
// Parameters are laid out in buckets of at most bucket_cap_mb (one dtype and device per
// bucket) in reverse registration order, the order their gradients tend to become ready.
// Each parameter's post-accumulate hook copies its gradient into its bucket; a bucket whose
// gradients are all in starts its all-reduce (average) at once, buckets strictly in order so
// every rank issues the same sequence. A callback at the end of the backward pass copies what
// parameters got no gradient (zeros, or a gradient kept from a no_sync step), launches the rest,
// waits for all and writes the averages back into .grad (a parameter with no .grad gets one).
// With find_unused_parameters (PyTorch's flag) the ranks also agree, in one small all-reduce
// per step, which parameters got a gradient anywhere: one that got none on any rank keeps no
// .grad (None), so optimizers skip it as they would without DDP.
class Reducer {
 public:
  Reducer(std::vector<Tensor> params, std::shared_ptr<ProcessGroup> group, double bucket_cap_mb = 25.0,
          bool find_unused_parameters = false);
  ~Reducer();
  Reducer(const Reducer&) = delete;
  Reducer& operator=(const Reducer&) = delete;

  // false: backward passes leave gradients local (gradient accumulation); the next
  // synchronised backward averages what has accumulated.
  void set_require_sync(bool sync) { require_sync_ = sync; }
  bool require_sync() const { return require_sync_; }
  // Drops the state of a backward pass that raised before it finished.
  void reset();

  // Parameter indices (into the constructor's list) of each bucket, in launch order.
  std::vector<std::vector<size_t>> bucket_indices() const;
  // Of the last synchronised backward: buckets whose all-reduce started inside the backward
  // pass (before its end callback), i.e. that overlapped the rest of the backward.
  int64_t overlapped_buckets() const { return overlapped_; }
  int64_t synced_steps() const { return synced_steps_; }
  bool find_unused_parameters() const { return find_unused_; }
  ProcessGroup& group() const { return *group_; }

 private:
  struct Bucket {
    std::vector<size_t> params;
    std::vector<int64_t> offsets;  // element offset of each parameter in `flat`
    Tensor flat;
    size_t pending = 0;
    std::shared_ptr<Work> work;
  };
  void on_grad_ready(size_t index);
  void launch_ready_buckets();
  void finish_backward();
  Tensor slot(const Bucket& b, size_t k) const;

  std::vector<Tensor> params_;
  std::shared_ptr<ProcessGroup> group_;
  std::vector<Bucket> buckets_;
  std::vector<std::pair<size_t, size_t>> where_;  // parameter -> (bucket, position)
  std::vector<int64_t> hook_ids_;
  std::vector<bool> ready_;
  size_t next_launch_ = 0;
  bool in_backward_ = false;
  bool require_sync_ = true;
  bool find_unused_ = false;
  int64_t overlapped_ = 0;
  int64_t synced_steps_ = 0;
};

// A module wrapper: broadcasts rank 0's parameters and buffers at construction (every rank
// starts from the same weights), averages gradients through a Reducer, and with
// broadcast_buffers re-sends rank 0's buffers (BatchNorm statistics) before each forward.
// The wrapped module is its child "module", so keys read "module.<key>" like PyTorch's.
class DistributedDataParallel : public nn::Module {
 public:
  explicit DistributedDataParallel(std::shared_ptr<nn::Module> module, std::shared_ptr<ProcessGroup> group = nullptr,
                                   double bucket_cap_mb = 25.0, bool broadcast_buffers = true,
                                   bool find_unused_parameters = false);
  Tensor forward(const Tensor& input) override;
  std::string type_name() const override { return "DistributedDataParallel"; }

  // What forward does before calling the module, for callers that call it themselves.
  void prepare_forward();
  nn::Module& module() const { return *module_; }
  const std::shared_ptr<nn::Module>& module_ptr() const { return module_; }
  Reducer& reducer() { return *reducer_; }
  bool broadcast_buffers() const { return broadcast_buffers_; }

  // Gradient accumulation: backward passes inside the scope stay local.
  class NoSync {
   public:
    explicit NoSync(DistributedDataParallel& ddp) : reducer_(ddp.reducer()), prev_(reducer_.require_sync()) {
      reducer_.set_require_sync(false);
    }
    ~NoSync() { reducer_.set_require_sync(prev_); }
    NoSync(const NoSync&) = delete;
    NoSync& operator=(const NoSync&) = delete;

   private:
    Reducer& reducer_;
    bool prev_;
  };

 private:
  std::shared_ptr<nn::Module> module_;
  std::shared_ptr<ProcessGroup> group_;
  std::unique_ptr<Reducer> reducer_;
  bool broadcast_buffers_;
};

}  // namespace st::distributed
