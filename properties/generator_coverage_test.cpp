// Evidence that the generators reach the contract's corners: in the every-operation mix
// each op kind is a fair share of the steps, across the four mixes the states that matter
// are reached in a good share of sequences, and swarm sequences (state_machine.h) reach the
// corners that need long runs of one kind more often than uniform ones. A generator change
// that stops reaching a corner fails here instead of silently weakening the suite. (Each mix
// also runs as its own property in broker_matches_model_test.cpp; here a smaller run
// collects the tallies.)
#include <gtest/gtest.h>
#include <rapidcheck.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <string>

#include "mixes.h"
#include "uniform.h"

namespace props {
namespace {

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool kSanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif
#else
constexpr bool kSanitized = false;
#endif

// The long tallies measure the generators, which are the same in every build: a sanitizer
// build (ten times slower here) adds nothing to them, so they run in the default build only.
#define SKIP_LONG_TALLY_IF_SANITIZED() \
  if (kSanitized) GTEST_SKIP() << "generator statistics: measured in the default build"

// Shares of steps per op kind in the every-operation mix; each must be >= min_share %.
void expect_step_shares(const char* what, Swarm swarm, double min_share) {
  Coverage::get().reset();
  ASSERT_TRUE(rc::check(what, [swarm] { every_operation(swarm); }));
  const Coverage& c = Coverage::get();
  std::printf("%s: %ld sequences, %ld steps (%.1f per sequence)\n", what, c.sequences, c.steps,
              static_cast<double>(c.steps) / c.sequences);
  EXPECT_EQ(c.steps_by_kind.size(), 41u) << "every op kind must appear";
  for (const auto& [kind, n] : c.steps_by_kind) {
    const double share = 100.0 * n / c.steps;
    std::printf("  step %-14s %5.1f%%\n", kind.c_str(), share);
    EXPECT_GE(share, min_share) << kind << " is under " << min_share << "% of steps";
  }
}

// Uniformly a kind listed once is 1/42 of the steps (2.4%); in swarm sequences the kinds a
// sequence keeps share its steps, the always-kept ones (publish, subscribe) get more (the
// others measured 1.9-2.4% at budget x1 on 2026-12-02, with 41 entries, and 1.9-2.4% with 42; CI's
// smaller budget spreads them wider). The floors sit a little below.
TEST(GeneratorCoverage, EveryOpKindIsAtLeastTwoPercentOfUniformSteps) {
  expect_step_shares("every operation, uniform", Swarm::kUniform, 2.0);
}

TEST(GeneratorCoverage, EveryOpKindIsAtLeastOnePointFourPercentOfSwarmSteps) {
  expect_step_shares("every operation, swarm", Swarm::kSwarm, 1.4);
}

// A generator's coin has the same odds at every size (uniform.h): RapidCheck's inRange,
// which the generators used before, gave inRange(0, 2) == 0 in every case below size 50,
// so half the sequences never published by name (CI caught publish at 1.94% of steps).
TEST(GeneratorCoverage, ChoicesHaveTheSameOddsAtEverySize) {
  for (int size : {0, 1, 10, 49, 50, 100, 400}) {
    int heads = 0;
    int top = 0;
    constexpr int kDraws = 4000;
    for (int i = 0; i < kDraws; ++i) {
      rc::Random random(static_cast<std::uint64_t>(i) * 7919u + 17u);
      const rc::Random other = random.split();
      heads += uniform_in(0, 2)(random, size).value() == 0 ? 1 : 0;
      top += uniform_in(0, 8)(other, size).value() == 7 ? 1 : 0;
    }
    // Expected 2000 and 500; 6 standard deviations are 190 and 125.
    EXPECT_NEAR(heads, kDraws / 2, 190) << "a coin at size " << size;
    EXPECT_NEAR(top, kDraws / 8, 125) << "the last of 8 at size " << size;
  }
}

/// Prints each state's share of the sequences and expects at least its minimum (percent).
void expect_reached(const Coverage& c, const std::map<std::string, double>& wanted) {
  for (const auto& [state, min_share] : wanted) {
    auto it = c.sequences_reaching.find(state);
    const double share = it == c.sequences_reaching.end() ? 0 : 100.0 * it->second / c.sequences;
    std::printf("  reached %-34s %5.1f%% of %ld sequences (want >= %.1f%%)\n", state.c_str(), share,
                c.sequences, min_share);
    EXPECT_GE(share, min_share) << state;
  }
}

TEST(GeneratorCoverage, TheStatesThatMatterAreReached) {
  SKIP_LONG_TALLY_IF_SANITIZED();
  Coverage::get().reset();
  ASSERT_TRUE(rc::check("every operation", [] { every_operation(); }));
  ASSERT_TRUE(rc::check("push delivery", [] { push_delivery(); }));
  ASSERT_TRUE(rc::check("pull delivery", [] { pull_delivery(); }));
  ASSERT_TRUE(rc::check("retention and seek", [] { retention_and_seek(); }));
  ASSERT_TRUE(rc::check("consumer controls", [] { consumer_controls(); }));
  ASSERT_TRUE(rc::check("partitioned topics", [] { partitioned_topics(); }));
  ASSERT_TRUE(rc::check("ordered workers", [] { ordered_workers(); }));
  ASSERT_TRUE(rc::check("consumer groups", [] { consumer_groups(); }));
  ASSERT_TRUE(rc::check("push consumer groups", [] { push_consumer_groups(); }));
  const Coverage& c = Coverage::get();
  std::printf("%ld sequences, %ld of them swarm\n", c.sequences, c.swarm_sequences);
  // Minimum share of all sequences that must reach each state (percent). Measured shares
  // are about twice these (see the printout; set from a run at budget x1 on 2026-12-01,
  // three lowered on 2026-12-02 when two mixes joined the count, seven more when the push
  // consumer groups' mix made it nine: a state outside that mix loses a ninth of its share),
  // so a fifth of the budget, with its wider spread, still passes.
  const std::map<std::string, double> wanted = {
      {"redelivery", 10},
      {"dead letter", 3},
      {"seek", 18},
      {"retention gap", 3},
      {"typed error", 80},
      {"unsubscribe in handler", 7},
      {"publish in handler", 5},
      {"expired back", 2},
      {"ack accepted", 3},
      {"filtered", 4},
      {"seek in handler", 2},
      // R10/R12/R13 (seek, stats, dead_letters by a group's name), R9, R13
      {"by group name", 5},
      {"unsubscribe unknown topic", 7},
      {"committed behind cursor", 4},
      // issue 13: poll_wait, the waits, broker::idempotent()
      {"poll_wait received", 3.5},
      {"poll_wait invalid argument", 3.5},
      {"wait: work left", 15},
      {"wait: nothing left", 20},
      {"idempotent repeat", 0.8},
      // issue 13: the observations (subscriptions, end_offset, oldest_offset)
      {"observation unknown topic", 15},
      {"oldest offset moved", 1.5},
      // issue 18: R22's bound holding a poll back, R23's term (pull) and terminate (push)
      {"poll held back by max_in_flight", 1},
      {"term accepted", 1},
      {"terminated dead letter", 0.6},
      {"delayed nack accepted", 0.6},
      // issue 18: R25-R28
      {"redrive moved", 0.5},
      {"redriven to a topic", 0.25},
      {"dead letters purged", 0.5},
      {"poll while paused", 0.5},
      {"drain while paused", 0.5},
      {"lag with age", 0.5},
      {"seek to time", 0.5},
      // issue 15: R29
      {"keyed publish on a partition", 1},
      {"delivery on a partition", 1},
      {"partition out of range", 0.5},
      {"partitioned topic named for a partition", 1},
      // issue 58: a partitioned topic's totals (end_offset, stats, lag of a name on every
      // partition: a group's)
      {"totals of a partitioned topic", 0.5},
      // issue 15: R31
      // rare: about 0.1% (some 22 of the 22,500 sequences) since more mixes joined the
      // count, and a fresh-clone CI once saw 10, under a floor of 0.05%. A floor of 5
      // sequences still proves the mixes reach it; OrderingKeys.* pin the state itself.
      {"key held back, then handed out", 0.02},
      // issue 15: R32
      {"group rebalanced", 1},
      {"group delivery", 1},
      {"group redelivery", 0.3},
      {"group ack accepted", 0.3},
      {"group ack refused", 0.3},
      {"push group rebalanced", 0.3},
      {"push group delivery", 0.3},
      {"push group redelivery", 0.1},
      // issue 19: a Publisher made before its topic was deleted, used after (R2)
      {"publish via a Publisher after a delete", 0.2},
      // issue 58: create_topic_if_absent (R1)
      {"topic already there", 0.2},
      {"topic there with other options", 0.2},
      // issue 58: each reason an answer is refused for (R11, R32)
      {"answer late", 1},
      {"answer not_holder", 2},
      {"answer already_settled", 8},
      {"answer unknown_offset", 14},
      {"answer stale_generation", 3.5},
  };
  expect_reached(c, wanted);
  // R29: keys from the whole byte range (partitioners and the text format bit for bit).
  const double high = 100.0 * static_cast<double>(c.keyed_high) /
                      static_cast<double>(std::max(1L, c.keyed_publishes));
  std::printf("  keyed publishes with a byte >= 0x80: %.1f%% of %ld\n", high, c.keyed_publishes);
  EXPECT_GT(high, 20.0);
}

// Pairwise coverage (option_pairs.h), a `sometimes` check in Antithesis's sense: across the
// mixes every listed pair of a subscription's features (its options, its topic's retention,
// a pause, redrive, seek or keyed publish it saw) is exercised by a delivery in at least one
// sequence, or the run fails naming the pair. Printed: each pair's share of the sequences.
TEST(GeneratorCoverage, EveryPairOfOptionsIsExercised) {
  SKIP_LONG_TALLY_IF_SANITIZED();
  Coverage::get().reset();
  ASSERT_TRUE(rc::check("every operation", [] { every_operation(); }));
  ASSERT_TRUE(rc::check("push delivery", [] { push_delivery(); }));
  ASSERT_TRUE(rc::check("pull delivery", [] { pull_delivery(); }));
  ASSERT_TRUE(rc::check("consumer controls", [] { consumer_controls(); }));
  ASSERT_TRUE(rc::check("ordered workers", [] { ordered_workers(); }));
  ASSERT_TRUE(rc::check("controls on every option", [] { controls_on_every_option(); }));
  const Coverage& c = Coverage::get();
  const std::vector<std::string> expected = OptionPairs::expected();
  std::size_t reached = 0;
  for (const std::string& pair : expected) {
    auto it = c.sequences_pairing.find(pair);
    const long n = it == c.sequences_pairing.end() ? 0 : it->second;
    reached += n > 0 ? 1 : 0;
    std::printf("  pair %-34s %5.1f%% of %ld sequences\n", pair.c_str(),
                100.0 * static_cast<double>(n) / static_cast<double>(c.sequences), c.sequences);
    EXPECT_GT(n, 0) << "the pair " << pair << " was never exercised";
  }
  std::printf("option pairs exercised: %zu of %zu\n", reached, expected.size());
}

// R33: the durable mixes make disk faults fail calls and reopen failed stores in a stated
// share of their sequences; R20: a restart leaves push subscriptions waiting for a handler.
// (R34's "spent after a restart" is counted too, but reached too rarely to ask for:
// DiskFaults.R34* and DurableKill9.* make it happen.)
TEST(GeneratorCoverage, TheDurableMixesReachDiskFaults) {
  SKIP_LONG_TALLY_IF_SANITIZED();
  Coverage::get().reset();
  ASSERT_TRUE(rc::check("durable operation", [] { durable_operation(); }));
  ASSERT_TRUE(rc::check("durable delivery", [] { durable_delivery(); }));
  const Coverage& c = Coverage::get();
  const std::map<std::string, double> wanted = {
      {"disk fault failed a call", 8},
      {"reopened after a storage failure", 4},
      {"damage at rest cut a log", 4},
      {"damage at rest was CorruptLog, then repaired", 2},
      // issue 58: waiting_for_handler lists what a restart left without a handler (R20)
      {"waiting for a handler", 3},
      {"resumed by resubscribe", 1},
  };
  expect_reached(c, wanted);
}

// Swarm testing's claim, measured: the same number of every-operation sequences (at least
// kSequences, whatever the budget), uniform and swarm, and the share of each that reaches
// corners that need long runs of one kind. Swarm is "clearly more" where its share is at
// least 1.5 times the uniform one and above it by 3 standard errors of the difference.
TEST(GeneratorCoverage, SwarmReachesLongRunCornersMoreOftenThanUniform) {
  SKIP_LONG_TALLY_IF_SANITIZED();
  constexpr long kSequences = 5000;
  const std::vector<std::string> corners = {
      "5 publishes in a row", "drain of 5+ calls", "offer attempt 3+",  "expire of 2+",
      "backlog 5+",           "retention gap",     "idempotent repeat", "dead letter"};
  std::map<std::string, double> uniform, swarm;  // shares in [0, 1]
  long n = 0;
  for (const Swarm mode : {Swarm::kUniform, Swarm::kSwarm}) {
    const char* name = mode == Swarm::kSwarm ? "every operation, swarm" : "every operation";
    Coverage::get().reset();
    while (Coverage::get().sequences < kSequences) {
      ASSERT_TRUE(rc::check(name, [mode] { every_operation(mode); }));
    }
    const Coverage& c = Coverage::get();
    n = c.sequences;
    for (const std::string& corner : corners) {
      auto it = c.sequences_reaching.find(corner);
      (mode == Swarm::kSwarm ? swarm : uniform)[corner] =
          it == c.sequences_reaching.end() ? 0 : static_cast<double>(it->second) / n;
    }
  }
  std::printf("%ld sequences each, uniform and swarm\n", n);
  int clearly_more = 0;
  for (const std::string& corner : corners) {
    const double u = uniform[corner];
    const double w = swarm[corner];
    const double se = std::sqrt(u * (1 - u) / n + w * (1 - w) / n);
    const bool more = w >= 1.5 * u && w - u > 3 * se;
    clearly_more += more ? 1 : 0;
    std::printf("  %-22s uniform %5.1f%%  swarm %5.1f%%%s\n", corner.c_str(), 100 * u, 100 * w,
                more ? "  swarm clearly more" : "");
  }
  EXPECT_GE(clearly_more, 2) << "swarm should reach several long-run corners clearly more often";
}

}  // namespace
}  // namespace props
