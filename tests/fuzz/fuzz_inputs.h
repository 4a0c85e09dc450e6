#pragma once
// One function per checkpoint reader that feeds it arbitrary bytes. A reader may reject
// the bytes only with CheckpointError; anything else escapes (and the fuzzer reports it as a
// crash), as does a broken invariant. What it accepts must be a fixed point of
// save(load(·)): saving, loading and saving again gives the same bytes.
// Shared by the libFuzzer targets (tests/fuzz/fuzz_*.cpp) and the corpus replay test
// (tests/cpp/test_fuzz_corpora.cpp), so the kept corpora run in every test build.
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace st::fuzz {

void safetensors_input(const uint8_t* data, size_t size);
void json_input(const uint8_t* data, size_t size);
void bincode_input(const uint8_t* data, size_t size);
void manifest_input(const uint8_t* data, size_t size);
// st.load's structure decoder (io::decode_structure): CheckpointError or a round trip.
void structure_input(const uint8_t* data, size_t size);
// The SpiralK parser and evaluator: SpiralKError or a result, never a crash.
void spiralk_input(const uint8_t* data, size_t size);

// The function for a target name ("safetensors", "json", "bincode", "manifest", "structure", "spiralk"),
// or nullptr.
using InputFn = void (*)(const uint8_t*, size_t);
InputFn input_fn(std::string_view target);

}  // namespace st::fuzz
