#pragma once
// Connectionist Temporal Classification (torch.nn.functional.ctc_loss / torch.nn.CTCLoss).
#include <string>
#include <vector>

#include "spiraltorch/nn/loss.h"

namespace st::nn {

// The negative log-likelihood of each target sequence under the per-step class distributions
// log_probs (T, N, C) (or (T, C) for one sequence), summed over every alignment that collapses to
// the target (repeats merged, then blanks removed). targets are (N, S) padded or the N sequences
// concatenated (1-D); input_lengths[n] <= T steps of sample n are used and target_lengths[n] labels.
// reduction: "none" gives (N,) (a scalar for (T, C) input), "sum" the total, "mean" the mean of each
// loss divided by its target length. zero_infinity turns impossible alignments (infinite losses)
// and their gradients into zeros. The alpha/beta recursions run in log space in float64 on the host;
// the gradient with respect to log_probs is PyTorch's, exp(log_probs) - posterior / count, which
// equals the true one through log_softmax (log_probs should be log-softmax outputs).
Tensor ctc_loss(const Tensor& log_probs, const Tensor& targets, const std::vector<int64_t>& input_lengths,
                const std::vector<int64_t>& target_lengths, int64_t blank = 0, Reduction reduction = Reduction::Mean,
                bool zero_infinity = false);

}  // namespace st::nn
