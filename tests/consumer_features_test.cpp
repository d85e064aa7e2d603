// What the peers' consumers have (issue 18), through the public API: max_in_flight (SPEC R22),
// terminate (R23), retry later (R24), redrive and purge (R25), pause (R26), lag (R27) and
// seek by time (R28), for pull workers, push handlers on every dispatcher, and a durable
// broker that reopens its directory.
#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "broker/broker.h"
#include "test_support.h"

namespace broker {
namespace {

PullOptions bounded(std::size_t max_in_flight) {
  PullOptions o;
  o.ack_timeout = Millis{1000};
  o.start = StartPosition::beginning();
  o.max_in_flight = max_in_flight;
  return o;
}

std::vector<Offset> offsets(const std::vector<Received>& got) {
  std::vector<Offset> out;
  for (const Received& r : got) out.push_back(r.message->offset());
  return out;
}

TEST(MaxInFlight, PollHandsOutNothingPastTheBoundOfAllWorkersTogether) {
  Broker b(testing::on_manual_clock());
  b.create_topic("t");
  b.subscribe_pull("t", "s", bounded(2));
  for (int i = 0; i < 4; ++i) b.publish("t", "m" + std::to_string(i));
  const std::vector<Received> first = b.poll("t", "s", "w1", 3, Time{});
  EXPECT_EQ(offsets(first), (std::vector<Offset>{0, 1}));
  EXPECT_TRUE(b.poll("t", "s", "w2", 3, Time{}).empty());
  EXPECT_EQ(b.stats("t", "s").backlog, 2u);  // the rest waits, counted
  ASSERT_TRUE(b.ack(first[0].receipt, Time{}));
  EXPECT_EQ(offsets(b.poll("t", "s", "w2", 3, Time{})), (std::vector<Offset>{2}));
}

TEST(MaxInFlight, ARedeliveryTakesAPlaceLikeANewMessage) {
  Broker b(testing::on_manual_clock());
  b.create_topic("t");
  b.subscribe_pull("t", "s", bounded(1));
  b.publish("t", "a");
  b.publish("t", "b");
  const std::vector<Received> got = b.poll("t", "s", "w", 5, Time{});
  ASSERT_EQ(offsets(got), (std::vector<Offset>{0}));
  ASSERT_EQ(b.expire(Time{} + Millis{1000}).size(), 1u);  // back, no longer held
  const std::vector<Received> again = b.poll("t", "s", "w", 5, Time{} + Millis{1000});
  ASSERT_EQ(again.size(), 1u);
  EXPECT_EQ(again[0].message->offset(), 0u);
  EXPECT_EQ(again[0].attempt, 2);
}

TEST(MaxInFlight, ABadBoundIsRefusedAndAnotherBoundIsAnOptionsMismatch) {
  Broker b(testing::on_manual_clock());
  b.create_topic("t");
  EXPECT_THROW(b.subscribe_pull("t", "s", bounded(kMaxInFlight + 1)), InvalidArgument);
  EXPECT_TRUE(b.subscriptions("t").empty());  // nothing changed
  b.subscribe_pull("t", "s", bounded(3));
  try {
    b.subscribe_pull("t", "s", bounded(4));
    FAIL() << "expected OptionsMismatch";
  } catch (const OptionsMismatch& e) {
    EXPECT_NE(std::string(e.what()).find("max_in_flight"), std::string::npos) << e.what();
  }
}

TEST(MaxInFlight, ADurableSubscriptionKeepsItsBoundAcrossARestart) {
  testing::TempDir dir("broker-consumer");
  StorageOptions storage;
  storage.directory = dir.str() + "/store";
  {
    Broker b(BrokerOptions::synchronous().with_storage(storage).with_clock(
        std::make_shared<ManualClock>()));
    b.create_topic("t");
    b.subscribe_pull("t", "s", bounded(1));
    b.publish("t", "a");
    b.publish("t", "b");
  }
  Broker b(BrokerOptions::synchronous().with_storage(storage).with_clock(
      std::make_shared<ManualClock>()));
  EXPECT_EQ(b.poll("t", "s", "w", 5).size(), 1u);
  b.subscribe_pull("t", "s", bounded(1));  // the same options: a no-op
  EXPECT_THROW(b.subscribe_pull("t", "s", bounded(0)), OptionsMismatch);
}

TEST(Terminate, TermDeadLettersAHeldMessageAtOnceWhateverItsAttempts) {
  Broker b(testing::on_manual_clock());
  b.create_topic("t");
  PullOptions o = bounded(0);
  o.max_deliveries = 0;  // no limit: only term ends it
  b.subscribe_pull("t", "s", o);
  b.publish("t", "poison");
  b.publish("t", "fine");
  const std::vector<Received> got = b.poll("t", "s", "w", 2, Time{});
  ASSERT_EQ(got.size(), 2u);
  Receipt other = got[0].receipt;
  other.member = "intruder";
  EXPECT_FALSE(b.term(other, Time{}));                          // only its holder
  EXPECT_FALSE(b.term(got[0].receipt, Time{} + Millis{1000}));  // only before the deadline
  EXPECT_TRUE(b.term(got[0].receipt, Time{}));
  EXPECT_FALSE(b.term(got[0].receipt, Time{}));  // already dead
  const std::vector<DeadLetter> dead = b.dead_letters("t", "s");
  ASSERT_EQ(dead.size(), 1u);
  EXPECT_EQ(dead[0].message->payload(), "poison");
  EXPECT_EQ(dead[0].reason, "terminated");
  EXPECT_EQ(dead[0].attempts, 1);
  EXPECT_TRUE(b.ack(got[1].receipt, Time{}));
  EXPECT_TRUE(b.expire(Time{} + Millis{5000}).empty());  // the terminated one never comes back
  EXPECT_EQ(b.stats("t", "s").committed, 2u);
}

// A handler that throws broker::Terminate on a poison message: dead-lettered on its first
// failure, on every dispatcher, and the subscription goes on with the next message.
TEST(Terminate, APushHandlerThatThrowsTerminateGivesUpAtOnceOnEveryDispatcher) {
  const std::vector<BrokerOptions> dispatchers = {BrokerOptions::synchronous(),
                                                  BrokerOptions::lane(), BrokerOptions::pool(2)};
  for (std::size_t k = 0; k < dispatchers.size(); ++k) {
    SCOPED_TRACE(k == 0 ? "synchronous" : k == 1 ? "lane" : "pool");
    Broker b(dispatchers[k]);
    b.create_topic("t");
    std::atomic<int> poison_calls{0};
    PushOptions o;
    o.max_deliveries = 5;
    b.subscribe(
        "t", "s",
        [&](const Delivery& d) {
          if (d.message->payload() != "poison") return true;
          ++poison_calls;
          throw Terminate();
        },
        o);
    b.publish("t", "poison");
    b.publish("t", "fine");
    if (k == 0) {
      EXPECT_EQ(b.drain(), 0u);  // poison terminated: the drain stops for s (R8)
      EXPECT_EQ(b.drain(), 1u);  // then "fine"
    }
    ASSERT_TRUE(b.wait_delivered(Millis{10'000}));
    EXPECT_EQ(poison_calls.load(), 1);
    const std::vector<DeadLetter> dead = b.dead_letters("t", "s");
    ASSERT_EQ(dead.size(), 1u);
    EXPECT_EQ(dead[0].reason, "terminated");
    EXPECT_EQ(dead[0].attempts, 1);
    EXPECT_EQ(b.stats("t", "s").confirmed, 1u);
  }
}

TEST(RetryLater, ANackWithADelayIsOfferedAgainOnlyOnceItsWaitIsOver) {
  Broker b(testing::on_manual_clock());
  b.create_topic("t");
  b.subscribe_pull("t", "s", bounded(0));
  b.publish("t", "a");
  b.publish("t", "b");
  const Time t0{};
  const std::vector<Received> got = b.poll("t", "s", "w", 1, t0);
  EXPECT_THROW(b.nack(got[0].receipt, t0, Millis{-1}), InvalidArgument);
  EXPECT_TRUE(b.nack(got[0].receipt, t0, Millis{100}));
  EXPECT_EQ(offsets(b.poll("t", "s", "w", 5, t0 + Millis{99})), (std::vector<Offset>{1}));
  EXPECT_EQ(b.stats("t", "s").backlog, 1u);  // waiting, counted
  const std::vector<Received> due = b.poll("t", "s", "w", 5, t0 + Millis{100});
  ASSERT_EQ(offsets(due), (std::vector<Offset>{0}));
  EXPECT_EQ(due[0].attempt, 2);
}

TEST(RetryLater, TheBackoffListSetsTheWaitPerAttemptAndSurvivesARestart) {
  testing::TempDir dir("broker-consumer");
  StorageOptions storage;
  storage.directory = dir.str() + "/store";
  PullOptions o = bounded(0);
  o.backoff = {Millis{10}, Millis{50}};
  {
    Broker b(BrokerOptions::synchronous().with_storage(storage).with_clock(
        std::make_shared<ManualClock>()));
    b.create_topic("t");
    b.subscribe_pull("t", "s", o);
    b.publish("t", "a");
  }
  Broker b(BrokerOptions::synchronous().with_storage(storage).with_clock(
      std::make_shared<ManualClock>()));
  EXPECT_THROW(b.subscribe_pull("t", "s", bounded(0)), OptionsMismatch);  // the list came back
  b.subscribe_pull("t", "s", o);
  const Time t0{};
  ASSERT_TRUE(b.nack(b.poll("t", "s", "w", 1, t0).at(0).receipt, t0));  // attempt 1: waits 10
  EXPECT_TRUE(b.poll("t", "s", "w", 1, t0 + Millis{9}).empty());
  const std::vector<Received> second = b.poll("t", "s", "w", 1, t0 + Millis{10});
  ASSERT_EQ(second.size(), 1u);
  ASSERT_TRUE(b.nack(second[0].receipt, t0 + Millis{10}));  // attempt 2: waits 50
  EXPECT_TRUE(b.poll("t", "s", "w", 1, t0 + Millis{59}).empty());
  EXPECT_EQ(b.poll("t", "s", "w", 1, t0 + Millis{60}).at(0).attempt, 3);
  PullOptions bad = bounded(0);
  bad.backoff = {Millis{-1}};
  EXPECT_THROW(b.subscribe_pull("t", "x", bad), InvalidArgument);
}

const std::vector<BrokerOptions>& every_dispatcher() {
  static const std::vector<BrokerOptions> all = {BrokerOptions::synchronous(),
                                                 BrokerOptions::lane(), BrokerOptions::pool(2)};
  return all;
}
const char* dispatcher_name(std::size_t k) {
  return k == 0 ? "synchronous" : k == 1 ? "lane" : "pool";
}

// R24 for push: a failed offer waits its back-off on the injected clock while newer messages
// are offered; wait_idle calls the wait idle, wait_delivered does not call it delivered.
TEST(RetryLater, AFailedPushOfferWaitsItsBackoffWhileNewerMessagesGoOn) {
  auto clock = std::make_shared<ManualClock>(Time{});
  Broker b(BrokerOptions::synchronous().with_clock(clock));
  b.create_topic("t");
  std::vector<std::string> calls;
  PushOptions o;
  o.start = StartPosition::beginning();
  o.backoff = {Millis{100}};
  b.subscribe(
      "t", "s",
      [&](const Delivery& d) {
        calls.push_back(std::string(d.message->payload()) + "#" + std::to_string(d.attempt));
        return d.message->payload() != "a" || d.attempt > 1;
      },
      o);
  b.publish("t", "a");
  b.publish("t", "b");
  EXPECT_EQ(b.drain(), 0u);  // a fails: the drain stops for s (R8)
  EXPECT_EQ(b.drain(), 1u);  // b; a waits until t=100
  EXPECT_EQ(b.drain(), 0u);
  EXPECT_TRUE(b.wait_idle(Millis{0}));
  EXPECT_FALSE(b.wait_delivered(Millis{0}));
  clock->advance(Millis{99});
  EXPECT_EQ(b.drain(), 0u);
  clock->advance(Millis{1});
  EXPECT_EQ(b.drain(), 1u);
  EXPECT_EQ(calls, (std::vector<std::string>{"a#1", "b#1", "a#2"}));
  PushOptions bad;
  bad.backoff = {Millis{-1}};
  EXPECT_THROW(b.subscribe(
                   "t", "x", [](const Delivery&) { return true; }, bad),
               InvalidArgument);
}

// The threaded dispatchers sleep through the wait and look again when it ends.
TEST(RetryLater, ThreadedDispatchersOfferAFailedMessageAgainOnlyAfterItsBackoff) {
  for (std::size_t k = 1; k < every_dispatcher().size(); ++k) {
    SCOPED_TRACE(dispatcher_name(k));
    Broker b(every_dispatcher()[k]);
    b.create_topic("t");
    std::mutex mu;
    std::vector<std::pair<std::string, Time>> calls;  // payload#attempt, when it began
    Time failed_at{};
    PushOptions o;
    o.backoff = {Millis{50}};
    b.subscribe(
        "t", "s",
        [&](const Delivery& d) {
          std::lock_guard<std::mutex> lock(mu);
          calls.emplace_back(std::string(d.message->payload()) + "#" + std::to_string(d.attempt),
                             b.clock().now());
          const bool ok = d.message->payload() != "a" || d.attempt > 1;
          if (!ok) failed_at = b.clock().now();
          return ok;
        },
        o);
    b.publish("t", "a");
    b.publish("t", "b");
    ASSERT_TRUE(b.wait_delivered(Millis{10'000}));
    std::lock_guard<std::mutex> lock(mu);
    ASSERT_EQ(calls.size(), 3u);
    EXPECT_EQ(calls[0].first, "a#1");
    EXPECT_EQ(calls[1].first, "b#1");  // not held back by the wait
    EXPECT_EQ(calls[2].first, "a#2");
    EXPECT_GE(calls[2].second - failed_at, Millis{50});  // never before its wait ended
  }
}

// Push: a handler that fails "bad" messages until `healed`; after the fix, a redrive
// delivers them again as first attempts, on every dispatcher.
TEST(Redrive, DeadLettersComeBackAsFirstAttemptsOnEveryDispatcher) {
  for (std::size_t k = 0; k < every_dispatcher().size(); ++k) {
    SCOPED_TRACE(dispatcher_name(k));
    Broker b(every_dispatcher()[k]);
    b.create_topic("t");
    std::atomic<bool> healed{false};
    std::atomic<int> delivered_after_fix{0};
    std::atomic<int> first_attempts_after_fix{0};
    PushOptions o;
    o.max_deliveries = 2;
    o.start = StartPosition::beginning();
    b.subscribe(
        "t", "s",
        [&](const Delivery& d) {
          if (d.message->payload() != "bad") return true;
          if (!healed) return false;
          ++delivered_after_fix;
          if (d.attempt == 1) ++first_attempts_after_fix;
          return true;
        },
        o);
    for (const char* p : {"bad", "ok", "bad", "ok"}) b.publish("t", p);
    for (int i = 0; i < 8 && k == 0; ++i) b.drain();
    ASSERT_TRUE(b.wait_delivered(Millis{10'000}));
    ASSERT_EQ(b.dead_letters("t", "s").size(), 2u);
    healed = true;
    EXPECT_EQ(b.redrive("t", "s"), 2u);
    if (k == 0) b.drain();
    ASSERT_TRUE(b.wait_delivered(Millis{10'000}));
    EXPECT_EQ(delivered_after_fix.load(), 2);
    EXPECT_EQ(first_attempts_after_fix.load(), 2);
    EXPECT_TRUE(b.dead_letters("t", "s").empty());
    const SubscriptionStats st = b.stats("t", "s");
    EXPECT_EQ(st.redriven, 2u);
    EXPECT_EQ(st.committed, 4u);
  }
}

TEST(Redrive, RedriveToPublishesTheWholeMessageAndPurgeDropsTheRest) {
  Broker b(testing::on_manual_clock());
  b.create_topic("t");
  b.create_topic("parking");
  PullOptions o = bounded(0);
  o.max_deliveries = 1;
  b.subscribe_pull("t", "s", o);
  b.publish("t", "a", {{"kind", "x"}}, "key-a");
  b.publish("t", "b");
  for (const Received& r : b.poll("t", "s", "w", 2, Time{})) ASSERT_TRUE(b.term(r.receipt, Time{}));
  EXPECT_THROW(b.redrive_to("t", "s", "nope"), UnknownTopic);
  EXPECT_EQ(b.dead_letters("t", "s").size(), 2u);  // nothing changed
  b.subscribe_pull("parking", "p", bounded(0));
  EXPECT_EQ(b.redrive_to("t", "s", "parking"), (std::vector<Offset>{0, 1}));
  const std::vector<Received> parked = b.poll("parking", "p", "w", 5, Time{});
  ASSERT_EQ(parked.size(), 2u);
  EXPECT_EQ(parked[0].message->payload(), "a");
  EXPECT_EQ(parked[0].message->headers(), (Headers{{"kind", "x"}}));
  EXPECT_EQ(parked[0].message->key(), "key-a");
  EXPECT_TRUE(b.dead_letters("t", "s").empty());
  // Two more die; purge drops them and counts them.
  b.publish("t", "c");
  b.publish("t", "d");
  for (const Received& r : b.poll("t", "s", "w", 2, Time{})) ASSERT_TRUE(b.term(r.receipt, Time{}));
  EXPECT_EQ(b.purge_dead_letters("t", "s"), 2u);
  EXPECT_TRUE(b.dead_letters("t", "s").empty());
  const SubscriptionStats st = b.stats("t", "s");
  EXPECT_EQ(st.redriven, 2u);
  EXPECT_EQ(st.purged, 2u);
  EXPECT_EQ(st.dead_lettered, 4u);
}

// The journal records what redrive and purge took away (a commit that rewrites the dead
// letters): a restart neither brings them back nor loses the redriven position.
TEST(Redrive, RedriveAndPurgeSurviveARestart) {
  testing::TempDir dir("broker-consumer");
  StorageOptions storage;
  storage.directory = dir.str() + "/store";
  PullOptions o = bounded(0);
  o.max_deliveries = 1;
  {
    Broker b(BrokerOptions::synchronous().with_storage(storage).with_clock(
        std::make_shared<ManualClock>()));
    b.create_topic("t");
    b.subscribe_pull("t", "s", o);
    b.subscribe_pull("t", "q", o);
    for (const char* p : {"a", "b"}) b.publish("t", p);
    for (const char* sub : {"s", "q"}) {
      for (const Received& r : b.poll("t", sub, "w", 2, Time{})) b.term(r.receipt, Time{});
    }
    EXPECT_EQ(b.redrive("t", "s"), 2u);
    EXPECT_EQ(b.purge_dead_letters("t", "q"), 2u);
  }
  Broker b(BrokerOptions::synchronous().with_storage(storage).with_clock(
      std::make_shared<ManualClock>()));
  EXPECT_TRUE(b.dead_letters("t", "s").empty());
  EXPECT_TRUE(b.dead_letters("t", "q").empty());
  EXPECT_EQ(b.stats("t", "q").committed, 2u);
  EXPECT_EQ(offsets(b.poll("t", "s", "w", 5, Time{})), (std::vector<Offset>{0, 1}));
}

// Found by DurableDeliveryAcrossRestarts: a push subscription back from a restart waits for
// subscribe (R20); what a redrive returns meanwhile must survive that resume.
TEST(Redrive, WhatARedriveReturnsBeforeAPushSubscriptionResumesIsDelivered) {
  testing::TempDir dir("broker-consumer");
  StorageOptions storage;
  storage.directory = dir.str() + "/store";
  PushOptions o;
  o.max_deliveries = 1;
  o.start = StartPosition::beginning();
  {
    Broker b(BrokerOptions::synchronous().with_storage(storage).with_clock(
        std::make_shared<ManualClock>()));
    b.create_topic("t");
    b.subscribe(
        "t", "s", [](const Delivery&) { return false; }, o);
    b.publish("t", "a");
    b.drain();
    ASSERT_EQ(b.dead_letters("t", "s").size(), 1u);
  }
  Broker b(BrokerOptions::synchronous().with_storage(storage).with_clock(
      std::make_shared<ManualClock>()));
  EXPECT_EQ(b.redrive("t", "s"), 1u);  // no handler yet
  std::vector<std::string> seen;
  b.subscribe(
      "t", "s",
      [&](const Delivery& d) {
        seen.push_back(std::string(d.message->payload()));
        return true;
      },
      o);
  EXPECT_EQ(b.drain(), 1u);
  EXPECT_EQ(seen, (std::vector<std::string>{"a"}));
}

// Pause on the threaded dispatchers: no offer starts while paused, wait_idle says idle,
// wait_delivered says not delivered, and resume wakes the dispatcher, which delivers in order.
TEST(Pause, APausedPushSubscriptionGetsNoOfferUntilResumedOnEveryDispatcher) {
  for (std::size_t k = 0; k < every_dispatcher().size(); ++k) {
    SCOPED_TRACE(dispatcher_name(k));
    Broker b(every_dispatcher()[k]);
    b.create_topic("t");
    std::mutex mu;
    std::vector<std::string> seen;
    b.subscribe("t", "s", [&](const Delivery& d) {
      std::lock_guard<std::mutex> lock(mu);
      seen.push_back(std::string(d.message->payload()));
      return true;
    });
    EXPECT_TRUE(b.pause("t", "s"));
    for (int i = 0; i < 20; ++i) b.publish("t", std::to_string(i));
    if (k == 0) {
      EXPECT_EQ(b.drain(), 0u);
    }
    EXPECT_TRUE(b.wait_idle(Millis{10'000}));
    EXPECT_FALSE(b.wait_delivered(Millis{20}));
    {
      std::lock_guard<std::mutex> lock(mu);
      EXPECT_TRUE(seen.empty());
    }
    EXPECT_EQ(b.stats("t", "s").backlog, 20u);
    EXPECT_TRUE(b.stats("t", "s").paused);
    EXPECT_TRUE(b.resume("t", "s"));
    if (k == 0) {
      EXPECT_EQ(b.drain(), 20u);
    }
    ASSERT_TRUE(b.wait_delivered(Millis{10'000}));
    std::lock_guard<std::mutex> lock(mu);
    ASSERT_EQ(seen.size(), 20u);
    for (int i = 0; i < 20; ++i) EXPECT_EQ(seen[static_cast<std::size_t>(i)], std::to_string(i));
  }
}

TEST(Pause, APausedPullSubscriptionHandsOutNothingButItsHeldMessagesAreAnswered) {
  Broker b(testing::on_manual_clock());
  b.create_topic("t");
  b.subscribe_pull("t", "s", bounded(0));
  b.publish("t", "a");
  b.publish("t", "b");
  const std::vector<Received> held = b.poll("t", "s", "w", 1, Time{});
  EXPECT_TRUE(b.pause("t", "s"));
  EXPECT_FALSE(b.pause("t", "s"));
  EXPECT_TRUE(b.poll("t", "s", "w", 5, Time{}).empty());
  EXPECT_TRUE(b.poll_wait("t", "s", "w", 5, Millis{20}).empty());
  EXPECT_TRUE(b.ack(held.at(0).receipt, Time{}));
  EXPECT_THROW(b.pause("t", "nope"), UnknownSubscription);
  EXPECT_TRUE(b.resume("t", "s"));
  EXPECT_EQ(offsets(b.poll("t", "s", "w", 5, Time{})), (std::vector<Offset>{1}));
}

TEST(Lag, CountsWhatIsNotConfirmedAndAgesTheLowestOnTheInjectedClock) {
  auto clock = std::make_shared<ManualClock>(Time{});
  Broker b(BrokerOptions::synchronous().with_clock(clock));
  b.create_topic("t");
  b.subscribe_pull("t", "s", bounded(0));
  b.publish("t", "a");
  clock->advance(Millis{40});
  b.publish("t", "b");
  clock->advance(Millis{10});
  EXPECT_EQ(b.lag("t", "s", clock->now()), (Lag{2, Millis{50}}));
  const std::vector<Received> got = b.poll("t", "s", "w", 1, clock->now());
  EXPECT_EQ(b.lag("t", "s", clock->now()), (Lag{2, Millis{50}}));  // held is not confirmed
  ASSERT_TRUE(b.ack(got.at(0).receipt, clock->now()));
  EXPECT_EQ(b.lag("t", "s", clock->now()), (Lag{1, Millis{10}}));
  EXPECT_THROW((void)b.lag("t", "nope", clock->now()), UnknownSubscription);
}

TEST(SeekToTime, ReplaysFromTheFirstMessageAtOrAfterATimeAndRefusesTheFuture) {
  auto clock = std::make_shared<ManualClock>(Time{});
  Broker b(BrokerOptions::synchronous().with_clock(clock));
  b.create_topic("t");
  b.subscribe_pull("t", "s", bounded(0));
  for (int i = 0; i < 3; ++i) {
    b.publish("t", std::to_string(i));  // at 0, 10, 20
    clock->advance(Millis{10});
  }
  for (const Received& r : b.poll("t", "s", "w", 5, clock->now())) b.ack(r.receipt, clock->now());
  EXPECT_EQ(b.offset_for_time("t", Time{} + Millis{5}), 1u);
  EXPECT_EQ(b.offset_for_time("t", Time{} + Millis{25}), 3u);  // none: the end
  EXPECT_THROW((void)b.offset_for_time("t", clock->now() + Millis{1}), InvalidArgument);
  EXPECT_THROW(b.seek_to_time("t", "s", clock->now() + Millis{1}), InvalidArgument);
  EXPECT_EQ(b.stats("t", "s").cursor, 3u);  // the refused seek moved nothing
  EXPECT_EQ(b.seek_to_time("t", "s", Time{} + Millis{10}), 1u);
  const std::vector<Received> again = b.poll("t", "s", "w", 5, clock->now());
  EXPECT_EQ(offsets(again), (std::vector<Offset>{1, 2}));
  EXPECT_EQ(again.at(0).attempt, 1);
}

}  // namespace
}  // namespace broker
