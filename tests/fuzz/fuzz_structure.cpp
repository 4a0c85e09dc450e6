// libFuzzer entry point for the structure input (see fuzz_inputs.h and tests/fuzz/README.md).
#include "fuzz_inputs.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  st::fuzz::structure_input(data, size);
  return 0;
}
