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

}  // namespace
}  // namespace broker
