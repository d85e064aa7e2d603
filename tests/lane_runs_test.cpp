// SPEC R15's runs on real threads: a lane takes ready messages (a run: 1, 2, 4, ... up to 64)
// in one critical section and applies their results together. What a run may not change: the
// handler sees R5's order one message at a time, nothing after a failure is confirmed or
// counted as offered, and a pause, seek or unsubscribe stops it before its next message.
// What it does change, and these tests pin: the messages it took count as delivered and
// held (R13's in_flight) from the take on, also through the re-offer of a first failure
// (unless the subscription is durable) and never through a back-off.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <iterator>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "test_support.h"

namespace broker {
namespace {

using testing::TempDir;
using testing::WaitUntil;

/// Monotonic time in whole milliseconds, as the lane measures its back-off.
Millis steady_ms() {
  return std::chrono::duration_cast<Millis>(std::chrono::steady_clock::now().time_since_epoch());
}

constexpr Millis kBound{10000};
constexpr int kReady = 10;
constexpr Millis kBackoff{1};

/// One handler call: the offset and attempt it was offered.
using Call = std::pair<Offset, int>;

/// A lane broker whose subscription "s" on "t" finds kReady messages ready at once when it
/// is resumed (a backlog: its runs take 1, 2, 4, then the 3 left), and whose handler is
/// `handle`, recorded.
class ReadyRun {
 public:
  explicit ReadyRun(std::function<bool(Broker&, const Delivery&)> handle,
                    const BrokerOptions& options = lane())
      : handle_(std::move(handle)), b_(options) {
    b_.create_topic("t");
    b_.subscribe("t", "s", [this](const Delivery& d) {
      {
        std::lock_guard<std::mutex> lock(mu_);
        calls_.emplace_back(d.message->offset(), d.attempt);
      }
      return handle_(b_, d);
    });
    b_.pause("t", "s");
    for (int i = 0; i < kReady; ++i) b_.publish("t", "m" + std::to_string(i));
  }
  /// The lane options these tests use: a failure's back-off of 1 ms.
  static BrokerOptions lane() { return BrokerOptions::lane().with_retry_backoff(kBackoff); }
  Broker& broker() { return b_; }
  std::vector<Call> calls() {
    std::lock_guard<std::mutex> lock(mu_);
    return calls_;
  }

 private:
  std::function<bool(Broker&, const Delivery&)> handle_;
  std::mutex mu_;
  std::vector<Call> calls_;
  Broker b_;
};

// R15: a run takes ready messages at once (1, then 2, 4, ... after fully confirmed runs):
// from the take on they count as delivered and held (a handler sees its whole run in
// in_flight), and nothing of a run is confirmed before its results are applied together.
TEST(LaneRuns, ARunHoldsEveryMessageItTookUntilItsResultsAreApplied) {
  SubscriptionStats seen;
  ReadyRun r([&seen](Broker& b, const Delivery& d) {
    if (d.message->offset() == 4) seen = b.stats("t", "s");  // in the run {3, 4, 5, 6}
    return true;
  });
  r.broker().resume("t", "s");
  ASSERT_TRUE(r.broker().wait_delivered(kBound));
  EXPECT_EQ(seen.in_flight, 4u);
  EXPECT_EQ(seen.delivered, 7u);
  EXPECT_EQ(seen.confirmed, 3u);
  EXPECT_EQ(seen.committed, 3u);
  const SubscriptionStats end = r.broker().stats("t", "s");
  EXPECT_EQ(end.confirmed, static_cast<std::uint64_t>(kReady));
  EXPECT_EQ(end.delivered, static_cast<std::uint64_t>(kReady));
  EXPECT_EQ(end.in_flight, 0u);
}

// R15 with R7: a failure ends the run. The confirmations before it apply, the failed message
// is re-offered at once, and the messages after it were never offered: they come after the
// re-offer, at their first attempt, counted once each.
TEST(LaneRuns, AFailureEndsTheRunAndWhatFollowsItWasNeverOffered) {
  ReadyRun r(
      [](Broker&, const Delivery& d) { return !(d.message->offset() == 3 && d.attempt == 1); });
  r.broker().resume("t", "s");
  ASSERT_TRUE(r.broker().wait_delivered(kBound));
  std::vector<Call> want;
  for (Offset o = 0; o < kReady; ++o) {
    want.emplace_back(o, 1);
    if (o == 3) want.emplace_back(o, 2);
  }
  EXPECT_EQ(r.calls(), want);
  const SubscriptionStats s = r.broker().stats("t", "s");
  EXPECT_EQ(s.delivered, static_cast<std::uint64_t>(kReady + 1));
  EXPECT_EQ(s.redelivered, 1u);
  EXPECT_EQ(s.confirmed, static_cast<std::uint64_t>(kReady));
}

// R15: after the first failure of a row the run goes on with the failed message again and
// then the rest it took, which stay held through the re-offer (never offered, so at their
// first attempt, counted once each).
TEST(LaneRuns, AFirstFailureIsOfferedAgainBeforeTheRestOfItsRunWhichStaysHeld) {
  SubscriptionStats seen;
  ReadyRun r([&seen](Broker& b, const Delivery& d) {
    if (d.message->offset() != 3) return true;  // in the run {3, 4, 5, 6}
    if (d.attempt == 2) seen = b.stats("t", "s");
    return d.attempt > 1;
  });
  r.broker().resume("t", "s");
  ASSERT_TRUE(r.broker().wait_delivered(kBound));
  EXPECT_EQ(seen.in_flight, 4u);  // 3 again, and 4, 5, 6
  EXPECT_EQ(seen.delivered, 8u);  // 0, 1, 2, 3, 4, 5, 6 and 3 again
  EXPECT_EQ(seen.redelivered, 1u);
  EXPECT_EQ(seen.confirmed, 3u);
  std::vector<Call> want;
  for (Offset o = 0; o < kReady; ++o) {
    want.emplace_back(o, 1);
    if (o == 3) want.emplace_back(o, 2);
  }
  EXPECT_EQ(r.calls(), want);
  const SubscriptionStats end = r.broker().stats("t", "s");
  EXPECT_EQ(end.delivered, static_cast<std::uint64_t>(kReady + 1));
  EXPECT_EQ(end.confirmed, static_cast<std::uint64_t>(kReady));
  EXPECT_EQ(end.in_flight, 0u);
}

// R15: a second failure in a row ends the run for good: what it took after the failed
// message goes back (not held while the lane backs off), and the failed message waits
// retry_backoff before its third attempt.
TEST(LaneRuns, ASecondFailureInARowGivesBackTheRestAndBacksOff) {
  SubscriptionStats seen;
  Millis second{0};
  Millis third{0};
  ReadyRun r([&](Broker& b, const Delivery& d) {
    if (d.message->offset() != 5) return true;  // in the run {3, 4, 5, 6}
    if (d.attempt == 2) second = steady_ms();
    if (d.attempt == 3) {
      third = steady_ms();
      seen = b.stats("t", "s");
    }
    return d.attempt > 2;
  });
  r.broker().resume("t", "s");
  ASSERT_TRUE(r.broker().wait_delivered(kBound));
  EXPECT_EQ(seen.in_flight, 1u);  // a run after a back-off starts with one message
  EXPECT_EQ(seen.delivered, 8u);  // 0 to 4 and 5 three times
  EXPECT_EQ(seen.redelivered, 2u);
  EXPECT_EQ(seen.cursor, 6u);
  EXPECT_GE(third - second, kBackoff);
  std::vector<Call> want;
  for (Offset o = 0; o < kReady; ++o) {
    want.emplace_back(o, 1);
    if (o == 5) {
      want.emplace_back(o, 2);
      want.emplace_back(o, 3);
    }
  }
  EXPECT_EQ(r.calls(), want);
  EXPECT_EQ(r.broker().stats("t", "s").delivered, static_cast<std::uint64_t>(kReady + 2));
}

// R15 with R19/R20: on a durable subscription a first failure gives back the rest of its
// run (the next run, half as long, takes it again): kept through the re-offer, the commit
// of the confirmations before the failure would save attempts of messages never offered,
// and a restart (here: a copy of the directory taken during the re-offer, commits written
// without sync) would offer them as redeliveries.
TEST(LaneRuns, ADurableRunSavesNoAttemptOfAMessageItNeverOffered) {
  TempDir dir("broker-lane-runs");
  StorageOptions storage;
  storage.directory = dir.str() + "/store";
  storage.publish_sync = FsyncPolicy::none();
  storage.commit_sync = FsyncPolicy::none();  // no wait per commit: the runs grow
  const std::string copy = dir.str() + "/copy";
  SubscriptionStats seen;
  {
    ReadyRun r(
        [&](Broker& b, const Delivery& d) {
          if (d.message->offset() != 5) return true;  // in the run {3, 4, 5, 6}
          if (d.attempt == 1) return false;
          seen = b.stats("t", "s");
          std::filesystem::copy(storage.directory, copy, std::filesystem::copy_options::recursive);
          return true;
        },
        ReadyRun::lane().with_storage(storage));
    r.broker().resume("t", "s");
    ASSERT_TRUE(r.broker().wait_delivered(kBound));
  }
  EXPECT_EQ(seen.in_flight, 2u);  // the run {5, 6}
  EXPECT_EQ(seen.committed, 5u);
  storage.directory = copy;
  Broker again(BrokerOptions::synchronous().with_storage(storage));
  std::vector<Call> calls;
  again.subscribe("t", "s", [&calls](const Delivery& d) {
    calls.emplace_back(d.message->offset(), d.attempt);
    return true;
  });
  again.resume("t", "s");
  while (again.drain() > 0) {
  }
  std::vector<Call> want = {{5, 2}};  // its first attempt was saved with the commit
  for (Offset o = 6; o < kReady; ++o) want.emplace_back(o, 1);
  EXPECT_EQ(calls, want);
}

// R15 with R7 and max_deliveries: a run that fails a message on its last attempt
// dead-letters it with exactly the attempts the handler saw, and gives back the rest.
TEST(LaneRuns, ADeadLetterFromARunCarriesTheAttemptsTheHandlerSaw) {
  ReadyRun r([](Broker&, const Delivery& d) { return d.message->offset() % 3 != 1; });
  r.broker().resume("t", "s");
  ASSERT_TRUE(r.broker().wait_delivered(kBound));
  const std::vector<DeadLetter> dead = r.broker().dead_letters("t", "s");
  ASSERT_EQ(dead.size(), 3u);  // offsets 1, 4, 7
  for (const DeadLetter& d : dead) EXPECT_EQ(d.attempts, kDefaultMaxDeliveries);
  std::vector<int> calls_of(kReady, 0);
  for (const auto& [o, a] : r.calls()) {
    EXPECT_EQ(a, ++calls_of[o]) << "offset " << o << ": attempts counted without a call";
  }
  const SubscriptionStats s = r.broker().stats("t", "s");
  EXPECT_EQ(s.delivered, r.calls().size());
  EXPECT_EQ(s.delivered - s.redelivered, s.confirmed + s.dead_lettered);
}

// R15 with R23: a first failure re-offered at once still counts against max_deliveries: with
// one delivery allowed, a run's failed message is dead-lettered after its one offer, never
// offered again, and the rest of the run comes after it at their first attempt.
TEST(LaneRuns, AFailureOnTheLastAllowedAttemptIsDeadLetteredNotReofferedInItsRun) {
  std::mutex mu;
  std::vector<Call> calls;
  Broker b(ReadyRun::lane());
  b.create_topic("t");
  PushOptions options;
  options.max_deliveries = 1;
  b.subscribe(
      "t", "s",
      [&](const Delivery& d) {
        std::lock_guard<std::mutex> lock(mu);
        calls.emplace_back(d.message->offset(), d.attempt);
        return d.message->offset() != 4;  // in the run {3, 4, 5, 6}
      },
      options);
  b.pause("t", "s");
  for (int i = 0; i < kReady; ++i) b.publish("t", "m" + std::to_string(i));
  b.resume("t", "s");
  ASSERT_TRUE(b.wait_delivered(kBound));
  std::vector<Call> want;
  for (Offset o = 0; o < kReady; ++o) want.emplace_back(o, 1);
  std::lock_guard<std::mutex> lock(mu);
  EXPECT_EQ(calls, want);
  const std::vector<DeadLetter> dead = b.dead_letters("t", "s");
  ASSERT_EQ(dead.size(), 1u);
  EXPECT_EQ(dead[0].message->offset(), 4u);
  EXPECT_EQ(dead[0].attempts, 1);
  const SubscriptionStats st = b.stats("t", "s");
  EXPECT_EQ(st.delivered, static_cast<std::uint64_t>(kReady));
  EXPECT_EQ(st.redelivered, 0u);
}

// R15 with R3: a message whose offer failed while retention dropped it (here the handler's
// own publishes push it out of an 8-message topic) is not offered again: it, the rest of its
// run (dropped too, never offered) and 7 count as skipped, and the lane goes on with what is
// kept.
TEST(LaneRuns, AFailedMessageThatRetentionDroppedDuringItsOfferIsNotOfferedAgain) {
  std::mutex mu;
  std::vector<Call> calls;
  Broker b(ReadyRun::lane());
  TopicOptions topic;
  topic.retention_messages = 8;
  b.create_topic("t", topic);
  b.subscribe("t", "s", [&](const Delivery& d) {
    {
      std::lock_guard<std::mutex> lock(mu);
      calls.emplace_back(d.message->offset(), d.attempt);
    }
    if (d.message->offset() != 4 || d.attempt != 1) return true;  // in the run {3, 4, 5, 6}
    for (int i = 8; i < 16; ++i) b.publish("t", "m" + std::to_string(i));  // keeps 8 to 15
    return false;
  });
  b.pause("t", "s");
  for (int i = 0; i < 8; ++i) b.publish("t", "m" + std::to_string(i));
  b.resume("t", "s");
  ASSERT_TRUE(b.wait_delivered(kBound));
  std::vector<Call> want;
  for (Offset o = 0; o < 16; ++o) {
    if (o < 5 || o >= 8) want.emplace_back(o, 1);
  }
  std::lock_guard<std::mutex> lock(mu);
  EXPECT_EQ(calls, want);
  const SubscriptionStats st = b.stats("t", "s");
  EXPECT_EQ(st.skipped, 4u);  // 4 (failed), 5 and 6 (taken in its run, never offered), 7
  EXPECT_EQ(st.confirmed, 12u);
  EXPECT_EQ(st.in_flight, 0u);
}

// R15 with R26: a pause from inside a run's handler stops the run before its next message;
// the messages it had taken go back (not held, not counted), and resume offers them in
// order at their first attempt.
TEST(LaneRuns, APauseStopsARunBeforeItsNextMessage) {
  ReadyRun r([](Broker& b, const Delivery& d) {
    if (d.message->offset() == 2 && d.attempt == 1) b.pause("t", "s");
    return true;
  });
  r.broker().resume("t", "s");
  ASSERT_TRUE(WaitUntil([&] { return r.calls().size() >= 3; }));
  ASSERT_TRUE(r.broker().wait_idle(kBound));
  EXPECT_EQ(r.calls().size(), 3u);
  SubscriptionStats s = r.broker().stats("t", "s");
  EXPECT_EQ(s.delivered, 3u);
  EXPECT_EQ(s.confirmed, 3u);
  EXPECT_EQ(s.in_flight, 0u);
  EXPECT_EQ(s.cursor, 3u);
  EXPECT_EQ(s.backlog, static_cast<std::uint64_t>(kReady - 3));
  r.broker().resume("t", "s");
  ASSERT_TRUE(r.broker().wait_delivered(kBound));
  std::vector<Call> want;
  for (Offset o = 0; o < kReady; ++o) want.emplace_back(o, 1);
  EXPECT_EQ(r.calls(), want);
  s = r.broker().stats("t", "s");
  EXPECT_EQ(s.delivered, static_cast<std::uint64_t>(kReady));
  EXPECT_EQ(s.confirmed, static_cast<std::uint64_t>(kReady));
}

// R15 with R12: a seek from inside a run's handler ends the run; the next handler call is
// the seek's offset.
TEST(LaneRuns, ASeekDuringARunOffersFromTheNewPositionNext) {
  ReadyRun r([](Broker& b, const Delivery& d) {
    if (d.message->offset() == 2 && d.attempt == 1) b.seek("t", "s", 7);
    return true;
  });
  r.broker().resume("t", "s");
  ASSERT_TRUE(r.broker().wait_delivered(kBound));
  const std::vector<Call> want = {{0, 1}, {1, 1}, {2, 1}, {7, 1}, {8, 1}, {9, 1}};
  EXPECT_EQ(r.calls(), want);
}

// R15 with R25: a redrive from inside a run's handler ends the run: returned messages come
// first (R6), before the rest of what the run had taken.
TEST(LaneRuns, ARedriveDuringARunIsOfferedBeforeTheRestOfTheRun) {
  std::atomic<bool> redriven{false};
  ReadyRun r([&redriven](Broker& b, const Delivery& d) {
    if (d.message->offset() == 0) return redriven.load();  // dead until redriven
    if (d.message->offset() == 5 && !redriven.exchange(true)) b.redrive("t", "s");
    return true;
  });
  r.broker().resume("t", "s");
  ASSERT_TRUE(r.broker().wait_delivered(kBound));
  // 0 fails max_deliveries times and dies, 1..5 follow, then the redriven 0 before 6.
  std::vector<Offset> order;
  for (const auto& [o, a] : r.calls()) order.push_back(o);
  std::vector<Offset> want(kDefaultMaxDeliveries, 0);
  for (Offset o = 1; o <= 5; ++o) want.push_back(o);
  want.push_back(0);
  for (Offset o = 6; o < kReady; ++o) want.push_back(o);
  EXPECT_EQ(order, want);
  EXPECT_TRUE(r.broker().dead_letters("t", "s").empty());
}

// R6, R15 and R24: returned messages whose waits end while runs have grown each start a run
// of their own, lowest first, before the runs go on from the cursor (a returned message
// never joins a run, and no run from the cursor passes one that is ready).
TEST(LaneRuns, ReturnedMessagesReadyTogetherAreOfferedBeforeTheCursorGoesOn) {
  constexpr int kMessages = 60;
  auto clock = std::make_shared<ManualClock>();
  Broker b{ReadyRun::lane().with_clock(clock)};
  b.create_topic("t");
  std::mutex mu;
  std::vector<Call> calls;
  PushOptions options;
  options.backoff = {Millis{10}};  // of the manual clock: waits until the handler moves it
  b.subscribe(
      "t", "s",
      [&](const Delivery& d) {
        {
          std::lock_guard<std::mutex> lock(mu);
          calls.emplace_back(d.message->offset(), d.attempt);
        }
        if (d.message->offset() <= 1) return d.attempt > 1;         // returned, waiting
        if (d.message->offset() == 20) clock->advance(Millis{10});  // both ready, mid-run
        return true;
      },
      options);
  b.pause("t", "s");
  for (int i = 0; i < kMessages; ++i) b.publish("t", "m");
  b.resume("t", "s");
  ASSERT_TRUE(b.wait_delivered(kBound));
  std::lock_guard<std::mutex> lock(mu);
  const auto again0 = std::find(calls.begin(), calls.end(), Call{0, 2});
  ASSERT_NE(again0, calls.end());
  ASSERT_NE(std::next(again0), calls.end());
  EXPECT_EQ(*std::next(again0), (Call{1, 2})) << "another offer came between the two returned";
  // Every other offer is a first one, in offset order.
  std::vector<Offset> firsts;
  for (const auto& [o, a] : calls) {
    if (a == 1) firsts.push_back(o);
  }
  ASSERT_EQ(firsts.size(), static_cast<std::size_t>(kMessages));
  EXPECT_TRUE(std::is_sorted(firsts.begin(), firsts.end()));
}

}  // namespace
}  // namespace broker
