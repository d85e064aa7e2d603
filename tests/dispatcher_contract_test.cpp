// SPEC R15 on real threads: the timing rules of the lane and pool dispatchers, shutdown,
// wait_delivered, and re-entrancy per broker. Each test is a regression for a bug that once
// slipped past every property (issue 13). Timing is only ever checked with wide margins: a
// rule broken shows as a stall of the whole (long) back-off, a rule kept as milliseconds.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "test_support.h"

namespace broker {
namespace {

using testing::Gate;
using testing::SyncBroker;
using testing::WaitUntil;

using Steady = std::chrono::steady_clock;

// A back-off so long that waiting it out even once fails the test's bound.
constexpr Millis kLongBackoff{30000};
constexpr Millis kBound{10000};

// R15: a first failure is re-offered at once, also when it is the last offer of a pool
// worker's batch; only a second failure in a row waits retry_backoff.
TEST(DispatcherTiming, PoolReoffersAFirstFailureAtOnceAlsoAtTheEndOfABatch) {
  Broker b(BrokerOptions::pool(2).with_retry_backoff(kLongBackoff));
  b.create_topic("t");
  std::mutex mu;
  std::vector<int> calls(200, 0);
  b.subscribe("t", "s", [&](const Delivery& d) {
    std::lock_guard<std::mutex> lock(mu);
    const auto o = static_cast<std::size_t>(d.message->offset());
    return !(o % 2 == 1 && calls[o]++ == 0);  // odd offsets fail their first offer only
  });
  for (int i = 0; i < 200; ++i) b.publish("t", "m" + std::to_string(i));
  ASSERT_TRUE(b.wait_delivered(kBound)) << b.stats("t", "s").confirmed << " confirmed";
  EXPECT_EQ(b.stats("t", "s").confirmed, 200u);
  EXPECT_EQ(b.stats("t", "s").redelivered, 100u);
}

// R15: during a lane's back-off a notify (a publish, a seek, a member joining) wakes the
// lane but does not end the wait: the failing message is not re-offered early.
TEST(DispatcherTiming, LaneBackoffIsNotCutShortByAPublish) {
  constexpr Millis kBackoff{400};
  Broker b(BrokerOptions::lane().with_retry_backoff(kBackoff));
  b.create_topic("t");
  std::mutex mu;
  std::vector<Steady::time_point> m0_calls;
  b.subscribe("t", "s", [&](const Delivery& d) {
    if (d.message->offset() != 0) return true;
    std::lock_guard<std::mutex> lock(mu);
    m0_calls.push_back(Steady::now());
    return m0_calls.size() > 2;  // m0 fails twice in a row, then confirms
  });
  b.publish("t", "m0");
  ASSERT_TRUE(WaitUntil([&] {
    std::lock_guard<std::mutex> lock(mu);
    return m0_calls.size() >= 2;
  }));
  for (int i = 0; i < 5; ++i) {  // notifies during the back-off
    b.publish("t", "later");
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_TRUE(b.wait_delivered(kBound));
  std::lock_guard<std::mutex> lock(mu);
  ASSERT_EQ(m0_calls.size(), 3u);
  // Sleeping only ever lengthens a wait, so a lower bound cannot fail by chance.
  EXPECT_GE(m0_calls[2] - m0_calls[1], kBackoff - Millis{5});
}

// wait_idle counts a backing-off subscription as idle; wait_delivered waits for it.
TEST(WaitDelivered, WaitsForBackingOffSubscriptionsWhereWaitIdleDoesNot) {
  Broker b(BrokerOptions::lane().with_retry_backoff(Millis{300}));
  b.create_topic("t");
  std::atomic<int> calls{0};
  b.subscribe("t", "s", [&](const Delivery&) { return ++calls > 2; });
  b.publish("t", "m0");
  ASSERT_TRUE(WaitUntil([&] { return calls.load() >= 2; }));
  ASSERT_TRUE(b.wait_delivered(kBound));
  const SubscriptionStats s = b.stats("t", "s");
  EXPECT_EQ(s.confirmed, 1u);
  EXPECT_EQ(s.backlog, 0u);
  EXPECT_EQ(s.committed, 1u);
}

// wait_delivered on a synchronous broker answers at once: drain() is what delivers.
TEST(WaitDelivered, SynchronousBrokerAnswersAtOnce) {
  Broker b(SyncBroker());
  b.create_topic("t");
  b.subscribe("t", "s", [](const Delivery&) { return true; });
  b.publish("t", "m0");
  EXPECT_FALSE(b.wait_delivered(Millis{0}));
  b.drain();
  EXPECT_TRUE(b.wait_delivered(Millis{0}));
}

// Shutdown: after the destructor began, no handler call starts; the one running finishes.
TEST(Shutdown, PoolStartsNoHandlerCallAfterTheDestructorBegan) {
  Gate gate;
  std::atomic<int> started{0};
  auto b = std::make_unique<Broker>(BrokerOptions::pool(2));
  b->create_topic("t");
  b->subscribe("t", "s", [&](const Delivery&) {
    if (started++ == 0) gate.wait();  // the first call blocks until released
    return true;
  });
  for (int i = 0; i < 40; ++i) b->publish("t", "m" + std::to_string(i));
  ASSERT_TRUE(WaitUntil([&] { return started.load() == 1; }));
  std::thread release([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    gate.open();
  });
  b.reset();  // blocks until the running handler returns
  release.join();
  EXPECT_EQ(started.load(), 1);
}

// R8 re-entrancy is per broker: a handler of broker A may drain broker B; draining A from
// inside A's own handler is still ReentrantDrain.
TEST(Reentrancy, DrainOfAnotherBrokerFromInsideAHandlerIsAllowed) {
  Broker a(SyncBroker());
  Broker other(SyncBroker());
  a.create_topic("t");
  other.create_topic("u");
  int other_calls = 0;
  other.subscribe("u", "s", [&](const Delivery&) { return ++other_calls > 0; });
  other.publish("u", "x");
  std::size_t drained = 0;
  ErrorCode own = ErrorCode::kInvalidArgument;
  a.subscribe("t", "s", [&](const Delivery&) {
    drained = other.drain();
    try {
      a.drain();
    } catch (const Error& e) {
      own = e.code();
    }
    return true;
  });
  a.publish("t", "m0");
  EXPECT_EQ(a.drain(), 1u);
  EXPECT_EQ(drained, 1u);
  EXPECT_EQ(other_calls, 1);
  EXPECT_EQ(own, ErrorCode::kReentrantDrain);
}

}  // namespace
}  // namespace broker
