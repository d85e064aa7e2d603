// One time line (SPEC R11) through the public API: every call that takes `now` also comes
// without it and then reads the broker's clock, so a program on a real clock never has to
// pass a time of its own.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "broker/broker.h"

namespace broker {
namespace {

// On a steady clock: a message held by "w" for 10 ms, handed back by the clock alone.
TEST(TimeLine, EveryCallThatTakesNowAlsoComesWithoutIt) {
  Broker b;  // a SteadyClock
  b.create_topic("t");
  PullOptions o;
  o.ack_timeout = Millis{3'600'000};
  o.start = StartPosition::beginning();
  b.subscribe_pull("t", "s", o);
  b.publish("t", "m0");
  b.publish("t", "m1");
  const Time before = b.clock().now();
  const std::vector<Received> got = b.poll("t", "s", "w", 1);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_GE(got[0].deadline, before + o.ack_timeout) << "held from the clock's now";
  EXPECT_TRUE(b.extend(got[0].receipt, Millis{10}));
  EXPECT_TRUE(b.nack(got[0].receipt, Millis{10}));
  const std::vector<Received> next = b.poll("t", "s", "w", 1);
  ASSERT_EQ(next.size(), 1u);
  EXPECT_EQ(next[0].message->payload(), "m1");
  EXPECT_TRUE(b.ack(next[0].receipt));
  EXPECT_TRUE(b.expire().empty());
  EXPECT_EQ(b.lag("t", "s").messages, 1u);  // m0, waiting for its retry
}

TEST(TimeLine, TermAndPollGroupWithoutNow) {
  Broker b;
  TopicOptions t;
  t.partitions = 2;
  b.create_topic("orders", t);
  GroupOptions g;
  g.pull.start = StartPosition::beginning();
  b.join_group("orders", "billing", "A", g);
  b.publish_to("orders", 1, "m");
  const std::vector<Received> got = b.poll_group("orders", "billing", "A", 2);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_TRUE(b.term(got[0].receipt));
  EXPECT_EQ(b.dead_letters(partition_name("orders", 1), "billing").size(), 1u);
}

// The newcomer's trap: a literal time on a real clock. It is refused, naming both times,
// instead of quietly handing out nothing; a time from the clock, or none, is taken.
TEST(TimeLine, ANowFarFromTheRealClockIsRefusedNamingBothTimes) {
  Broker b;  // a SteadyClock
  b.create_topic("t");
  PullOptions o;
  o.start = StartPosition::beginning();
  o.ack_timeout = Millis{3'600'000};
  b.subscribe_pull("t", "s", o);
  b.publish("t", "m0");
  const Time clock_now = b.clock().now();
  for (const Time far : {clock_now - 2 * kMaxClockSkew, clock_now + 2 * kMaxClockSkew}) {
    try {
      (void)b.poll("t", "s", "w", 1, far);
      FAIL() << "poll at " << far.time_since_epoch().count() << " ms was taken";
    } catch (const InvalidArgument& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find(std::to_string(far.time_since_epoch().count()) + " ms"),
                std::string::npos)
          << what;
      EXPECT_NE(what.find("the broker's clock ("), std::string::npos) << what;
    }
    EXPECT_THROW((void)b.expire(far), InvalidArgument);
    EXPECT_THROW((void)b.lag("t", "s", far), InvalidArgument);
  }
  EXPECT_EQ(b.stats("t", "s").in_flight, 0u) << "a refused poll holds nothing";
  const std::vector<Received> got =
      b.poll("t", "s", "w", 1, b.clock().now() - kMaxClockSkew / 2);  // held 30 s less
  ASSERT_EQ(got.size(), 1u);
  EXPECT_TRUE(b.ack(got[0].receipt, b.clock().now()));
}

// A ManualClock is the program's: it passes whatever times it likes.
TEST(TimeLine, AManualClockTakesAnyNow) {
  auto clock = std::make_shared<ManualClock>(Time{Millis{1'000'000'000}});
  Broker b(BrokerOptions::synchronous().with_clock(clock));
  b.create_topic("t");
  PullOptions o;
  o.start = StartPosition::beginning();
  b.subscribe_pull("t", "s", o);
  b.publish("t", "m0");
  const std::vector<Received> got = b.poll("t", "s", "w", 1, Time{});
  ASSERT_EQ(got.size(), 1u);
  EXPECT_TRUE(b.ack(got[0].receipt, Time{Millis{1}}));
}

}  // namespace
}  // namespace broker
