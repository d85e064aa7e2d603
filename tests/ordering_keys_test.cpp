// Order per key with parallel workers (SPEC R31), through the public API: seed 004's "keep
// order per customer while still using several workers", as Pub/Sub ordering keys and SQS
// FIFO message groups do it: one message per key in flight, each key in offset order, other
// keys to other workers meanwhile.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "broker/broker.h"
#include "harness/broker_runner.h"
#include "oplang/model_runner.h"
#include "oplang/text.h"
#include "test_support.h"

namespace broker {
namespace {

PullOptions ordered() {
  PullOptions o;
  o.ack_timeout = Millis{1000};
  o.start = StartPosition::beginning();
  o.ordered_by_key = true;
  return o;
}

std::vector<std::string> payloads(const std::vector<Received>& got) {
  std::vector<std::string> out;
  for (const Received& r : got) out.push_back(std::string(r.message->payload()));
  return out;
}

TEST(OrderingKeys, AKeyWithAMessageInFlightHandsOutNothingMoreOfIt) {
  Broker b(testing::on_manual_clock());
  b.create_topic("t");
  b.subscribe_pull("t", "s", ordered());
  b.publish("t", "a1", {}, "a");
  b.publish("t", "a2", {}, "a");
  b.publish("t", "b1", {}, "b");
  b.publish("t", "free");  // no key: not ordered
  EXPECT_EQ(payloads(b.poll("t", "s", "w1", 10, Time{})),
            (std::vector<std::string>{"a1", "b1", "free"}));
  EXPECT_TRUE(b.poll("t", "s", "w2", 10, Time{}).empty());  // a2 waits for a1
  ASSERT_TRUE(b.ack({"t", "s", "w1", 0}, Time{}));
  EXPECT_EQ(payloads(b.poll("t", "s", "w2", 10, Time{})), (std::vector<std::string>{"a2"}));
}

TEST(OrderingKeys, AFailedMessageComesBackBeforeTheRestOfItsKey) {
  Broker b(testing::on_manual_clock());
  b.create_topic("t");
  b.subscribe_pull("t", "s", ordered());
  b.publish("t", "a1", {}, "a");
  b.publish("t", "a2", {}, "a");
  ASSERT_EQ(payloads(b.poll("t", "s", "w1", 10, Time{})), (std::vector<std::string>{"a1"}));
  ASSERT_TRUE(b.nack({"t", "s", "w1", 0}, Time{}));
  const std::vector<Received> again = b.poll("t", "s", "w2", 10, Time{});
  ASSERT_EQ(payloads(again), (std::vector<std::string>{"a1"}));
  EXPECT_EQ(again[0].attempt, 2);
  // Expiry is a failure too: a2 still waits until a1 is done.
  EXPECT_EQ(b.expire(Time{} + Millis{1000}).size(), 1u);
  EXPECT_EQ(payloads(b.poll("t", "s", "w1", 10, Time{} + Millis{1000})),
            (std::vector<std::string>{"a1"}));
}

// A dead letter is done with: the rest of its key goes on (SPEC R31 says why).
TEST(OrderingKeys, ADeadLetterReleasesItsKey) {
  Broker b(testing::on_manual_clock());
  b.create_topic("t");
  PullOptions o = ordered();
  o.max_deliveries = 1;
  b.subscribe_pull("t", "s", o);
  b.publish("t", "a1", {}, "a");
  b.publish("t", "a2", {}, "a");
  ASSERT_EQ(payloads(b.poll("t", "s", "w", 10, Time{})), (std::vector<std::string>{"a1"}));
  ASSERT_TRUE(b.term({"t", "s", "w", 0}, Time{}));
  EXPECT_EQ(b.dead_letters("t", "s").size(), 1u);
  EXPECT_EQ(payloads(b.poll("t", "s", "w", 10, Time{})), (std::vector<std::string>{"a2"}));
}

TEST(OrderingKeys, OrderedIsAnOptionOfTheSubscriptionAndSurvivesARestart) {
  testing::TempDir dir("broker-ordering");
  {
    Broker b(testing::durable_in(dir).with_clock(std::make_shared<ManualClock>()));
    b.create_topic("t");
    b.subscribe_pull("t", "s", ordered());
    PullOptions unordered = ordered();
    unordered.ordered_by_key = false;
    try {
      b.subscribe_pull("t", "s", unordered);
      ADD_FAILURE() << "no OptionsMismatch";
    } catch (const OptionsMismatch& e) {
      EXPECT_EQ(e.option(), "ordered_by_key");
    }
    b.publish("t", "a1", {}, "a");
    b.publish("t", "a2", {}, "a");
  }
  Broker b(testing::durable_in(dir).with_clock(std::make_shared<ManualClock>()));
  b.subscribe_pull("t", "s", ordered());  // the same options: returns silently
  EXPECT_EQ(payloads(b.poll("t", "s", "w", 10, Time{})), (std::vector<std::string>{"a1"}));
}

// Four workers on threads, 1,000 messages over 20 keys: no key ever has two messages held
// at once, and each key's messages are confirmed in publish order.
TEST(OrderingKeys, ParallelWorkersKeepEachKeysOrder) {
  Broker b;
  b.create_topic("t");
  b.subscribe_pull("t", "s", ordered());
  constexpr int kMessages = 1000;
  constexpr int kKeys = 20;
  for (int i = 0; i < kMessages; ++i) {
    b.publish("t", std::to_string(i), {}, "k" + std::to_string(i % kKeys));
  }
  std::mutex mu;
  std::set<std::string> in_hand;
  std::map<std::string, std::vector<int>> confirmed;
  std::atomic<int> done{0};
  std::atomic<bool> overlap{false};
  auto worker = [&](int w) {
    const std::string me = "w" + std::to_string(w);
    const auto give_up = std::chrono::steady_clock::now() + testing::kHangGuard;
    while (done.load() < kMessages && std::chrono::steady_clock::now() < give_up) {
      for (const Received& r : b.poll("t", "s", me, 3)) {
        {
          std::lock_guard lock(mu);
          if (!in_hand.insert(std::string(r.message->key())).second) overlap = true;
        }
        std::this_thread::yield();
        {
          // Out of hand before the ack: once acked, the key's next message may be polled.
          std::lock_guard lock(mu);
          in_hand.erase(std::string(r.message->key()));
          confirmed[std::string(r.message->key())].push_back(
              std::stoi(std::string(r.message->payload())));
        }
        ASSERT_TRUE(b.ack(r.receipt));
        ++done;
      }
    }
  };
  std::vector<std::thread> workers;
  for (int w = 0; w < 4; ++w) workers.emplace_back(worker, w);
  for (auto& t : workers) t.join();
  EXPECT_EQ(done.load(), kMessages);
  EXPECT_FALSE(overlap.load()) << "two messages of one key were held at once";
  for (const auto& [key, got] : confirmed) {
    EXPECT_TRUE(std::is_sorted(got.begin(), got.end())) << key;
    EXPECT_EQ(got.size(), static_cast<std::size_t>(kMessages / kKeys)) << key;
  }
}

// R31 over many keys, against the model step by step: thousands of distinct keys coming and
// going (the subscription forgets the index entries of keys with nothing held or waiting in
// batches, once they outnumber the live ones), workers polling, acking, nacking and letting
// deadlines pass. Scripts are random from a printed seed; a difference prints the script.
TEST(OrderingKeys, ManyKeysComingAndGoingKeepTheModelsOrder) {
  for (std::uint32_t seed = 1; seed <= 6; ++seed) {
    std::mt19937 rng(seed);
    auto pick = [&rng](std::size_t n) {
      return std::uniform_int_distribution<std::size_t>(0, n - 1)(rng);
    };
    oplang::ModelRunner model;
    harness::BrokerRunner broker;
    oplang::Script script;
    std::map<std::string, std::vector<model::Offset>> hands;  // member -> offsets it polled
    auto run = [&](const oplang::Op& op) {
      script.push_back(op);
      const oplang::Outcome expected = model.step(op);
      const oplang::Outcome got = broker.step(op);
      if (!(expected == got)) {
        ADD_FAILURE() << "seed " << seed << ", step " << script.size() - 1 << ": model "
                      << oplang::print(expected) << ", broker " << oplang::print(got)
                      << "\nscript:\n"
                      << oplang::print(script);
        return false;
      }
      if (const auto* polled = std::get_if<std::vector<model::Received>>(&expected.value)) {
        const auto* poll = std::get_if<oplang::Poll>(&op);
        for (const model::Received& r : *polled) hands[poll->member].push_back(r.offset);
      }
      return true;
    };
    ASSERT_TRUE(run(oplang::CreateTopic{"t"}));
    oplang::SubscribePull sub;
    sub.topic = "t";
    sub.name = "s";
    sub.ordered_by_key = true;
    sub.ack_timeout = 50;
    sub.max_deliveries = 3;
    sub.start = model::Start{model::Start::Kind::kBeginning};
    ASSERT_TRUE(run(sub));
    const std::size_t keys = 500 + pick(3000);  // a hot few and a long tail of others
    for (int step = 0; step < 6000; ++step) {
      const std::string member = "w" + std::to_string(pick(4));
      std::vector<model::Offset>& hand = hands[member];
      const std::size_t roll = pick(100);
      bool ok = true;
      if (roll < 45) {
        const std::size_t k = pick(4) == 0 ? pick(8) : pick(keys);
        ok = run(
            oplang::Publish{"t", std::to_string(step), {}, k == 0 ? "" : "k" + std::to_string(k)});
      } else if (roll < 65) {
        ok = run(oplang::Poll{"t", "s", member, 1 + pick(60)});
      } else if (roll < 90 && !hand.empty()) {
        const std::size_t i = pick(hand.size());
        const model::Offset offset = hand[i];
        hand.erase(hand.begin() + static_cast<std::ptrdiff_t>(i));
        if (roll < 85) {
          ok = run(oplang::Ack{"t", "s", offset, member});
        } else {
          ok = run(oplang::Nack{"t", "s", offset, member});
        }
      } else if (roll < 95) {
        ok = run(oplang::Advance{static_cast<model::Millis>(pick(30))}) && run(oplang::Expire{});
      } else {
        ok = run(oplang::GetStats{"t", "s"});
      }
      ASSERT_TRUE(ok);
    }
  }
}

}  // namespace
}  // namespace broker
