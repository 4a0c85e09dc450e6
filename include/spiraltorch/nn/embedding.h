#pragma once
#include <memory>
#include <optional>

#include "spiraltorch/nn/module.h"

namespace st::nn {

// A lookup table: forward(indices) returns weight[indices], of shape
// indices.shape + (embedding_dim,). weight is (num_embeddings, embedding_dim),
// initialised N(0, 1) like PyTorch; the padding_idx row (if any) starts at zero and
// receives no gradient.
class Embedding : public Module {
 public:
  Embedding(int64_t num_embeddings, int64_t embedding_dim, std::optional<int64_t> padding_idx = {},
            std::string name = "");
  // An Embedding whose weight is `embeddings` (2-D; the same memory, as PyTorch's from_pretrained),
  // trainable unless freeze; the padding_idx row is kept as given.
  static std::shared_ptr<Embedding> from_pretrained(const Tensor& embeddings, bool freeze = true,
                                                    std::optional<int64_t> padding_idx = {}, std::string name = "");
  Tensor forward(const Tensor& indices) override;
  std::string type_name() const override { return "Embedding"; }
  int64_t num_embeddings() const { return num_; }
  int64_t embedding_dim() const { return dim_; }
  std::optional<int64_t> padding_idx() const { return padding_idx_; }  // normalised to >= 0
  Tensor weight() { return *find_parameter("weight"); }

 private:
  int64_t num_, dim_;
  std::optional<int64_t> padding_idx_;
};

}  // namespace st::nn
