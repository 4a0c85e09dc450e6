#include "spiraltorch/nn/embedding.h"

#include "spiraltorch/autograd.h"
#include "spiraltorch/nn/functional.h"
#include "spiraltorch/ops.h"

namespace st::nn {

Embedding::Embedding(int64_t num_embeddings, int64_t embedding_dim, std::optional<int64_t> padding_idx,
                     std::string name)
    : Module(std::move(name)), num_(num_embeddings), dim_(embedding_dim) {
  if (num_embeddings <= 0 || embedding_dim <= 0) {
    throw ValueError("Embedding: num_embeddings and embedding_dim must be positive, got " +
                     std::to_string(num_embeddings) + " and " + std::to_string(embedding_dim));
  }
  if (padding_idx) {
    const int64_t p = *padding_idx;
    if (p < -num_embeddings || p >= num_embeddings) {
      throw ValueError("Embedding: padding_idx " + std::to_string(p) + " is out of range for " +
                       std::to_string(num_embeddings) + " embeddings");
    }
    padding_idx_ = p < 0 ? p + num_embeddings : p;
  }
  Tensor w = randn({num_embeddings, embedding_dim});
  if (padding_idx_) {
    Tensor row = select(w, 0, *padding_idx_);
    zero_(row);
  }
  register_parameter("weight", w);
}

std::shared_ptr<Embedding> Embedding::from_pretrained(const Tensor& embeddings, bool freeze,
                                                      std::optional<int64_t> padding_idx, std::string name) {
  if (!embeddings.defined() || embeddings.dim() != 2) {
    throw ShapeError("Embedding.from_pretrained: embeddings must be 2-D (num_embeddings, embedding_dim), got " +
                     (embeddings.defined() ? shape_str(embeddings.shape()) : std::string("an undefined tensor")));
  }
  if (!is_floating(embeddings.dtype())) {
    throw DtypeError(std::string("Embedding.from_pretrained: embeddings must be floating, got ") +
                     dtype_name(embeddings.dtype()));
  }
  auto m = std::make_shared<Embedding>(embeddings.shape()[0], embeddings.shape()[1], padding_idx, std::move(name));
  // A new leaf over the same storage: the caller's tensor keeps its own requires_grad.
  m->register_parameter("weight", embeddings.detach(), !freeze);
  return m;
}

Tensor Embedding::forward(const Tensor& indices) {
  if (!indices.defined()) throw ValueError(type_name() + ": input is undefined");
  if (indices.dtype() != Dtype::Int64 && indices.dtype() != Dtype::Int32) {
    throw DtypeError("Embedding(" + std::to_string(num_) + ", " + std::to_string(dim_) +
                     "): expected an int64 (or int32) index tensor, got " + dtype_name(indices.dtype()) + " of shape " +
                     shape_str(indices.shape()));
  }
  return embedding(weight(), indices, padding_idx_);
}

}  // namespace st::nn
