// The nanobind and library headers every binding source parses, compiled once (SPIRALTORCH_PCH):
// over a third of a binding source's compile time. No binding makes an STL type opaque, so the
// type casters included here convert the same way in every source.
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include "spiraltorch/autograd.h"
#include "spiraltorch/error.h"
#include "spiraltorch/ops.h"
#include "spiraltorch/tensor.h"
