// libFuzzer entry point for the bincode reader (see fuzz_inputs.h and tests/fuzz/README.md).
#include "fuzz_inputs.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  st::fuzz::bincode_input(data, size);
  return 0;
}
