// Coordinate grids (meshgrid): expanded views of the inputs, so gradients and every device come with them.
#include <string>
#include <vector>

#include "ops/common.h"

namespace st {

std::vector<Tensor> meshgrid(const std::vector<Tensor>& tensors, const std::string& indexing) {
  if (indexing != "ij" && indexing != "xy") {
    throw ValueError("meshgrid: indexing must be 'ij' or 'xy', got '" + indexing + "'");
  }
  std::vector<Tensor> flat;
  for (size_t i = 0; i < tensors.size(); ++i) {
    if (tensors[i].dim() > 1) {
      throw ShapeError("meshgrid: expects 0-D or 1-D tensors, got shape " + shape_str(tensors[i].shape()) +
                       " for input " + std::to_string(i));
    }
    flat.push_back(reshape(tensors[i], {-1}));
  }
  // 'xy' is 'ij' on the first two inputs swapped, with those two grids swapped back.
  const bool swap = indexing == "xy" && flat.size() >= 2;
  if (swap) std::swap(flat[0], flat[1]);
  Shape shape;
  for (const Tensor& t : flat) shape.push_back(t.shape()[0]);
  std::vector<Tensor> grids;
  for (size_t i = 0; i < flat.size(); ++i) {
    Shape view(flat.size(), 1);
    view[i] = shape[i];
    grids.push_back(expand(reshape(flat[i], view), shape));
  }
  if (swap) std::swap(grids[0], grids[1]);
  return grids;
}

}  // namespace st
