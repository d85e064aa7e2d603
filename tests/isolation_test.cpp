// Isolation on the threaded dispatchers (SPEC R7, R15): a stuck or failing subscriber
// delays only itself. Proved with latches and counters: the healthy subscription finishes
// all its work while the stuck handler is provably still blocked.
#include <gtest/gtest.h>

#include <atomic>
#include <latch>
#include <memory>
#include <stdexcept>
#include <string>

#include "broker/broker.h"
#include "test_support.h"

namespace broker {
namespace {

using testing::Gate;
using testing::LaneBroker;
using testing::OpenOnExit;
using testing::PoolBroker;
using testing::Push;
using testing::SyncBroker;
using testing::WaitIdleUntil;
using testing::WaitUntil;

enum class Threaded { kLane, kPool };

class Isolation : public ::testing::TestWithParam<Threaded> {
 protected:
  static BrokerOptions Options() {
    return GetParam() == Threaded::kLane ? LaneBroker() : PoolBroker(2);
  }
};

INSTANTIATE_TEST_SUITE_P(Dispatchers, Isolation,
                         ::testing::Values(Threaded::kLane, Threaded::kPool), [](const auto& info) {
                           return info.param == Threaded::kLane ? "Lane" : "Pool";
                         });

TEST_P(Isolation, StuckHandlerDoesNotDelayOtherSubscriptions) {
  constexpr int kMessages = 50;
  Gate release;  // outlives the broker: its threads may wait on it until ~Broker
  std::atomic<int> stuck_entries{0};
  std::atomic<int> stuck_exits{0};
  std::atomic<int> healthy{0};
  std::atomic<int> other_topic{0};
  std::latch stuck_entered{1};
  {
    Broker b{Options()};
    OpenOnExit open_on_exit{release};
    b.create_topic("orders");
    b.create_topic("audit");
    b.subscribe("orders", "stuck", [&](const Delivery& d) {
      stuck_entries.fetch_add(1);
      if (d.message->offset() == 0) {
        stuck_entered.count_down();
        release.wait();
      }
      stuck_exits.fetch_add(1);
      return true;
    });
    b.subscribe("orders", "healthy", [&](const Delivery&) {
      healthy.fetch_add(1);
      return true;
    });
    b.subscribe("audit", "healthy", [&](const Delivery&) {
      other_topic.fetch_add(1);
      return true;
    });

    b.publish("orders", "m0");
    stuck_entered.wait();
    for (int i = 1; i < kMessages; ++i) {
      b.publish("orders", "m");
      b.publish("audit", "a");
    }

    ASSERT_TRUE(WaitUntil([&] {
      return healthy.load() == kMessages && other_topic.load() == kMessages - 1;
    })) << "healthy subscriptions must finish while 'stuck' is blocked";
    EXPECT_EQ(stuck_entries.load(), 1) << "still inside m0";
    EXPECT_EQ(stuck_exits.load(), 0);
    EXPECT_EQ(b.stats("orders", "healthy").confirmed, static_cast<std::uint64_t>(kMessages));

    release.open();
    ASSERT_TRUE(WaitIdleUntil(b, [&] { return stuck_exits.load() == kMessages; }));
    EXPECT_TRUE(b.wait_idle(Millis{60000}));
    EXPECT_EQ(b.stats("orders", "stuck").confirmed, static_cast<std::uint64_t>(kMessages));
  }
}

TEST_P(Isolation, FailingHandlerDoesNotDelayOtherSubscriptions) {
  Broker b{Options()};
  b.create_topic("orders");
  std::atomic<int> failures{0};
  std::atomic<int> healthy{0};
  b.subscribe(
      "orders", "failing",
      [&](const Delivery&) {
        failures.fetch_add(1);
        return false;
      },
      Push(/*max_deliveries=*/0));  // no limit: it keeps failing and retrying
  b.subscribe("orders", "healthy", [&](const Delivery&) {
    healthy.fetch_add(1);
    return true;
  });
  for (int i = 0; i < 20; ++i) b.publish("orders", "m");

  ASSERT_TRUE(WaitIdleUntil(b, [&] { return healthy.load() == 20 && failures.load() >= 3; }));
  EXPECT_EQ(b.stats("orders", "failing").confirmed, 0u);
  EXPECT_EQ(b.stats("orders", "failing").dead_lettered, 0u);
  ASSERT_TRUE(b.unsubscribe("orders", "failing"));
}

TEST_P(Isolation, HandlerThatThrows42IsAFailureNotACrash) {
  Broker b{Options()};
  b.create_topic("orders");
  std::atomic<int> neighbour{0};
  b.subscribe(
      "orders", "thrower",
      [&](const Delivery& d) -> bool {
        if (d.message->offset() == 0) throw 42;
        return true;
      },
      Push(/*max_deliveries=*/2));
  b.subscribe("orders", "neighbour", [&](const Delivery&) {
    neighbour.fetch_add(1);
    return true;
  });
  b.publish("orders", "m0");
  b.publish("orders", "m1");

  ASSERT_TRUE(WaitIdleUntil(b, [&] {
    const auto s = b.stats("orders", "thrower");
    return s.dead_lettered == 1 && s.confirmed == 1 && neighbour.load() == 2;
  }));
  const auto dead = b.dead_letters("orders", "thrower");
  ASSERT_EQ(dead.size(), 1u);
  EXPECT_EQ(dead[0].message->offset(), 0u);
  EXPECT_EQ(dead[0].attempts, 2);
  EXPECT_EQ(dead[0].reason, "unknown exception");
  EXPECT_EQ(b.stats("orders", "thrower").delivered, 3u);
}

TEST(IsolationSync, HandlerThatThrows42IsAFailureNotACrash) {
  Broker b{SyncBroker()};
  b.create_topic("orders");
  int neighbour = 0;
  b.subscribe(
      "orders", "thrower", [](const Delivery&) -> bool { throw 42; }, Push(1));
  b.subscribe("orders", "neighbour", [&](const Delivery&) {
    ++neighbour;
    return true;
  });
  b.publish("orders", "m0");

  std::size_t confirmed = 0;
  EXPECT_NO_THROW(confirmed = b.drain());

  EXPECT_EQ(confirmed, 1u);
  EXPECT_EQ(neighbour, 1);
  const auto dead = b.dead_letters("orders", "thrower");
  ASSERT_EQ(dead.size(), 1u);
  EXPECT_EQ(dead[0].reason, "unknown exception");
}

// SPEC R15: pool handler_timeout. With one pool thread, a stuck handler would stop every
// subscription; the timeout fails its message ("handler timeout") and a replacement thread
// keeps the pool's capacity.
TEST(PoolHandlerTimeout, StuckHandlersMessageFailsWithHandlerTimeoutAndOthersProgress) {
  constexpr int kLater = 10;
  // Shared with the handler by value: an abandoned (timed-out) thread may outlive the test.
  struct Shared {
    Gate release;
    std::latch stuck_entered{1};
    std::atomic<int> stuck_exits{0};
    std::atomic<int> stuck_confirmed_later{0};
    std::atomic<int> healthy{0};
  };
  auto sh = std::make_shared<Shared>();
  Broker b{PoolBroker(/*threads=*/1, /*handler_timeout=*/Millis{200})};
  OpenOnExit open_on_exit{sh->release};
  b.create_topic("orders");
  b.subscribe(
      "orders", "stuck",
      [sh](const Delivery& d) {
        if (d.message->offset() == 0) {
          sh->stuck_entered.count_down();
          sh->release.wait();
          sh->stuck_exits.fetch_add(1);
          return true;  // too late: the offer was already failed
        }
        sh->stuck_confirmed_later.fetch_add(1);
        return true;
      },
      Push(/*max_deliveries=*/1));
  b.subscribe("orders", "healthy", [sh](const Delivery&) {
    sh->healthy.fetch_add(1);
    return true;
  });
  b.publish("orders", "m0");
  sh->stuck_entered.wait();
  for (int i = 0; i < kLater; ++i) b.publish("orders", "m");

  ASSERT_TRUE(WaitIdleUntil(b, [&] {
    return b.stats("orders", "healthy").confirmed == static_cast<std::uint64_t>(kLater) + 1 &&
           b.stats("orders", "stuck").confirmed == static_cast<std::uint64_t>(kLater);
  })) << "the only pool thread is stuck: the timeout must free capacity";
  EXPECT_EQ(sh->stuck_exits.load(), 0) << "the stuck handler is still blocked";
  const auto dead = b.dead_letters("orders", "stuck");
  ASSERT_EQ(dead.size(), 1u);
  EXPECT_EQ(dead[0].message->offset(), 0u);
  EXPECT_EQ(dead[0].attempts, 1);
  EXPECT_EQ(dead[0].reason, "handler timeout");

  sh->release.open();
  ASSERT_TRUE(WaitUntil([&] { return sh->stuck_exits.load() == 1; }));
  EXPECT_TRUE(b.wait_idle(Millis{60000}));
  const auto s = b.stats("orders", "stuck");
  EXPECT_EQ(s.confirmed, static_cast<std::uint64_t>(kLater))
      << "the abandoned handler's late 'true' must not count";
  EXPECT_EQ(s.dead_lettered, 1u);
  EXPECT_EQ(s.in_flight, 0u);
  EXPECT_EQ(s.backlog, 0u);
}

TEST(PoolHandlerTimeout, TimedOutMessageIsOfferedAgainWhenDeliveriesRemain) {
  struct Shared {
    Gate release;
    std::atomic<int> first_exits{0};
    std::atomic<int> attempt2{0};
  };
  auto sh = std::make_shared<Shared>();
  Broker b{PoolBroker(/*threads=*/1, /*handler_timeout=*/Millis{200})};
  OpenOnExit open_on_exit{sh->release};
  b.create_topic("orders");
  b.subscribe(
      "orders", "slow-once",
      [sh](const Delivery& d) {
        if (d.attempt == 1) {
          sh->release.wait();
          sh->first_exits.fetch_add(1);
          return true;
        }
        sh->attempt2.fetch_add(1);
        return true;
      },
      Push(/*max_deliveries=*/3));
  b.publish("orders", "m0");

  ASSERT_TRUE(WaitIdleUntil(b, [&] { return sh->attempt2.load() == 1; }))
      << "the timed-out offer is a failure: the message is offered again";
  const auto s = b.stats("orders", "slow-once");
  EXPECT_EQ(s.confirmed, 1u);
  EXPECT_EQ(s.redelivered, 1u);
  EXPECT_EQ(s.dead_lettered, 0u);
  sh->release.open();
  ASSERT_TRUE(WaitUntil([&] { return sh->first_exits.load() == 1; }));
  EXPECT_TRUE(b.wait_idle(Millis{60000}));
  EXPECT_EQ(b.stats("orders", "slow-once").confirmed, 1u) << "the late 'true' does not count";
}

}  // namespace
}  // namespace broker
