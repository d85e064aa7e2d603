// broker::idempotent (broker/idempotent.h), one rule per test: an offer is confirmed
// without calling the wrapped handler only if that handler confirmed exactly that offset
// for that same subscription state; everything else is applied. Synchronous dispatcher and
// drain(), so every test is deterministic.
#include "broker/idempotent.h"

#include <gtest/gtest.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "broker/broker.h"
#include "test_support.h"

namespace broker {
namespace {

using testing::Push;
using testing::SyncBroker;

/// The inner handler's calls, as "subscription-tag@offset" (tag: what the test passes).
struct Applied {
  std::vector<std::string> calls;
  /// An inner handler that records `tag@offset` and confirms.
  Handler Recording(const std::string& tag) {
    return [this, tag](const Delivery& d) {
      calls.push_back(tag + "@" + std::to_string(d.message->offset()));
      return true;
    };
  }
};

using Calls = std::vector<std::string>;

TEST(Idempotent, ARepeatIsConfirmedWithoutCallingTheHandler) {
  Broker b{SyncBroker()};
  b.create_topic("orders");
  Applied applied;
  b.subscribe("orders", "billing", idempotent(applied.Recording("billing")));
  for (int i = 0; i < 3; ++i) b.publish("orders", "m");
  ASSERT_EQ(b.drain(), 3u);

  b.seek("orders", "billing", 0);  // the broker offers 0..2 again (at-least-once)
  EXPECT_EQ(b.drain(), 3u) << "each repeat is confirmed";

  EXPECT_EQ(applied.calls, (Calls{"billing@0", "billing@1", "billing@2"})) << "applied once";
  const auto s = b.stats("orders", "billing");
  EXPECT_EQ(s.delivered, 6u) << "the broker did offer them twice";
  EXPECT_EQ(s.confirmed, 6u);
  EXPECT_EQ(s.backlog, 0u);
}

TEST(Idempotent, ARecreatedTopicIsAppliedAgain) {
  Broker b{SyncBroker()};
  Applied applied;
  const Handler handler = idempotent(applied.Recording("billing"));
  b.create_topic("orders");
  b.subscribe("orders", "billing", handler);
  b.publish("orders", "first life 0");
  b.publish("orders", "first life 1");
  ASSERT_EQ(b.drain(), 2u);
  ASSERT_TRUE(b.unsubscribe("orders", "billing"));
  b.delete_topic("orders");

  b.create_topic("orders");  // same name, new log: offsets start at 0 again
  b.subscribe("orders", "billing", handler);
  b.publish("orders", "second life 0");
  b.publish("orders", "second life 1");
  EXPECT_EQ(b.drain(), 2u);

  EXPECT_EQ(applied.calls, (Calls{"billing@0", "billing@1", "billing@0", "billing@1"}))
      << "offsets 0 and 1 of the new topic are new messages, not repeats of the old ones";
}

TEST(Idempotent, OneWrappedHandlerOnTwoSubscriptionsAppliesEach) {
  Broker b{SyncBroker()};
  b.create_topic("orders");
  Applied applied;
  const Handler handler = idempotent(applied.Recording("shared"));
  b.subscribe("orders", "billing", handler);
  b.subscribe("orders", "audit", handler);
  b.publish("orders", "m0");
  b.publish("orders", "m1");

  EXPECT_EQ(b.drain(), 4u);

  EXPECT_EQ(applied.calls, (Calls{"shared@0", "shared@1", "shared@0", "shared@1"}))
      << "audit's offers are not repeats of billing's";
  EXPECT_EQ(b.stats("orders", "audit").confirmed, 2u);
}

TEST(Idempotent, SeekForwardThenBackAppliesWhatWasSkipped) {
  Broker b{SyncBroker()};
  b.create_topic("orders");
  Applied applied;
  b.subscribe("orders", "billing", idempotent(applied.Recording("billing")),
              Push(kDefaultMaxDeliveries, StartPosition::beginning()));
  for (int i = 0; i < 5; ++i) b.publish("orders", "m");
  b.seek("orders", "billing", 3);  // skips 0..2 unseen
  ASSERT_EQ(b.drain(), 2u);
  ASSERT_EQ(applied.calls, (Calls{"billing@3", "billing@4"}));

  b.seek("orders", "billing", 0);
  EXPECT_EQ(b.drain(), 5u);

  EXPECT_EQ(applied.calls, (Calls{"billing@3", "billing@4", "billing@0", "billing@1", "billing@2"}))
      << "0..2 were never applied: only 3 and 4 are repeats";
}

TEST(Idempotent, ADeadLetteredOffsetIsAppliedOnReplay) {
  Broker b{SyncBroker()};
  b.create_topic("orders");
  std::vector<std::string> calls;
  bool broken = true;  // offset 0 fails until the "fix is deployed"
  b.subscribe("orders", "billing", idempotent([&](const Delivery& d) {
                calls.push_back("billing@" + std::to_string(d.message->offset()));
                if (broken && d.message->offset() == 0) throw std::runtime_error("poison");
                return true;
              }),
              Push(/*max_deliveries=*/1));
  for (int i = 0; i < 3; ++i) b.publish("orders", "m");
  b.drain();  // 0 fails once and is dead-lettered; the drain stops billing there
  b.drain();  // 1 and 2 are applied
  ASSERT_EQ(b.dead_letters("orders", "billing").size(), 1u);
  ASSERT_EQ(calls, (Calls{"billing@0", "billing@1", "billing@2"}));

  broken = false;
  b.seek("orders", "billing", 0);  // replay from the dead letter
  EXPECT_EQ(b.drain(), 3u);

  EXPECT_EQ(calls, (Calls{"billing@0", "billing@1", "billing@2", "billing@0"}))
      << "the dead-lettered offset was never applied: the replay applies it, and only it";
  EXPECT_EQ(b.stats("orders", "billing").backlog, 0u);
}

TEST(Idempotent, AFailedOrThrowingOfferIsAppliedWhenItComesBack) {
  Broker b{SyncBroker()};
  b.create_topic("orders");
  std::vector<std::pair<Offset, int>> calls;
  b.subscribe("orders", "billing", idempotent([&](const Delivery& d) {
                calls.emplace_back(d.message->offset(), d.attempt);
                if (d.attempt == 1 && d.message->offset() == 0) return false;
                if (d.attempt == 1 && d.message->offset() == 1) throw std::runtime_error("x");
                return true;
              }));
  b.publish("orders", "m0");
  b.publish("orders", "m1");
  b.drain();  // 0 fails
  b.drain();  // 0 applied, 1 throws
  b.drain();  // 1 applied

  EXPECT_EQ(calls, (std::vector<std::pair<Offset, int>>{{0, 1}, {0, 2}, {1, 1}, {1, 2}}));
  EXPECT_EQ(b.stats("orders", "billing").confirmed, 2u);
}

TEST(Idempotent, MembersOfOneGroupShareWhatWasApplied) {
  Broker b{SyncBroker()};
  b.create_topic("orders");
  Applied applied;
  const Handler handler = idempotent(applied.Recording("group"));
  PushOptions o = Push(kDefaultMaxDeliveries, StartPosition::beginning());
  o.group = "billing";
  b.subscribe("orders", "m1", handler, o);
  b.subscribe("orders", "m2", handler, o);
  for (int i = 0; i < 3; ++i) b.publish("orders", "m");
  ASSERT_EQ(b.drain(), 3u);

  b.seek("orders", "billing", 0);  // the group's one state replays, in rotation
  EXPECT_EQ(b.drain(), 3u);

  EXPECT_EQ(applied.calls, (Calls{"group@0", "group@1", "group@2"}))
      << "a group is one subscription state: a repeat is a repeat whichever member gets it";
}

TEST(Idempotent, AppliedOffsetsAreKeptAsOneIntervalPerRun) {
  detail::OffsetIntervals set;
  for (Offset o = 0; o < 1000; ++o) set.insert(o);
  EXPECT_EQ(set.runs(), 1u) << "1,000 applied offsets in a row are one interval";
  set.insert(2000);
  set.insert(1999);
  set.insert(1001);
  EXPECT_EQ(set.runs(), 3u);  // [0,1000) [1001,1002) [1999,2001)
  EXPECT_FALSE(set.contains(1000));
  EXPECT_TRUE(set.contains(1001));
  EXPECT_FALSE(set.contains(1002));
  EXPECT_TRUE(set.contains(1999));
  EXPECT_TRUE(set.contains(2000));
  EXPECT_FALSE(set.contains(2001));
  set.insert(1000);  // fills the gap: [0,1002) [1999,2001)
  EXPECT_EQ(set.runs(), 2u);
  set.insert(1000);  // already in
  EXPECT_EQ(set.runs(), 2u);
  for (Offset o = 1002; o < 1999; ++o) set.insert(o);
  EXPECT_EQ(set.runs(), 1u);
  for (Offset o = 0; o < 2001; ++o) ASSERT_TRUE(set.contains(o)) << o;
  EXPECT_FALSE(set.contains(2001));
}

TEST(Idempotent, EveryIncarnationOfASubscriptionIsANewState) {
  // One wrapped handler, 50 subscribe/unsubscribe cycles of one name, each replaying the
  // log from the beginning: every incarnation applies every message (and the wrapper
  // drops what it kept for the incarnations that are gone).
  Broker b{SyncBroker()};
  b.create_topic("orders");
  Applied applied;
  const Handler handler = idempotent(applied.Recording("s"));
  for (int round = 0; round < 50; ++round) {
    b.publish("orders", "m");
    b.subscribe("orders", "billing", handler,
                Push(kDefaultMaxDeliveries, StartPosition::beginning()));
    ASSERT_EQ(b.drain(), static_cast<std::size_t>(round + 1));
    ASSERT_TRUE(b.unsubscribe("orders", "billing"));
  }
  EXPECT_EQ(applied.calls.size(), 50u * 51u / 2u) << "incarnation r applies offsets 0..r";
}

}  // namespace
}  // namespace broker
