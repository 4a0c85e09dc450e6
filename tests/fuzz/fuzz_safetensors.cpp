// libFuzzer target for the checkpoint readers. Built only with
// -DSPIRALTORCH_BUILD_FUZZERS=ON and clang:
//   build/fuzz/fuzz_safetensors -max_total_time=300 tests/data/bad_safetensors
// Any exception other than CheckpointError, or a sanitizer report, is a bug.
#include <cstddef>
#include <cstdint>
#include <string>

#include "spiraltorch/io/checkpoint.h"
#include "spiraltorch/io/safetensors.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  try {
    st::io::Checkpoint c = st::io::load_safetensors_bytes(bytes, "fuzz");
    // Whatever loads must round-trip.
    st::io::Checkpoint again = st::io::load_safetensors_bytes(st::io::save_safetensors_bytes(c.tensors, c.metadata));
    if (again.tensors.size() != c.tensors.size()) __builtin_trap();
  } catch (const st::CheckpointError&) {
  }
  try {
    st::io::load_bincode_bytes(bytes, "fuzz");
  } catch (const st::CheckpointError&) {
  }
  try {
    st::io::load_json_bytes(bytes, "fuzz");
  } catch (const st::CheckpointError&) {
  }
  return 0;
}
