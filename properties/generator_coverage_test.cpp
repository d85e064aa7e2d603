// Evidence that the generators reach the contract's corners: in the every-operation mix
// each op kind is at least 5% of the steps, and across the four mixes the states that
// matter are reached in a good share of sequences. A generator change that stops reaching
// a corner fails here instead of silently weakening the suite. (Each mix also runs as its
// own property in broker_matches_model_test.cpp; here a smaller run collects the tallies.)
#include <gtest/gtest.h>
#include <rapidcheck.h>

#include <cstdio>

#include "mixes.h"

namespace props {
namespace {

TEST(GeneratorCoverage, EveryOpKindIsAtLeastFivePercentOfSteps) {
  Coverage::get().reset();
  ASSERT_TRUE(rc::check("every operation", [] { every_operation(); }));
  const Coverage& c = Coverage::get();
  std::printf("%ld sequences, %ld steps (%.1f per sequence)\n", c.sequences, c.steps,
              static_cast<double>(c.steps) / c.sequences);
  EXPECT_EQ(c.steps_by_kind.size(), 16u) << "every op kind must appear";
  for (const auto& [kind, n] : c.steps_by_kind) {
    const double share = 100.0 * n / c.steps;
    std::printf("  step %-14s %5.1f%%\n", kind.c_str(), share);
    EXPECT_GE(share, 5.0) << kind << " is under 5% of steps";
  }
}

TEST(GeneratorCoverage, TheStatesThatMatterAreReached) {
  Coverage::get().reset();
  ASSERT_TRUE(rc::check("every operation", [] { every_operation(); }));
  ASSERT_TRUE(rc::check("push delivery", [] { push_delivery(); }));
  ASSERT_TRUE(rc::check("pull delivery", [] { pull_delivery(); }));
  ASSERT_TRUE(rc::check("retention and seek", [] { retention_and_seek(); }));
  const Coverage& c = Coverage::get();
  // Minimum share of all sequences that must reach each state (percent). Measured shares
  // are about twice these (see the printout), so a fifth of the budget still passes.
  const std::map<std::string, double> wanted = {
      {"redelivery", 20},
      {"dead letter", 5},
      {"seek", 30},
      {"retention gap", 5},
      {"typed error", 80},
      {"unsubscribe in handler", 5},
      {"publish in handler", 5},
      {"expired back", 3},
      {"ack accepted", 5},
      {"filtered", 5},
      {"seek in handler", 2},
      // R10/R12/R13 (seek, stats, dead_letters by a group's name), R9, R13
      {"by group name", 8},
      {"unsubscribe unknown topic", 8},
      {"committed behind cursor", 5},
  };
  for (const auto& [state, min_share] : wanted) {
    auto it = c.sequences_reaching.find(state);
    const double share = it == c.sequences_reaching.end() ? 0 : 100.0 * it->second / c.sequences;
    std::printf("  reached %-26s %5.1f%% of %ld sequences (want >= %.0f%%)\n", state.c_str(), share,
                c.sequences, min_share);
    EXPECT_GE(share, min_share) << state;
  }
}

}  // namespace
}  // namespace props
