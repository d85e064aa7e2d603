// GoogleTest main for the property suites. Sizes the RapidCheck budget before any
// property runs: RC_PARAMS wins where it sets a value; otherwise max_success is
// kBaseCases x BROKER_BUDGET (1 in `scripts/test`, 10 in `scripts/verify`, a fraction in
// sanitizer builds), at least kMinCases, and sizes go up to 100.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <string>

namespace {

#ifndef PROPS_BASE_CASES
#define PROPS_BASE_CASES 2500
#endif
constexpr double kBaseCases = PROPS_BASE_CASES;
constexpr long kMinCases = 100;

void size_budget() {
  std::string params = std::getenv("RC_PARAMS") ? std::getenv("RC_PARAMS") : "";
  double budget = 1;
  if (const char* b = std::getenv("BROKER_BUDGET")) budget = std::atof(b);
  if (params.find("max_success") == std::string::npos) {
    const long cases = std::max(kMinCases, static_cast<long>(kBaseCases * budget));
    params += " max_success=" + std::to_string(cases);
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
