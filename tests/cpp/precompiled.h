// The headers nearly every C++ test parses, compiled once (SPIRALTORCH_PCH): GoogleTest and the
// library's umbrella header were about half of a test source's compile time (2.0 of 4.2 s at -O0).
// Tests still include what they use; a build with -DSPIRALTORCH_PCH=OFF checks that.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "spiraltorch/spiraltorch.h"
