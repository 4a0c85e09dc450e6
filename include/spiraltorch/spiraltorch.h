#pragma once
// Umbrella header for the C++ API.
#include "spiraltorch/autograd.h"
#include "spiraltorch/autograd_function.h"
#include "spiraltorch/gradient_gate.h"
#include "spiraltorch/device.h"
#include "spiraltorch/dtype.h"
#include "spiraltorch/error.h"
#include "spiraltorch/generator.h"
#include "spiraltorch/memory.h"
#include "spiraltorch/ops.h"
#include "spiraltorch/tensor.h"
