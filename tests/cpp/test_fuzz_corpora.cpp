// Replays the fuzz corpora kept in tests/fuzz/corpus/<target>/ through the same input
// functions the libFuzzer targets call: each kept input must be rejected with
// CheckpointError or round-trip, in every build (and under the sanitizers in
// scripts/sanitize.sh).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "../fuzz/fuzz_inputs.h"

namespace {

namespace fs = std::filesystem;

class FuzzCorpus : public ::testing::TestWithParam<const char*> {};

TEST_P(FuzzCorpus, EveryKeptInputIsRejectedCleanlyOrRoundTrips) {
  const std::string target = GetParam();
  const fs::path dir = fs::path(SPIRALTORCH_FUZZ_CORPUS_DIR) / target;
  ASSERT_TRUE(fs::is_directory(dir)) << dir;
  const auto fn = st::fuzz::input_fn(target);
  ASSERT_NE(fn, nullptr);
  size_t count = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (!entry.is_regular_file()) continue;
    std::ifstream in(entry.path(), std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_NO_THROW(fn(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size())) << entry.path();
    ++count;
  }
  EXPECT_GE(count, 10u) << "corpus " << dir << " is nearly empty";
}

INSTANTIATE_TEST_SUITE_P(Readers, FuzzCorpus,
                         ::testing::Values("safetensors", "json", "bincode", "manifest", "structure", "spiralk"));

TEST(FuzzInputs, UnknownTargetHasNoFunction) { EXPECT_EQ(st::fuzz::input_fn("yaml"), nullptr); }

}  // namespace
