#pragma once
// expect_error<E>(f, parts): f throws an E whose message names every part (the op, the values).
#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace st::test {

template <typename E, typename F>
void expect_error(F f, const std::vector<std::string>& parts) {
  try {
    f();
    ADD_FAILURE() << "no exception";
  } catch (const E& e) {
    for (const std::string& p : parts) EXPECT_NE(std::string(e.what()).find(p), std::string::npos) << e.what();
  }
}

}  // namespace st::test
