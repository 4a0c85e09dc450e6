#pragma once
// The error hierarchy, mirrored one-to-one by the Python exceptions.
#include <stdexcept>
#include <string>

namespace st {

class SpiralError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};
class ShapeError : public SpiralError {
 public:
  using SpiralError::SpiralError;
};
class DtypeError : public SpiralError {
 public:
  using SpiralError::SpiralError;
};
class DeviceUnavailableError : public SpiralError {
 public:
  using SpiralError::SpiralError;
};
class CheckpointError : public SpiralError {
 public:
  using SpiralError::SpiralError;
};
// An allocation the machine cannot satisfy (Python: OutOfMemoryError, also a MemoryError).
class OutOfMemoryError : public SpiralError {
 public:
  using SpiralError::SpiralError;
};
// Bad argument values that are neither shapes nor dtypes (negative sizes, bad dims).
class ValueError : public SpiralError {
 public:
  using SpiralError::SpiralError;
};
class IndexError : public SpiralError {
 public:
  using SpiralError::SpiralError;
};

}  // namespace st
