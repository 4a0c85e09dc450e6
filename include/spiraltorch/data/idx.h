#pragma once
// IDX files (the MNIST family's format) and the Fashion-MNIST loader built on them (toolkit layer,
// `spiraltorch.data`).
//
// IDX layout: two zero bytes, a type code (0x08 uint8, 0x0C int32, 0x0D float32, 0x0E float64),
// the number of dims d (1 to 8), d big-endian u32 sizes, then the row-major big-endian values and
// nothing after them.
#include <optional>
#include <string>
#include <string_view>

#include "spiraltorch/tensor.h"

namespace st::data {

// The tensor an IDX byte string holds: uint8, int32, float32 or float64 with the file's dims.
// Any malformed input (short header, zero bytes that are not zero, unknown type code, a body
// shorter or longer than the dims say) raises CheckpointError("read_idx: <label>: <reason>").
Tensor parse_idx(std::string_view bytes, const std::string& label = "<bytes>");

// Reads an IDX file. A gzip-compressed file (Debian ships `*-ubyte.gz`) is decompressed while it
// is read, straight into the tensor, and never beyond the size its header declares; this needs a
// build with zlib (`idx_reads_gzip()`), else such a file raises CheckpointError saying so.
// Errors as parse_idx, labelled with the path.
Tensor read_idx(const std::string& path);
// Whether read_idx can read gzip-compressed files in this build.
bool idx_reads_gzip();

// The directory holding the Fashion-MNIST IDX files: under `root` when given, else under
// $SPIRALTORCH_FASHION_MNIST, /usr/share/fashion-mnist, /usr/share/dataset-fashion-mnist or
// /usr/share/datasets/fashion-mnist (the first of them that has `train-images-idx3-ubyte[.gz]`
// somewhere below it); nullopt when none has. Same search as spiraltorch.data.find_fashion_mnist.
std::optional<std::string> find_fashion_mnist(const std::string& root = "");

struct ImageSplit {
  Tensor images;  // (N, 1, H, W): float32 in [0, 1], or the raw uint8 when not scaled
  Tensor labels;  // (N,) int64
};

// One split ("train" or "test") of Fashion-MNIST from `<prefix>-images-idx3-ubyte` and
// `<prefix>-labels-idx1-ubyte` (each optionally `.gz`; prefix "train" or "t10k") in the directory
// find_fashion_mnist(root) finds. The same tensors as spiraltorch.data.load_fashion_mnist. MNIST's
// files have the same names and load the same way. CheckpointError when the files are missing or
// malformed or the image and label counts differ; ValueError for another split name.
ImageSplit load_fashion_mnist(const std::string& root = "", const std::string& split = "train", bool scaled = true);

}  // namespace st::data
