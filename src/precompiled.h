// The headers nearly every library source parses, compiled once (CMake's precompiled header,
// SPIRALTORCH_PCH): parsing them was over half of a typical source's compile time (0.7 of 1.2 s).
// Sources still include what they use; a build with -DSPIRALTORCH_PCH=OFF checks that.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "spiraltorch/autograd.h"
#include "spiraltorch/error.h"
#include "spiraltorch/ops.h"
#include "spiraltorch/tensor.h"
