// Real-thread stress (label `stress`; also run under the tsan preset).
// - Seed 004's demo: 4 publisher threads x 250 messages, 3 worker threads sharing one pull
//   subscription: all 1,000 acked exactly once; a second subscription sees offset order.
// - Push on Lane and Pool: concurrent publishers, every subscription gets every message
//   once and in order; unsubscribe from another thread while deliveries run.
// Each test is a loop of small iterations (testing::StressLoop: base x BROKER_BUDGET, or
// STRESS_ITERATIONS); each iteration's sizes come from its own seed, printed with the line
// that replays it. Assertions are about what happened, never about how long it took.
#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <barrier>
#include <chrono>
#include <cstdlib>
#include <latch>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "broker/broker.h"
#include "test_support.h"

namespace broker {
namespace {

using testing::Gate;
using testing::kHangGuard;
using testing::LaneBroker;
using testing::OpenOnExit;
using testing::PoolBroker;
using testing::Pull;
using testing::Push;
using testing::StressLoop;
using testing::SyncBroker;
using testing::WaitIdleUntil;
using testing::WaitUntil;

constexpr int kPublishers = 4;
constexpr int kPerPublisher = 250;  // seed 004's demo: 1,000 messages
constexpr int kTotal = kPublishers * kPerPublisher;
constexpr int kWorkers = 3;

// Iterations at BROKER_BUDGET=1: 200x what each test ran before it looped (1, or 10
// rounds); the whole file is about a minute of test time under TSan on 2 cores.
constexpr int kDemoIterations = 200;
constexpr int kPushIterations = 200;
constexpr int kUnsubscribeRounds = 2000;  // was 10 rounds
constexpr int kRecycleIterations = 20;    // each publishes 12-24 MB of big messages

/// Payload "p<publisher>-<i>": lets the checks see each publisher's own order.
std::string PayloadOf(int publisher, int i) {
  return "p" + std::to_string(publisher) + "-" + std::to_string(i);
}

std::pair<int, int> ParsePayload(const std::string& p) {
  const auto dash = p.find('-');
  return {std::stoi(p.substr(1, dash - 1)), std::stoi(p.substr(dash + 1))};
}

/// Starts `publishers` threads released together, each publishing payload(p, i) for i below
/// per_publisher to topic, and joins them.
template <typename Payload>
void PublishTogether(Broker& b, const std::string& topic, int publishers, int per_publisher,
                     Payload payload) {
  std::vector<std::thread> threads;
  std::latch start{publishers};
  for (int p = 0; p < publishers; ++p) {
    threads.emplace_back([&, p] {
      start.arrive_and_wait();
      for (int i = 0; i < per_publisher; ++i) b.publish(topic, payload(p, i));
    });
  }
  for (auto& t : threads) t.join();
}

/// A 300 kB payload that says who wrote it: "p<publisher>-<i>:" and a filler byte that
/// depends on both, so a reader can tell it is exactly as published (BigIntact).
constexpr std::size_t kBigFiller = 300'000;
char BigFill(int publisher, int i) { return static_cast<char>('a' + (7 * publisher + i) % 26); }
std::string BigPayload(int publisher, int i) {
  return PayloadOf(publisher, i) + ":" + std::string(kBigFiller, BigFill(publisher, i));
}
bool BigIntact(std::string_view p) {
  const auto colon = p.find(':');
  if (colon == std::string_view::npos || p.size() != colon + 1 + kBigFiller) return false;
  const auto [publisher, i] = ParsePayload(std::string(p.substr(0, colon)));
  return p.find_first_not_of(BigFill(publisher, i), colon + 1) == std::string_view::npos;
}

/// Runs the demo. poll(sub, member) returns what one poll handed out; now() gives the
/// time to ack at.
struct Demo {
  explicit Demo(Broker& broker) : b(broker) {}
  Broker& b;
  std::array<std::atomic<int>, kTotal> acks{};
  std::atomic<int> acked{0};
  std::atomic<int> refused{0};
  std::vector<Offset> audit_order;  // written by the audit thread only

  template <typename Poll, typename Now>
  void Run(Poll poll, Now now) {
    std::vector<std::thread> threads;
    std::latch start{kPublishers + kWorkers + 1};
    for (int p = 0; p < kPublishers; ++p) {
      threads.emplace_back([&, p] {
        start.arrive_and_wait();
        for (int i = 0; i < kPerPublisher; ++i) b.publish("orders", PayloadOf(p, i));
      });
    }
    for (int w = 0; w < kWorkers; ++w) {
      threads.emplace_back([&, w] {
        const std::string member = "w" + std::to_string(w);
        start.arrive_and_wait();
        while (acked.load() < kTotal) {
          for (const auto& r : poll("workers", member)) {
            if (b.ack(r.receipt, now())) {
              acks[r.message->offset()].fetch_add(1);
              acked.fetch_add(1);
            } else {
              refused.fetch_add(1);
            }
          }
          std::this_thread::yield();
        }
      });
    }
    threads.emplace_back([&] {  // the second subscription, one reader
      start.arrive_and_wait();
      while (audit_order.size() < static_cast<std::size_t>(kTotal)) {
        for (const auto& r : poll("audit", "auditor")) {
          audit_order.push_back(r.message->offset());
          EXPECT_TRUE(b.ack(r.receipt, now()));
        }
        std::this_thread::yield();
      }
    });
    for (auto& t : threads) t.join();
  }

  void Check() {
    for (int o = 0; o < kTotal; ++o) EXPECT_EQ(acks[o].load(), 1) << "offset " << o;
    EXPECT_EQ(acked.load(), kTotal);
    EXPECT_EQ(refused.load(), 0) << "no deadline passed, so no ack may be refused";
    std::vector<Offset> expected(kTotal);
    for (int o = 0; o < kTotal; ++o) expected[o] = static_cast<Offset>(o);
    EXPECT_EQ(audit_order, expected) << "the second subscription sees offset (id) order";
    const auto s = b.stats("orders", "workers");
    EXPECT_EQ(s.confirmed, static_cast<std::uint64_t>(kTotal));
    EXPECT_EQ(s.delivered, static_cast<std::uint64_t>(kTotal));
    EXPECT_EQ(s.redelivered, 0u);
    EXPECT_EQ(s.in_flight, 0u);
    EXPECT_EQ(s.backlog, 0u);
  }
};

TEST(Seed004DemoStress, AllThousandMessagesAckedExactlyOnce_PollWithManualClock) {
  StressLoop(kDemoIterations, [](std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    const std::size_t batch = 1 + rng() % 10;  // was 7
    auto clock = std::make_shared<ManualClock>(Time{});
    Broker b{SyncBroker(clock)};
    b.create_topic("orders");
    b.subscribe_pull("orders", "workers", Pull(Millis{3'600'000}));
    b.subscribe_pull("orders", "audit", Pull(Millis{3'600'000}));
    Demo demo{b};
    const auto give_up = std::chrono::steady_clock::now() + kHangGuard;

    demo.Run(
        [&](const std::string& sub, const std::string& member) {
          if (std::chrono::steady_clock::now() > give_up) {
            ADD_FAILURE() << "hang guard";
            std::abort();
          }
          return b.poll("orders", sub, member, batch, Time{});
        },
        [] { return Time{}; });

    demo.Check();
  });
}

TEST(Seed004DemoStress, AllThousandMessagesAckedExactlyOnce_PollWait) {
  StressLoop(kDemoIterations, [](std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    const std::size_t batch = 1 + rng() % 8;  // was 5
    const Millis wait{1 + static_cast<Millis::rep>(rng() % 20)};
    auto clock = std::make_shared<ManualClock>(Time{});  // never advanced: no deadline passes
    Broker b{SyncBroker(clock)};
    b.create_topic("orders");
    b.subscribe_pull("orders", "workers", Pull(Millis{3'600'000}));
    b.subscribe_pull("orders", "audit", Pull(Millis{3'600'000}));
    Demo demo{b};

    demo.Run(
        [&](const std::string& sub, const std::string& member) {
          return b.poll_wait("orders", sub, member, batch, wait);
        },
        [&] { return clock->now(); });

    demo.Check();
  });
}

TEST(Seed004DemoStress, PublishersKeepTheirOwnOrderInTheLog) {
  StressLoop(kDemoIterations, [](std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    const int per_publisher = 50 + static_cast<int>(rng() % (kPerPublisher - 49));  // <= 250
    const int total = kPublishers * per_publisher;
    Broker b{SyncBroker()};
    b.create_topic("orders");
    b.subscribe_pull(
        "orders", "audit",
        Pull(Millis{3'600'000}, kDefaultMaxDeliveries, {}, StartPosition::beginning()));
    PublishTogether(b, "orders", kPublishers, per_publisher, PayloadOf);

    const auto got = b.poll("orders", "audit", "a", total + 10, Time{});
    ASSERT_EQ(got.size(), static_cast<std::size_t>(total));
    std::array<int, kPublishers> last{};
    last.fill(-1);
    for (std::size_t i = 0; i < got.size(); ++i) {
      EXPECT_EQ(got[i].message->offset(), i);
      const auto [p, n] = ParsePayload(std::string(got[i].message->payload()));
      EXPECT_EQ(n, last[p] + 1) << "publisher " << p;
      last[p] = n;
    }
  });
}

// ---- push on threaded dispatchers ----

enum class Threaded { kLane, kPool };

BrokerOptions Options(Threaded kind) {
  return kind == Threaded::kLane ? LaneBroker() : PoolBroker(2);
}

class ThreadedPushStress : public ::testing::TestWithParam<Threaded> {};

INSTANTIATE_TEST_SUITE_P(Dispatchers, ThreadedPushStress,
                         ::testing::Values(Threaded::kLane, Threaded::kPool), [](const auto& info) {
                           return info.param == Threaded::kLane ? "Lane" : "Pool";
                         });

TEST_P(ThreadedPushStress, ConcurrentPublishersEverySubscriptionGetsEveryMessageOnceInOrder) {
  StressLoop(kPushIterations, [kind = GetParam()](std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    const int subs = 1 + static_cast<int>(rng() % 3);             // was 3
    const int per_publisher = 25 + static_cast<int>(rng() % 76);  // was 250
    const int total = kPublishers * per_publisher;
    Broker b{Options(kind)};
    b.create_topic("orders");
    struct Seen {
      explicit Seen(int n) : count(static_cast<std::size_t>(n)) {}
      std::vector<std::atomic<int>> count;
      std::atomic<long long> last{-1};
      std::atomic<int> out_of_order{0};
      std::atomic<int> concurrent{0};
      std::atomic<int> overlap{0};
    };
    std::vector<std::unique_ptr<Seen>> seen;
    for (int s = 0; s < subs; ++s) {
      seen.push_back(std::make_unique<Seen>(total));
      Seen& mine = *seen.back();
      b.subscribe("orders", "s" + std::to_string(s), [&mine](const Delivery& d) {
        if (mine.concurrent.fetch_add(1) != 0) mine.overlap.fetch_add(1);
        const auto o = static_cast<long long>(d.message->offset());
        if (o <= mine.last.load()) mine.out_of_order.fetch_add(1);
        mine.last.store(o);
        mine.count[d.message->offset()].fetch_add(1);
        mine.concurrent.fetch_sub(1);
        return true;
      });
    }
    PublishTogether(b, "orders", kPublishers, per_publisher, PayloadOf);

    ASSERT_TRUE(WaitIdleUntil(b, [&] {
      for (int s = 0; s < subs; ++s) {
        if (b.stats("orders", "s" + std::to_string(s)).confirmed <
            static_cast<std::uint64_t>(total)) {
          return false;
        }
      }
      return true;
    }));
    EXPECT_TRUE(b.wait_idle(Millis{60000}));
    for (int s = 0; s < subs; ++s) {
      SCOPED_TRACE("subscription s" + std::to_string(s));
      for (int o = 0; o < total; ++o) ASSERT_EQ(seen[s]->count[o].load(), 1) << "offset " << o;
      EXPECT_EQ(seen[s]->out_of_order.load(), 0);
      EXPECT_EQ(seen[s]->overlap.load(), 0) << "at most one task per subscription at a time";
      const auto st = b.stats("orders", "s" + std::to_string(s));
      EXPECT_EQ(st.confirmed, static_cast<std::uint64_t>(total));
      EXPECT_EQ(st.delivered, static_cast<std::uint64_t>(total));
      EXPECT_EQ(st.backlog, 0u);
      EXPECT_EQ(st.in_flight, 0u);
    }
  });
}

// R3 under concurrency, with issue 19's recycled segments: a bounded log of big messages
// drops and recycles whole segments while handlers are still reading messages in them;
// every message a handler sees stays exactly as published for as long as it looks.
TEST_P(ThreadedPushStress, RetentionNeverChangesAMessageAHandlerIsReading) {
  StressLoop(kRecycleIterations, [kind = GetParam()](std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    constexpr int kBigPublishers = 2;
    const int per_publisher = 20 + static_cast<int>(rng() % 21);
    Broker b{Options(kind)};
    TopicOptions o;
    o.retention_messages = 1 + rng() % 4;  // a 2 MiB segment holds 6 of them
    b.create_topic("big", o);
    std::atomic<int> seen{0};
    std::atomic<int> torn{0};
    for (int s = 0; s < 2; ++s) {
      b.subscribe("big", "s" + std::to_string(s), [&](const Delivery& d) {
        const std::string_view p = d.message->payload();
        if (!BigIntact(p)) torn.fetch_add(1);
        std::this_thread::yield();  // retention may drop its segment meanwhile
        if (!BigIntact(p)) torn.fetch_add(1);
        seen.fetch_add(1);
        return true;
      });
    }
    PublishTogether(b, "big", kBigPublishers, per_publisher, BigPayload);
    EXPECT_TRUE(b.wait_idle(Millis{60000}));
    EXPECT_EQ(torn.load(), 0) << "a handler saw a message change under it";
    EXPECT_GT(seen.load(), 0);
  });
}

TEST_P(ThreadedPushStress, NoHandlerEntryAfterUnsubscribeReturnedFromAnotherThread) {
  StressLoop(kUnsubscribeRounds, [kind = GetParam()](std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    const int leave_after = 1 + static_cast<int>(rng() % 30);     // victim entries (was 5..95)
    const int publish_after = 10 + static_cast<int>(rng() % 41);  // publishes (was 200)
    Broker b{Options(kind)};
    b.create_topic("orders");
    std::atomic<bool> returned{false};
    std::atomic<int> victim_entries{0};
    std::atomic<int> late_entries{0};
    std::atomic<int> bystander{0};
    b.subscribe("orders", "victim", [&](const Delivery&) {
      if (returned.load()) late_entries.fetch_add(1);
      victim_entries.fetch_add(1);
      return true;
    });
    b.subscribe("orders", "bystander", [&](const Delivery&) {
      bystander.fetch_add(1);
      return true;
    });
    std::atomic<bool> stop{false};
    std::atomic<int> published{0};
    std::vector<std::thread> publishers;
    for (int p = 0; p < 2; ++p) {
      publishers.emplace_back([&] {
        while (!stop.load()) {
          b.publish("orders", "m");
          published.fetch_add(1);
          std::this_thread::yield();  // leaves the dispatcher some of the 2 cores
        }
      });
    }
    struct StopOnExit {  // a failed ASSERT below must not leave the publishers running
      std::atomic<bool>& stop;
      std::vector<std::thread>& threads;
      ~StopOnExit() {
        stop = true;
        for (auto& t : threads)
          if (t.joinable()) t.join();
      }
    } stop_on_exit{stop, publishers};
    ASSERT_TRUE(WaitUntil([&] { return victim_entries.load() >= leave_after; }));

    std::thread unsubscriber([&] {
      EXPECT_TRUE(b.unsubscribe("orders", "victim"));
      returned.store(true);
    });
    unsubscriber.join();
    const int at_return = victim_entries.load();
    const int published_at_return = published.load();
    ASSERT_TRUE(WaitUntil([&] { return published.load() >= published_at_return + publish_after; }));
    stop = true;
    for (auto& t : publishers) t.join();
    ASSERT_TRUE(WaitIdleUntil(
        b, [&] { return bystander.load() == static_cast<int>(b.end_offset("orders")); }));

    EXPECT_EQ(late_entries.load(), 0);
    EXPECT_EQ(victim_entries.load(), at_return);
    EXPECT_EQ(b.subscriptions("orders"), std::vector<std::string>{"bystander"});
  });
}

TEST_P(ThreadedPushStress, UnsubscribeWaitsForTheRunningOfferOnAnotherThread) {
  StressLoop(kPushIterations, [kind = GetParam()](std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    const int before = static_cast<int>(rng() % 4);  // offers confirmed before the one that waits
    const auto pause = std::chrono::milliseconds(1 + rng() % 5);  // was 20 ms
    std::latch entered{1};
    Gate release;
    std::atomic<bool> handler_done{false};
    Broker b{Options(kind)};
    OpenOnExit open_on_exit{release};
    b.create_topic("orders");
    b.subscribe("orders", "victim", [&](const Delivery& d) {
      if (d.message->offset() < static_cast<Offset>(before)) return true;
      entered.count_down();
      release.wait();
      handler_done = true;
      return true;
    });
    for (int i = 0; i <= before; ++i) b.publish("orders", "m");
    entered.wait();

    std::atomic<bool> calling{false};
    bool handler_done_when_returned = false;
    std::thread unsubscriber([&] {
      calling = true;
      EXPECT_TRUE(b.unsubscribe("orders", "victim"));
      handler_done_when_returned = handler_done.load();
    });
    ASSERT_TRUE(WaitUntil([&] { return calling.load(); }));
    // Not an assertion: gives unsubscribe time to reach its wait, so a broker that does not
    // wait is caught. The check below is about order only.
    std::this_thread::sleep_for(pause);
    release.open();
    unsubscriber.join();

    EXPECT_TRUE(handler_done_when_returned)
        << "unsubscribe returned while the offer was still running on another thread";
  });
}

TEST_P(ThreadedPushStress, MutualUnsubscribeFromRunningHandlersDoesNotDeadlock) {
  StressLoop(kPushIterations, [kind = GetParam()](std::uint64_t seed) {
    const Offset meet = seed % 4;  // the offset at which both handlers meet (was 0)
    Broker b{Options(kind)};
    b.create_topic("orders");
    std::barrier both_running{2};
    std::atomic<int> returned{0};
    std::atomic<int> unsubscribed{0};
    auto make = [&](std::string other) {
      return [&, other](const Delivery& d) {
        if (d.message->offset() == meet) {
          both_running.arrive_and_wait();
          if (b.unsubscribe("orders", other)) unsubscribed.fetch_add(1);
          returned.fetch_add(1);
        }
        return true;
      };
    };
    b.subscribe("orders", "a", make("b"));
    b.subscribe("orders", "b", make("a"));
    for (Offset o = 0; o <= meet; ++o) b.publish("orders", "m");

    ASSERT_TRUE(WaitUntil([&] { return returned.load() == 2; }))
        << "a waits for b's offer and b waits for a's: the cycle must be broken";
    EXPECT_EQ(unsubscribed.load(), 2);
    EXPECT_TRUE(b.subscriptions("orders").empty());
    EXPECT_TRUE(b.wait_idle(Millis{60000}));
  });
}

TEST_P(ThreadedPushStress, ConcurrentSubscribeUnsubscribeAndPublishStayConsistent) {
  StressLoop(kPushIterations, [kind = GetParam()](std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    const int churn_ops = 10 + static_cast<int>(rng() % 31);  // was 200
    const int names = 1 + static_cast<int>(rng() % 4);        // was 4
    Broker b{Options(kind)};
    b.create_topic("orders");
    std::atomic<bool> stop{false};
    std::atomic<int> handler_calls{0};
    std::thread publisher([&] {
      while (!stop.load()) {
        b.publish("orders", "m");
        std::this_thread::yield();
      }
    });
    std::thread churn([&] {
      for (int i = 0; i < churn_ops; ++i) {
        const std::string name = "t" + std::to_string(i % names);
        if (!b.unsubscribe("orders", name)) {
          b.subscribe("orders", name, [&](const Delivery&) {
            handler_calls.fetch_add(1);
            return true;
          });
        }
      }
    });
    churn.join();
    stop = true;
    publisher.join();
    for (int i = 0; i < names; ++i) b.unsubscribe("orders", "t" + std::to_string(i));
    EXPECT_TRUE(b.wait_idle(Millis{60000}));
    const int settled = handler_calls.load();
    b.publish("orders", "after");
    EXPECT_TRUE(b.wait_idle(Millis{60000}));
    EXPECT_EQ(handler_calls.load(), settled) << "no subscription is left to be offered anything";
    EXPECT_TRUE(b.subscriptions("orders").empty());
  });
}

}  // namespace
}  // namespace broker
