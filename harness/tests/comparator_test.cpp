// The comparator: identical runs report nothing; a report names the step and both sides.
#include "harness/comparator.h"

#include <gtest/gtest.h>

#include "oplang/text.h"

namespace harness {
namespace {

TEST(ComparatorTest, AgreeingScriptHasNoDifference) {
  const auto diff =
      first_difference(oplang::parse("create_topic t\n"
                                     "subscribe t a group=g\n"
                                     "subscribe t b group=g script=[reject]\n"
                                     "publish t x\n"
                                     "publish t y\n"
                                     "drain\n"
                                     "stats t a\n"));
  EXPECT_FALSE(diff.has_value()) << describe(*diff);
}

TEST(ComparatorTest, AgreesOnStallYieldSubscriptionsAndTopics) {
  const auto diff =
      first_difference(oplang::parse("create_topic t\n"
                                     "subscribe t a group=g script=[stall(20),stall(5)+throw]\n"
                                     "subscribe t b group=g\n"
                                     "subscribe_pull t p\n"
                                     "publish t x\n"
                                     "publish t y\n"
                                     "yield\n"
                                     "drain\n"
                                     "drain\n"
                                     "subscriptions t\n"
                                     "topics\n"
                                     "subscriptions nope\n"));
  EXPECT_FALSE(diff.has_value()) << describe(*diff);
}

TEST(ComparatorTest, AgreesOnEndAndOldestOffsets) {
  const auto diff =
      first_difference(oplang::parse("end_offset t\n"
                                     "create_topic t messages=2\n"
                                     "end_offset t\n"
                                     "oldest_offset t\n"
                                     "publish t x\n"
                                     "publish t y\n"
                                     "publish t z\n"
                                     "end_offset t\n"
                                     "oldest_offset t\n"
                                     "oldest_offset nope\n"
                                     "delete_topic t\n"
                                     "end_offset t\n"));
  EXPECT_FALSE(diff.has_value()) << describe(*diff);
}

TEST(ComparatorTest, AgreesOnCommittedPositionsGroupNamesAndUnknownTopics) {
  const auto diff =
      first_difference(oplang::parse("create_topic t\n"
                                     "subscribe t a group=g max=2 script=[reject,throw]\n"
                                     "subscribe t b group=g max=2\n"
                                     "subscribe_pull t p start=begin max=1\n"
                                     "publish t x\n"
                                     "publish t y\n"
                                     "advance 5\n"
                                     "drain\n"
                                     "stats t g\n"
                                     "drain\n"
                                     "stats t a\n"
                                     "poll t p w max=2\n"
                                     "advance 30000\n"
                                     "expire\n"
                                     "dead_letters t p\n"
                                     "stats t p\n"
                                     "seek t g 0\n"
                                     "dead_letters t g\n"
                                     "stats t g\n"
                                     "stats t h\n"
                                     "unsubscribe nope a\n"
                                     "unsubscribe t nobody\n"
                                     "subscribe t c script=[unsubscribe(nope,c)]\n"
                                     "publish t z\n"
                                     "drain\n"));
  EXPECT_FALSE(diff.has_value()) << describe(*diff);
}

// Issue 13: poll_wait (with poll's error order, R14), wait_idle, wait_delivered and
// broker::idempotent() handlers are compared like every other call.
TEST(ComparatorTest, AgreesOnPollWaitWaitsAndIdempotentHandlers) {
  const auto diff = first_difference(oplang::parse(
      "create_topic t messages=3\n"
      "subscribe_pull t p start=begin timeout=10\n"
      "poll_wait nope p \"\" timeout=1\n"  // InvalidArgument before UnknownTopic
      "poll_wait nope p w max=0\n"
      "poll_wait nope p w\n"
      "poll_wait t nobody w timeout=1\n"
      "wait_idle\n"
      "wait_delivered timeout=1\n"
      "subscribe t s max=2 idempotent script=[confirm,reject,reject,confirm]\n"
      "subscribe t a group=g idempotent\n"
      "subscribe t b group=g idempotent script=[throw]\n"
      "poll_wait t s w\n"  // WrongKind
      "publish t x\n"
      "publish t y\n"
      "wait_delivered\n"
      "poll_wait t p w max=3 timeout=1\n"
      "poll_wait t p w timeout=1\n"  // nothing arrives while it waits
      "advance 10\n"
      "expire\n"
      "drain\n"
      "wait_idle timeout=1\n"
      "drain\n"
      "wait_delivered\n"
      "seek t s 0\n"
      "seek t g 0\n"
      "wait_delivered\n"
      "drain\n"  // repeats of what s, a and b applied; y (dead for s) runs s's script again
      "stats t s\n"
      "stats t g\n"
      "publish t z\n"
      "publish t zz\n"  // retention drops x: skipped by s, by g after their catch-up
      "seek t s 2\n"
      "drain\n"
      "wait_delivered\n"
      "dead_letters t s\n"));
  EXPECT_FALSE(diff.has_value()) << describe(*diff);
}

TEST(ComparatorTest, DescribeShowsStepOpAndBothOutcomes) {
  Difference d{2, oplang::Drain{}, {}, {}};
  d.model.value = oplang::CountResult{1};
  d.broker.error = model::ErrorCode::kReentrantDrain;
  EXPECT_EQ(describe(d), "step 3: drain\n  model:  confirmed 1\n  broker: error reentrant_drain\n");
}

}  // namespace
}  // namespace harness
