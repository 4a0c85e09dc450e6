#include "spiraltorch/nn/pixel_shuffle.h"

#include "spiraltorch/error.h"
#include "spiraltorch/ops.h"

namespace st::nn {

namespace {

// Leading (batch) dims flattened into one so the permutation has a fixed rank.
int64_t lead_numel(const Shape& s) {
  int64_t b = 1;
  for (size_t d = 0; d + 3 < s.size(); ++d) b *= s[d];
  return b;
}

void check_factor(const Tensor& input, int64_t r, const char* op, const char* arg) {
  if (!input.defined()) throw ValueError(std::string(op) + ": input is required");
  if (r <= 0) throw ValueError(std::string(op) + ": " + arg + " must be positive, got " + std::to_string(r));
  if (input.dim() < 3) {
    throw ShapeError(std::string(op) + ": expected an input with at least 3 dims (*, C, H, W), got shape " +
                     shape_str(input.shape()));
  }
}

}  // namespace

Tensor pixel_shuffle(const Tensor& input, int64_t r) {
  const char* op = "pixel_shuffle";
  check_factor(input, r, op, "upscale_factor");
  const Shape s = input.shape();
  const int64_t nd = input.dim(), C = s[nd - 3], H = s[nd - 2], W = s[nd - 1];
  if (C % (r * r) != 0) {
    throw ShapeError(std::string(op) + ": channels " + std::to_string(C) + " of input shape " + shape_str(s) +
                     " are not divisible by upscale_factor^2 = " + std::to_string(r * r));
  }
  const int64_t OC = C / (r * r);
  Tensor x = reshape(input, {lead_numel(s), OC, r, r, H, W});
  x = permute(x, {0, 1, 4, 2, 5, 3});  // (B, OC, H, r, W, r)
  Shape os(s.begin(), s.end() - 3);
  os.insert(os.end(), {OC, H * r, W * r});
  return reshape(x, os);
}

Tensor pixel_unshuffle(const Tensor& input, int64_t r) {
  const char* op = "pixel_unshuffle";
  check_factor(input, r, op, "downscale_factor");
  const Shape s = input.shape();
  const int64_t nd = input.dim(), C = s[nd - 3], H = s[nd - 2], W = s[nd - 1];
  if (H % r != 0 || W % r != 0) {
    throw ShapeError(std::string(op) + ": height " + std::to_string(H) + " and width " + std::to_string(W) +
                     " of input shape " + shape_str(s) + " must be divisible by downscale_factor " + std::to_string(r));
  }
  Tensor x = reshape(input, {lead_numel(s), C, H / r, r, W / r, r});
  x = permute(x, {0, 1, 3, 5, 2, 4});  // (B, C, r, r, H/r, W/r)
  Shape os(s.begin(), s.end() - 3);
  os.insert(os.end(), {C * r * r, H / r, W / r});
  return reshape(x, os);
}

PixelShuffle::PixelShuffle(int64_t upscale_factor, std::string name) : Module(std::move(name)), r_(upscale_factor) {
  if (r_ <= 0) throw ValueError("PixelShuffle: upscale_factor must be positive, got " + std::to_string(r_));
}

PixelUnshuffle::PixelUnshuffle(int64_t downscale_factor, std::string name)
    : Module(std::move(name)), r_(downscale_factor) {
  if (r_ <= 0) throw ValueError("PixelUnshuffle: downscale_factor must be positive, got " + std::to_string(r_));
}

}  // namespace st::nn
