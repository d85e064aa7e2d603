// GoogleTest main for the property suites. Sizes the RapidCheck budget before any
// property runs: RC_PARAMS wins where it sets a value; otherwise max_success is
// kBaseCases x BROKER_BUDGET (1 in `scripts/test`, 10 in `scripts/verify`) and sequences
// are up to 100 steps long.
#include <cstdlib>
#include <string>

#include <gtest/gtest.h>

namespace {

constexpr long kBaseCases = 2500;

void size_budget() {
  std::string params = std::getenv("RC_PARAMS") ? std::getenv("RC_PARAMS") : "";
  long budget = 1;
  if (const char* b = std::getenv("BROKER_BUDGET")) budget = std::max(1L, std::atol(b));
  if (params.find("max_success") == std::string::npos) {
    params += " max_success=" + std::to_string(kBaseCases * budget);
  }
  if (params.find("max_size") == std::string::npos) params += " max_size=100";
  setenv("RC_PARAMS", params.c_str(), 1);
}

}  // namespace

int main(int argc, char** argv) {
  size_budget();
  testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
