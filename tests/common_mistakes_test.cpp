// Seed 000, "Common mistakes": one test per mistake, named after the rule it protects.
// Each test fails on the seed's weak design (see the comment above it).
#include <gtest/gtest.h>

#include <atomic>
#include <latch>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "broker/broker.h"
#include "test_support.h"

namespace broker {
namespace {

using testing::Gate;
using testing::LaneBroker;
using testing::OpenOnExit;
using testing::Push;
using testing::SyncBroker;
using testing::WaitIdleUntil;
using testing::WaitUntil;

// Weak design: publish calls every handler in a loop on the publisher's thread. Here the
// handler throws and counts: publish would throw or count.
TEST(CommonMistakes, PublishNeverRunsHandlers) {
  Broker b{SyncBroker()};
  b.create_topic("orders");
  int calls = 0;
  b.subscribe("orders", "billing", [&](const Delivery&) -> bool {
    ++calls;
    throw std::runtime_error("slow and broken");
  });

  EXPECT_EQ(b.publish("orders", "a"), 0u);
  EXPECT_EQ(b.publish("orders", "b"), 1u);
  EXPECT_EQ(b.publish("orders", "c"), 2u);

  EXPECT_EQ(calls, 0);
  b.drain();
  EXPECT_EQ(calls, 1) << "the handler is real: drain runs it (and it stops at its failure)";
}

// Weak design: publish runs the handler inline, so a handler blocked on a latch would block
// the publisher and the second publish would never return.
TEST(CommonMistakes, PublishNeverRunsHandlers_PublisherDoesNotWaitForABlockedLaneHandler) {
  Gate release;
  std::latch entered{1};
  Broker b{LaneBroker()};
  OpenOnExit open_on_exit{release};
  b.create_topic("orders");
  std::atomic<int> calls{0};
  std::atomic<bool> on_publisher_thread{false};
  const auto publisher = std::this_thread::get_id();
  b.subscribe("orders", "slow", [&](const Delivery& d) {
    if (std::this_thread::get_id() == publisher) on_publisher_thread = true;
    calls.fetch_add(1);
    if (d.message->offset() == 0) {
      entered.count_down();
      release.wait();
    }
    return true;
  });

  b.publish("orders", "m0");
  entered.wait();
  for (Offset i = 1; i <= 20; ++i) EXPECT_EQ(b.publish("orders", "m"), i);
  EXPECT_EQ(calls.load(), 1) << "the lane is still stuck in m0; publish ran nothing";

  release.open();
  EXPECT_TRUE(WaitIdleUntil(b, [&] { return b.stats("orders", "slow").confirmed == 21; }));
  EXPECT_FALSE(on_publisher_thread.load());
}

// Weak design: the offset moves first and then the handler runs, so a failure loses the
// message. Here it must come back, and while the handler runs it is in flight, not confirmed.
TEST(CommonMistakes, OffsetMovesOnlyAfterConfirmation) {
  Broker b{SyncBroker()};
  b.create_topic("orders");
  std::vector<std::pair<Offset, int>> seen;
  SubscriptionStats during{};
  b.subscribe("orders", "billing", [&](const Delivery& d) {
    seen.emplace_back(d.message->offset(), d.attempt);
    if (d.attempt == 1) {
      during = b.stats("orders", "billing");
      return false;
    }
    return true;
  });
  b.publish("orders", "order-1");

  EXPECT_EQ(b.drain(), 0u);
  EXPECT_EQ(during.confirmed, 0u);
  EXPECT_EQ(during.in_flight, 1u) << "offered, not confirmed";
  const auto after_failure = b.stats("orders", "billing");
  EXPECT_EQ(after_failure.confirmed, 0u);
  EXPECT_EQ(after_failure.backlog, 1u) << "the failed message still waits";

  EXPECT_EQ(b.drain(), 1u);
  EXPECT_EQ(seen, (std::vector<std::pair<Offset, int>>{{0, 1}, {0, 2}}));
  EXPECT_EQ(b.stats("orders", "billing").backlog, 0u);
}

// Weak design: one offset per topic. Then a subscriber that fails holds back the others (or
// the others' progress skips it), and a seek by one moves all.
TEST(CommonMistakes, EachSubscriberHasItsOwnOffset) {
  Broker b{SyncBroker()};
  b.create_topic("orders");
  std::vector<Offset> fast_seen;
  std::vector<Offset> slow_seen;
  bool slow_ready = false;
  b.subscribe("orders", "slow", [&](const Delivery& d) {
    slow_seen.push_back(d.message->offset());
    return slow_ready;
  });
  b.subscribe("orders", "fast", [&](const Delivery& d) {
    fast_seen.push_back(d.message->offset());
    return true;
  });
  for (int i = 0; i < 3; ++i) b.publish("orders", "m");

  b.drain();
  EXPECT_EQ(fast_seen, (std::vector<Offset>{0, 1, 2}));
  EXPECT_EQ(slow_seen, (std::vector<Offset>{0}));
  EXPECT_EQ(b.stats("orders", "fast").confirmed, 3u);
  EXPECT_EQ(b.stats("orders", "slow").confirmed, 0u);
  EXPECT_EQ(b.stats("orders", "slow").backlog, 3u);

  slow_ready = true;
  b.seek("orders", "fast", 1);  // replay for fast only
  fast_seen.clear();
  slow_seen.clear();
  b.drain();
  EXPECT_EQ(slow_seen, (std::vector<Offset>{0, 1, 2}));
  EXPECT_EQ(fast_seen, (std::vector<Offset>{1, 2}));
}

// Weak design: a loop over the live subscriber list. Removing the current entry either
// throws or shifts the next subscriber into the current index, which is then skipped.
TEST(CommonMistakes, UnsubscribeFromHandlerDoesNotSkipNeighbour) {
  Broker b{SyncBroker()};
  b.create_topic("orders");
  std::vector<std::string> seen;
  b.subscribe("orders", "a", [&](const Delivery&) {
    seen.push_back("a");
    EXPECT_TRUE(b.unsubscribe("orders", "a"));
    return true;
  });
  b.subscribe("orders", "b", [&](const Delivery&) {
    seen.push_back("b");
    return true;
  });
  b.subscribe("orders", "c", [&](const Delivery&) {
    seen.push_back("c");
    return true;
  });
  b.publish("orders", "m0");
  b.publish("orders", "m1");

  EXPECT_NO_THROW(b.drain());

  EXPECT_EQ(seen, (std::vector<std::string>{"a", "b", "b", "c", "c"}));
  EXPECT_EQ(b.subscriptions("orders"), (std::vector<std::string>{"b", "c"}));
}

TEST(CommonMistakes, UnsubscribeFromHandlerDoesNotSkipNeighbour_MiddleSubscription) {
  Broker b{SyncBroker()};
  b.create_topic("orders");
  std::vector<std::string> seen;
  for (const std::string name : {"a", "b", "c"}) {
    b.subscribe("orders", name, [&, name](const Delivery&) {
      seen.push_back(name);
      if (name == "b") {
        EXPECT_TRUE(b.unsubscribe("orders", "b"));
      }
      return true;
    });
  }
  b.publish("orders", "m0");

  b.drain();

  EXPECT_EQ(seen, (std::vector<std::string>{"a", "b", "c"}));
}

// Weak design: a failed message is retried forever and its subscriber never gets past it.
TEST(CommonMistakes, FailedMessageIsDeadLetteredNotBlockingForever) {
  Broker b{SyncBroker()};
  b.create_topic("orders");
  std::vector<std::pair<Offset, int>> seen;
  b.subscribe(
      "orders", "billing",
      [&](const Delivery& d) {
        seen.emplace_back(d.message->offset(), d.attempt);
        return d.message->payload() != "poison";
      },
      Push(/*max_deliveries=*/3));
  b.publish("orders", "poison");
  b.publish("orders", "good");

  for (int i = 0; i < 20 && b.stats("orders", "billing").backlog > 0; ++i) b.drain();

  EXPECT_EQ(seen, (std::vector<std::pair<Offset, int>>{{0, 1}, {0, 2}, {0, 3}, {1, 1}}));
  const auto dead = b.dead_letters("orders", "billing");
  ASSERT_EQ(dead.size(), 1u);
  EXPECT_EQ(dead[0].message->offset(), 0u);
  EXPECT_EQ(dead[0].message->payload(), "poison");
  EXPECT_EQ(dead[0].attempts, 3);
  EXPECT_EQ(dead[0].reason, "rejected");
  const auto s = b.stats("orders", "billing");
  EXPECT_EQ(s.dead_lettered, 1u);
  EXPECT_EQ(s.confirmed, 1u);
  EXPECT_EQ(s.backlog, 0u);
}

TEST(CommonMistakes, FailedMessageIsDeadLetteredNotBlockingForever_DefaultLimitIsFive) {
  Broker b{SyncBroker()};
  b.create_topic("orders");
  int offers = 0;
  b.subscribe("orders", "billing", [&](const Delivery&) {
    ++offers;
    return false;
  });
  b.publish("orders", "poison");

  for (int i = 0; i < 20; ++i) b.drain();

  EXPECT_EQ(offers, kDefaultMaxDeliveries);
  EXPECT_EQ(kDefaultMaxDeliveries, 5);
  ASSERT_EQ(b.dead_letters("orders", "billing").size(), 1u);
  EXPECT_EQ(b.dead_letters("orders", "billing")[0].attempts, 5);
}

// Weak design: claims exactly-once and hides the repeat. The contract is at-least-once: a
// repeat is visible (same offset, attempt 2, counted as redelivered), so a handler that
// remembers applied offsets can make it harmless.
TEST(CommonMistakes, NoExactlyOnceClaim_RedeliveryIsVisibleAsAttempt2) {
  Broker b{SyncBroker()};
  b.create_topic("orders");
  std::vector<std::pair<Offset, int>> calls;
  std::set<Offset> applied;
  int charges = 0;
  b.subscribe("orders", "billing", [&](const Delivery& d) {
    calls.emplace_back(d.message->offset(), d.attempt);
    if (applied.insert(d.message->offset()).second) ++charges;  // the effect, once per offset
    if (d.attempt == 1) throw std::runtime_error("crashed after charging, before confirming");
    return true;
  });
  b.publish("orders", "order-1");

  b.drain();
  b.drain();

  EXPECT_EQ(calls, (std::vector<std::pair<Offset, int>>{{0, 1}, {0, 2}}))
      << "the same message reaches the handler twice, marked as attempt 2";
  EXPECT_EQ(charges, 1) << "the offset lets an idempotent handler skip the repeat";
  const auto s = b.stats("orders", "billing");
  EXPECT_EQ(s.delivered, 2u);
  EXPECT_EQ(s.redelivered, 1u);
  EXPECT_EQ(s.confirmed, 1u);
}

// Weak design ("good" level): a snapshot of the subscriber list without an active flag, so
// a subscription removed by an earlier handler still receives a message.
TEST(CommonMistakes, NoMessageAfterUnsubscribeReturns) {
  Broker b{SyncBroker()};
  b.create_topic("orders");
  int b_calls = 0;
  bool unsubscribed = false;
  b.subscribe("orders", "a", [&](const Delivery&) {
    if (b.unsubscribe("orders", "b")) unsubscribed = true;
    return true;
  });
  b.subscribe("orders", "b", [&](const Delivery&) {
    ++b_calls;
    return true;
  });
  b.publish("orders", "m0");
  b.publish("orders", "m1");

  b.drain();

  EXPECT_TRUE(unsubscribed);
  EXPECT_EQ(b_calls, 0);
  EXPECT_FALSE(b.unsubscribe("orders", "b")) << "it is gone";
}

// The seed's own design checks the flag and then calls the handler: an unsubscribe that
// returns in between still gets a message. Here the handler records any entry that begins
// after unsubscribe returned on another thread.
TEST(CommonMistakes, NoMessageAfterUnsubscribeReturns_FromAnotherThreadOnLane) {
  for (int round = 0; round < 20; ++round) {
    Broker b{LaneBroker()};
    b.create_topic("orders");
    std::atomic<bool> returned{false};
    std::atomic<int> entries{0};
    std::atomic<int> late{0};
    b.subscribe("orders", "victim", [&](const Delivery&) {
      if (returned.load()) late.fetch_add(1);
      entries.fetch_add(1);
      return true;
    });
    std::atomic<bool> stop{false};
    std::thread publisher([&] {
      while (!stop.load()) b.publish("orders", "m");
    });
    ASSERT_TRUE(WaitUntil([&] { return entries.load() >= 10; }));

    EXPECT_TRUE(b.unsubscribe("orders", "victim"));
    returned = true;
    const int at_return = entries.load();
    for (int i = 0; i < 100; ++i) b.publish("orders", "after");
    stop = true;
    publisher.join();
    EXPECT_TRUE(b.wait_idle(Millis{60000}));

    EXPECT_EQ(late.load(), 0) << "round " << round;
    EXPECT_EQ(entries.load(), at_return) << "round " << round;
  }
}

}  // namespace
}  // namespace broker
