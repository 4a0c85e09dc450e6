// Embedding::from_pretrained: the weight is the given memory, frozen by default.
#include <gtest/gtest.h>

#include <vector>

#include "spiraltorch/nn/embedding.h"
#include "spiraltorch/spiraltorch.h"

using namespace st;

TEST(Embedding, FromPretrainedUsesTheGivenMemory) {
  const Tensor w = Tensor::from_vector(std::vector<float>{1, 2, 3, 4, 5, 6}, {3, 2});
  auto emb = nn::Embedding::from_pretrained(w);
  EXPECT_FALSE(emb->weight().requires_grad());
  EXPECT_EQ(emb->weight().data<float>(), w.data<float>());
  const Tensor y = (*emb)(Tensor::from_vector(std::vector<int64_t>{2, 0}, {2}));
  EXPECT_EQ(y.to_vector<float>(), (std::vector<float>{5, 6, 1, 2}));
  EXPECT_TRUE(nn::Embedding::from_pretrained(w, false)->weight().requires_grad());
  EXPECT_FALSE(w.requires_grad());
  EXPECT_THROW(nn::Embedding::from_pretrained(ones({3})), ShapeError);
}
