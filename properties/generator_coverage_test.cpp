// The all-operations state machine, run with its evidence: every op kind is at least 5%
// of the steps, and the states that matter are reached in a good share of sequences.
// A generator change that stops reaching a corner fails here, not silently.
#include <cstdio>

#include <gtest/gtest.h>
#include <rapidcheck.h>

#include "state_machine.h"

namespace props {
namespace {

using namespace oplang;  // NOLINT: the op kinds read as a list below

TEST(BrokerMatchesModel, EveryOperationInAnyOrder_ReachingEveryCorner) {
  Coverage::get().reset();
  const bool ok = rc::check("broker matches model on every operation", [] {
    check_broker_matches_model<CreateTopic, DeleteTopic, Publish, Subscribe, SubscribePull,
                               Unsubscribe, Seek, Drain, Poll, Ack, Nack, Extend, Expire, Advance,
                               GetStats, GetDeadLetters>();
  });
  ASSERT_TRUE(ok) << "see the counterexample above";

  const Coverage& c = Coverage::get();
  ASSERT_GT(c.sequences, 0);
  std::printf("%ld sequences, %ld steps (%.1f per sequence)\n", c.sequences, c.steps,
              static_cast<double>(c.steps) / c.sequences);
  EXPECT_EQ(c.steps_by_kind.size(), 16u) << "every op kind must appear";
  for (const auto& [kind, n] : c.steps_by_kind) {
    const double share = 100.0 * n / c.steps;
    std::printf("  step %-14s %5.1f%%\n", kind.c_str(), share);
    EXPECT_GE(share, 5.0) << kind << " is under 5% of steps";
  }
  // Minimum share of sequences that must reach each state (percent).
  const std::map<std::string, double> wanted = {
      {"redelivery", 20},         {"dead letter", 5},      {"seek", 20},
      {"retention gap", 2},       {"typed error", 80},     {"unsubscribe in handler", 2},
      {"publish in handler", 2},  {"expired back", 5},     {"ack accepted", 5},
      {"filtered", 5},
  };
  for (const auto& [state, min_share] : wanted) {
    auto it = c.sequences_reaching.find(state);
    const double share = it == c.sequences_reaching.end() ? 0 : 100.0 * it->second / c.sequences;
    std::printf("  reached %-24s %5.1f%% of sequences (want >= %.0f%%)\n", state.c_str(), share,
                min_share);
    EXPECT_GE(share, min_share) << state;
  }
}

}  // namespace
}  // namespace props
