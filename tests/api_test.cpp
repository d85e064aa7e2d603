// The broker's public API, one rule per test: receipts name a message, poll and poll_wait
// report errors alike, a Delivery may be kept, BrokerOptions' named constructors check
// their values, OptionsMismatch names the option, a group's name reads and moves its
// position, dead letters say where and when they died, `committed` against `cursor`, and
// automatic expiry. Every wait is bounded and generous: none asserts on speed.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "broker/broker.h"
#include "test_support.h"

namespace broker {
namespace {

using testing::Pull;
using testing::Push;
using testing::SyncBroker;

/// The code of the broker::Error that fn throws, or nullopt if it throws none.
std::optional<ErrorCode> CodeOf(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.code();
  }
  return std::nullopt;
}

/// The option an OptionsMismatch thrown by fn names; "<none>" if fn throws no mismatch.
std::string MismatchedOption(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const OptionsMismatch& e) {
    EXPECT_EQ(e.code(), ErrorCode::kOptionsMismatch);
    return e.option();
  }
  return "<none>";
}

bool Confirm(const Delivery&) { return true; }

// ---- receipts ----

class Receipts : public ::testing::Test {
 protected:
  Broker b{SyncBroker()};
  void SetUp() override {
    b.create_topic("orders");
    b.subscribe_pull("orders", "p", Pull(Millis{100}));
    for (int i = 0; i < 3; ++i) b.publish("orders", "m" + std::to_string(i));
  }
};

TEST_F(Receipts, AReceiptFromPollNamesTopicSubscriptionMemberAndOffset) {
  const auto got = b.poll("orders", "p", "w1", 2, Time{});
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].receipt, (Receipt{"orders", "p", "w1", 0}));
  EXPECT_EQ(got[1].receipt, (Receipt{"orders", "p", "w1", 1}));
}

TEST_F(Receipts, AckWithTheReceiptFromPollConfirmsThatMessageOnly) {
  const auto got = b.poll("orders", "p", "w1", 2, Time{});
  ASSERT_EQ(got.size(), 2u);

  EXPECT_TRUE(b.ack(got[1].receipt, Time{}));

  const auto s = b.stats("orders", "p");
  EXPECT_EQ(s.confirmed, 1u);
  EXPECT_EQ(s.in_flight, 1u) << "offset 0 is still held";
  EXPECT_FALSE(b.ack(got[1].receipt, Time{})) << "a receipt confirms once";
  EXPECT_TRUE(b.nack(got[0].receipt, Time{}));
  const auto again = b.poll("orders", "p", "w2", 1, Time{});
  ASSERT_EQ(again.size(), 1u);
  EXPECT_EQ(again[0].message->offset(), 0u);
  EXPECT_EQ(again[0].attempt, 2);
  EXPECT_EQ(again[0].receipt, (Receipt{"orders", "p", "w2", 0})) << "the new holder's receipt";
  EXPECT_FALSE(b.ack(got[0].receipt, Time{})) << "the old holder's receipt no longer names it";
  EXPECT_TRUE(b.extend(again[0].receipt, Time{}, Millis{50}));
  EXPECT_TRUE(b.ack(again[0].receipt, Time{}));
}

TEST_F(Receipts, AReceiptWithAnotherMemberIsRefusedAndChangesNothing) {
  const auto got = b.poll("orders", "p", "w1", 1, Time{});
  ASSERT_EQ(got.size(), 1u);
  Receipt other = got[0].receipt;
  other.member = "w2";
  const auto before = testing::Snap(b);

  EXPECT_FALSE(b.ack(other, Time{}));
  EXPECT_FALSE(b.nack(other, Time{}));
  EXPECT_FALSE(b.extend(other, Time{}, Millis{10}));

  EXPECT_EQ(testing::Snap(b), before);
  EXPECT_TRUE(b.ack(got[0].receipt, Time{})) << "the holder's own receipt still works";
}

TEST_F(Receipts, AReceiptForAnUnknownTopicIsUnknownTopic) {
  const auto got = b.poll("orders", "p", "w1", 1, Time{});
  ASSERT_EQ(got.size(), 1u);
  Receipt wrong = got[0].receipt;
  wrong.topic = "nope";

  EXPECT_ERROR_CHANGES_NOTHING(b, UnknownTopic, ErrorCode::kUnknownTopic,
                               (void)b.ack(wrong, Time{}));
  EXPECT_ERROR_CHANGES_NOTHING(b, UnknownTopic, ErrorCode::kUnknownTopic,
                               (void)b.nack(wrong, Time{}));
  EXPECT_ERROR_CHANGES_NOTHING(b, UnknownTopic, ErrorCode::kUnknownTopic,
                               (void)b.extend(wrong, Time{}, Millis{10}));
  EXPECT_EQ(b.stats("orders", "p").in_flight, 1u);
}

TEST_F(Receipts, AReceiptForAnUnknownSubscriptionIsUnknownSubscription) {
  const auto got = b.poll("orders", "p", "w1", 1, Time{});
  ASSERT_EQ(got.size(), 1u);
  Receipt wrong = got[0].receipt;
  wrong.subscription = "nope";
  EXPECT_ERROR_CHANGES_NOTHING(b, UnknownSubscription, ErrorCode::kUnknownSubscription,
                               (void)b.ack(wrong, Time{}));
}

// ---- poll and poll_wait ----

TEST(PollErrors, PollAndPollWaitReportTheSameErrorsInTheSameOrder) {
  Broker b{SyncBroker()};
  b.create_topic("orders");
  b.subscribe_pull("orders", "p", Pull());
  b.subscribe("orders", "push", Confirm);
  struct Case {
    std::string topic, sub, member;
    std::size_t max;
    ErrorCode expected;
  };
  const std::vector<Case> cases = {
      {"nope", "p", "", 1, ErrorCode::kInvalidArgument},   // arguments before the topic
      {"nope", "p", "w", 0, ErrorCode::kInvalidArgument},  // max 0 before the topic
      {"nope", "nope", "w", 1, ErrorCode::kUnknownTopic},  // topic before subscription
      {"orders", "nope", "w", 1, ErrorCode::kUnknownSubscription},
      {"orders", "push", "w", 1, ErrorCode::kWrongKind},
      {"orders", "push", "", 1, ErrorCode::kInvalidArgument},  // arguments before kind
  };
  for (const Case& c : cases) {
    SCOPED_TRACE("poll(" + c.topic + ", " + c.sub + ", '" + c.member + "', " +
                 std::to_string(c.max) + ")");
    EXPECT_EQ(CodeOf([&] { (void)b.poll(c.topic, c.sub, c.member, c.max, Time{}); }), c.expected);
    EXPECT_EQ(CodeOf([&] { (void)b.poll_wait(c.topic, c.sub, c.member, c.max, Millis{0}); }),
              c.expected);
  }
}

TEST(PollErrors, PollWaitOnAnUnknownTopicWithAnEmptyMemberIsInvalidArgumentAndChangesNothing) {
  Broker b{SyncBroker()};
  b.create_topic("orders");
  b.subscribe_pull("orders", "p", Pull());
  EXPECT_ERROR_CHANGES_NOTHING(b, InvalidArgument, ErrorCode::kInvalidArgument,
                               (void)b.poll_wait("nope", "p", "", 1, Millis{0}));
  EXPECT_ERROR_CHANGES_NOTHING(b, InvalidArgument, ErrorCode::kInvalidArgument,
                               (void)b.poll("nope", "p", "", 1, b.clock().now()));
}

TEST(PollWait, HandsOutWhatIsReadyWithAReceiptAndTheClocksDeadline) {
  auto clock = std::make_shared<ManualClock>(at(Millis{500}));
  Broker b{SyncBroker(clock)};
  b.create_topic("orders");
  b.subscribe_pull("orders", "p", Pull(Millis{100}));
  b.publish("orders", "m0");
  const auto got = b.poll_wait("orders", "p", "w", 5, Millis{2000});
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].deadline, at(Millis{600})) << "held until the clock's now + ack_timeout";
  EXPECT_EQ(got[0].receipt, (Receipt{"orders", "p", "w", 0}));
  EXPECT_TRUE(b.ack(got[0].receipt, clock->now()));
}

// ---- deliveries ----

TEST(Deliveries, ADeliveryKeptPastTheHandlerCallStaysValid) {
  Broker b{SyncBroker()};
  TopicOptions one;
  one.retention_messages = 1;
  b.create_topic("orders", one);
  std::vector<Delivery> kept;
  b.subscribe("orders", "s", [&](const Delivery& d) {
    kept.push_back(d);
    return d.attempt > 1;  // the first offer fails: the message is offered again
  });
  b.publish("orders", "first");
  b.drain();
  b.drain();

  ASSERT_TRUE(b.unsubscribe("orders", "s"));
  for (int i = 0; i < 3; ++i) b.publish("orders", "newer");  // retention drops offset 0
  b.delete_topic("orders");                                  // and the topic itself

  ASSERT_EQ(kept.size(), 2u);
  for (int i = 0; i < 2; ++i) {
    SCOPED_TRACE("offer " + std::to_string(i + 1));
    ASSERT_NE(kept[i].topic, nullptr);
    ASSERT_NE(kept[i].message, nullptr);
    EXPECT_EQ(*kept[i].topic, "orders");
    EXPECT_EQ(kept[i].message->payload(), "first");
    EXPECT_EQ(kept[i].message->offset(), 0u);
    EXPECT_EQ(kept[i].attempt, i + 1);
  }
  EXPECT_EQ(kept[0].message, kept[1].message) << "both offers share the one stored message";
}

TEST(Deliveries, ADeliveryKeptByALaneHandlerStaysValidAfterTheBrokerIsGone) {
  std::mutex mu;
  std::vector<Delivery> kept;
  {
    Broker b{testing::LaneBroker()};
    b.create_topic("orders");
    b.subscribe("orders", "s", [&](const Delivery& d) {
      std::lock_guard<std::mutex> lock(mu);
      kept.push_back(d);
      return true;
    });
    b.publish("orders", "a", {{"type", "created"}}, "key-1");
    b.publish("orders", "b");
    ASSERT_TRUE(testing::WaitIdleUntil(b, [&] { return b.stats("orders", "s").confirmed == 2; }));
  }
  std::lock_guard<std::mutex> lock(mu);
  ASSERT_EQ(kept.size(), 2u);
  EXPECT_EQ(*kept[0].topic, "orders");
  EXPECT_EQ(kept[0].message->payload(), "a");
  EXPECT_EQ(kept[0].message->headers(), (Headers{{"type", "created"}}));
  EXPECT_EQ(kept[0].message->key(), "key-1");
  EXPECT_EQ(kept[1].message->offset(), 1u);
  EXPECT_EQ(kept[1].attempt, 1);
}

// ---- BrokerOptions ----

TEST(BrokerOptionsRules, NamedConstructorsRejectBadValuesWithInvalidArgument) {
  auto invalid = [](const std::function<void()>& fn) {
    return CodeOf(fn) == std::optional<ErrorCode>(ErrorCode::kInvalidArgument);
  };
  EXPECT_THROW((void)BrokerOptions::pool(0), InvalidArgument);
  EXPECT_TRUE(invalid([] { (void)BrokerOptions::pool(0); })) << "a pool needs a thread";
  EXPECT_TRUE(invalid([] { (void)BrokerOptions::pool(2, Millis{-1}); })) << "negative timeout";
  EXPECT_TRUE(invalid([] { (void)BrokerOptions::lane().with_retry_backoff(Millis{-1}); }))
      << "negative backoff";
  EXPECT_TRUE(invalid([] { (void)BrokerOptions::pool(2).with_retry_backoff(Millis{-5}); }))
      << "negative backoff";
  EXPECT_TRUE(invalid([] { (void)BrokerOptions::synchronous().with_retry_backoff(Millis{5}); }))
      << "the synchronous dispatcher never backs off";
  EXPECT_TRUE(invalid([] { (void)BrokerOptions::synchronous().with_clock(nullptr); }))
      << "null clock";
  EXPECT_TRUE(invalid([] { (void)BrokerOptions::pool(2).with_clock(nullptr); })) << "null clock";
  EXPECT_TRUE(invalid([] { (void)BrokerOptions::synchronous().with_auto_expire(Millis{0}); }))
      << "auto-expire period 0";
  EXPECT_TRUE(invalid([] { (void)BrokerOptions::lane().with_auto_expire(Millis{-5}); }))
      << "negative auto-expire period";
}

TEST(BrokerOptionsRules, NamedConstructorsKeepWhatTheyWereGiven) {
  auto clock = std::make_shared<ManualClock>();
  const BrokerOptions o = BrokerOptions::pool(4, Millis{50})
                              .with_clock(clock)
                              .with_retry_backoff(Millis{6})
                              .with_auto_expire(Millis{7});
  EXPECT_EQ(o.dispatcher(), BrokerOptions::Dispatcher::kPool);
  EXPECT_EQ(o.pool_threads(), 4u);
  EXPECT_EQ(o.handler_timeout(), Millis{50});
  EXPECT_EQ(o.retry_backoff(), Millis{6});
  EXPECT_EQ(o.clock(), clock);
  EXPECT_TRUE(o.auto_expire());
  EXPECT_EQ(o.auto_expire_period(), Millis{7});

  EXPECT_EQ(BrokerOptions::lane().dispatcher(), BrokerOptions::Dispatcher::kLane);
  EXPECT_EQ(BrokerOptions::synchronous().dispatcher(), BrokerOptions::Dispatcher::kSynchronous);
  EXPECT_EQ(BrokerOptions::lane().retry_backoff(), Millis{5}) << "the default";
  EXPECT_FALSE(BrokerOptions::synchronous().auto_expire()) << "off unless asked for";
  EXPECT_EQ(BrokerOptions::lane().with_auto_expire().auto_expire_period(), Millis{50});
  EXPECT_NO_THROW((void)BrokerOptions::pool(1, Millis{0})) << "0 = none";
  EXPECT_EQ(BrokerOptions::pool(1).handler_timeout(), Millis{0}) << "none unless given";
  EXPECT_NO_THROW((void)BrokerOptions::lane().with_retry_backoff(Millis{0}));

  const BrokerOptions base = BrokerOptions::pool(2);
  (void)base.with_retry_backoff(Millis{99});
  EXPECT_EQ(base.retry_backoff(), Millis{5}) << "with_* returns a refined copy";
}

// A handler timeout is the pool's own argument: nothing can give one to a lane or to the
// synchronous dispatcher, which cannot abandon a running handler (issue 58: refused at
// compile time, not with an exception at run time).
template <class Options>
concept TakesATimeoutAfterTheFact = requires(Options o) {
  o.with_handler_timeout(Millis{1});
};
template <class Options>
concept ALaneTakesATimeout = requires {
  Options::lane(Millis{500});
};
template <class Options>
concept APoolTakesATimeout = requires {
  Options::pool(std::size_t{2}, Millis{500});
};
static_assert(!TakesATimeoutAfterTheFact<BrokerOptions>);
static_assert(!ALaneTakesATimeout<BrokerOptions>);
static_assert(APoolTakesATimeout<BrokerOptions>);

TEST(BrokerOptionsRules, OnlyAPoolTakesAHandlerTimeoutAndItIsItsOwnArgument) {
  EXPECT_EQ(BrokerOptions::pool(3, Millis{250}).handler_timeout(), Millis{250});
  EXPECT_EQ(BrokerOptions::lane().handler_timeout(), Millis{0});
  EXPECT_EQ(BrokerOptions::synchronous().handler_timeout(), Millis{0});
}

TEST(BrokerOptionsRules, ABrokerBuiltFromPoolOptionsIsThreaded) {
  Broker b{BrokerOptions::pool(4, Millis{5000}).with_retry_backoff(Millis{1})};
  b.create_topic("orders");
  EXPECT_THROW(b.drain(), NotSynchronous);
  std::atomic<int> calls{0};
  b.subscribe("orders", "s", [&](const Delivery&) {
    calls.fetch_add(1);
    return true;
  });
  b.publish("orders", "m");
  EXPECT_TRUE(testing::WaitIdleUntil(b, [&] { return calls.load() == 1; }));
}

// ---- OptionsMismatch::option ----

TEST(OptionsMismatchRules, NamesTheDifferingOptionWhenJoiningAGroup) {
  Broker b{SyncBroker()};
  b.create_topic("orders");
  PushOptions group = Push(3, StartPosition::beginning());
  group.group = "g";
  group.header_filter = {{"type", "created"}};
  b.subscribe("orders", "m1", Confirm, group);

  PushOptions other_filter = group;
  other_filter.header_filter = {{"type", "paid"}};
  EXPECT_EQ(MismatchedOption([&] { b.subscribe("orders", "m2", Confirm, other_filter); }),
            "header_filter");
  PushOptions other_max = group;
  other_max.max_deliveries = 4;
  EXPECT_EQ(MismatchedOption([&] { b.subscribe("orders", "m2", Confirm, other_max); }),
            "max_deliveries");
  PushOptions other_start = group;
  other_start.start = StartPosition::end();
  EXPECT_EQ(MismatchedOption([&] { b.subscribe("orders", "m2", Confirm, other_start); }), "start");
  PushOptions filter_and_max = other_filter;
  filter_and_max.max_deliveries = 4;
  EXPECT_EQ(MismatchedOption([&] { b.subscribe("orders", "m2", Confirm, filter_and_max); }),
            "header_filter")
      << "the first option that differs";
  EXPECT_EQ(b.subscriptions("orders"), std::vector<std::string>{"m1"}) << "nobody joined";
}

TEST(OptionsMismatchRules, NamesTheDifferingOptionForAPullSubscription) {
  Broker b{SyncBroker()};
  b.create_topic("orders");
  const PullOptions base = Pull(Millis{1000}, 3, {{"type", "created"}}, StartPosition::beginning());
  b.subscribe_pull("orders", "p", base);

  PullOptions other = base;
  other.ack_timeout = Millis{999};
  EXPECT_EQ(MismatchedOption([&] { b.subscribe_pull("orders", "p", other); }), "ack_timeout");
  other = base;
  other.max_deliveries = 4;
  EXPECT_EQ(MismatchedOption([&] { b.subscribe_pull("orders", "p", other); }), "max_deliveries");
  other = base;
  other.header_filter = {};
  EXPECT_EQ(MismatchedOption([&] { b.subscribe_pull("orders", "p", other); }), "header_filter");
  other = base;
  other.start = StartPosition::at(0);
  EXPECT_EQ(MismatchedOption([&] { b.subscribe_pull("orders", "p", other); }), "start");
  other = base;
  other.header_filter = {};
  other.ack_timeout = Millis{5};
  EXPECT_EQ(MismatchedOption([&] { b.subscribe_pull("orders", "p", other); }), "header_filter")
      << "the first option that differs";
  EXPECT_NO_THROW(b.subscribe_pull("orders", "p", base)) << "equal options: a no-op";
}

// ---- a group's name ----

class GroupByName : public ::testing::Test {
 protected:
  Broker b{SyncBroker()};
  std::vector<std::string> calls;
  void SetUp() override {
    b.create_topic("orders");
    PushOptions group = Push(1);
    group.group = "g";
    for (const std::string member : {"m1", "m2"}) {
      b.subscribe(
          "orders", member,
          [this, member](const Delivery& d) {
            calls.push_back(member + "@" + std::to_string(d.message->offset()));
            return d.message->payload() != "poison";
          },
          group);
    }
    b.publish("orders", "ok");
    b.publish("orders", "poison");
    b.publish("orders", "ok");
    b.drain();
    b.drain();
  }
};

TEST_F(GroupByName, StatsByTheGroupsNameAreTheGroupsStats) {
  const auto s = b.stats("orders", "g");
  EXPECT_EQ(s, b.stats("orders", "m1"));
  EXPECT_EQ(s.confirmed, 2u);
  EXPECT_EQ(s.dead_lettered, 1u);
  EXPECT_EQ(s.cursor, 3u);
  EXPECT_EQ(s.committed, 3u);
}

TEST_F(GroupByName, DeadLettersByTheGroupsNameAreTheGroups) {
  const auto dead = b.dead_letters("orders", "g");
  ASSERT_EQ(dead.size(), 1u);
  EXPECT_EQ(dead[0].message->offset(), 1u);
  EXPECT_EQ(dead[0].subscription, "g");
  EXPECT_EQ(b.dead_letters("orders", "m2").size(), 1u);
}

TEST_F(GroupByName, SeekByTheGroupsNameMovesTheGroup) {
  calls.clear();
  b.seek("orders", "g", 2);
  EXPECT_EQ(b.stats("orders", "m1").cursor, 2u);
  EXPECT_EQ(b.stats("orders", "m2").backlog, 1u);
  EXPECT_EQ(b.drain(), 1u);
  EXPECT_EQ(calls.size(), 1u) << "offset 2 replayed once, to one member";
}

TEST(GroupNames, ASubscriptionsNameWinsOverAGroupOfTheSameName) {
  Broker b{SyncBroker()};
  b.create_topic("orders");
  b.publish("orders", "m");
  b.subscribe("orders", "g", Confirm);  // starts at the end: never offered offset 0
  PushOptions group = Push(kDefaultMaxDeliveries, StartPosition::beginning());
  group.group = "g";
  b.subscribe("orders", "m1", Confirm, group);
  b.drain();
  EXPECT_EQ(b.stats("orders", "g").delivered, 0u) << "the subscription named g";
  EXPECT_EQ(b.stats("orders", "m1").delivered, 1u) << "the group g";
}

// ---- dead letters ----

TEST(DeadLetterFields, PushDeadLettersCarryTopicSubscriptionAndTheClocksTime) {
  auto clock = std::make_shared<ManualClock>(at(Millis{1000}));
  Broker b{SyncBroker(clock)};
  b.create_topic("orders");
  b.subscribe(
      "orders", "billing", [](const Delivery&) { return false; }, Push(2));
  PushOptions group = Push(1);
  group.group = "g";
  b.subscribe(
      "orders", "m1", [](const Delivery&) { return false; }, group);
  b.publish("orders", "m");
  b.drain();  // billing: attempt 1 fails; the group's only offer fails: dead at 1000
  clock->advance(Millis{250});
  b.drain();  // billing: attempt 2 fails: dead at 1250

  const auto billing = b.dead_letters("orders", "billing");
  ASSERT_EQ(billing.size(), 1u);
  EXPECT_EQ(billing[0].topic, "orders");
  EXPECT_EQ(billing[0].subscription, "billing");
  EXPECT_EQ(billing[0].message->offset(), 0u);
  EXPECT_EQ(billing[0].attempts, 2);
  EXPECT_EQ(billing[0].reason, "rejected");
  EXPECT_EQ(billing[0].died_at, at(Millis{1250}));
  const auto grouped = b.dead_letters("orders", "m1");
  ASSERT_EQ(grouped.size(), 1u);
  EXPECT_EQ(grouped[0].topic, "orders");
  EXPECT_EQ(grouped[0].subscription, "g") << "a push group's dead letter names the group";
  EXPECT_EQ(grouped[0].died_at, at(Millis{1000}));
}

TEST(DeadLetterFields, PullDeadLettersDieAtTheNowOfTheNackOrExpire) {
  auto clock = std::make_shared<ManualClock>(at(Millis{9999}));  // not what the calls pass
  Broker b{SyncBroker(clock)};
  b.create_topic("orders");
  b.subscribe_pull("orders", "p", Pull(Millis{100}, 1));
  b.publish("orders", "m0");
  b.publish("orders", "m1");
  const auto got = b.poll("orders", "p", "w", 2, at(Millis{200}));
  ASSERT_EQ(got.size(), 2u);
  ASSERT_TRUE(b.nack(got[0].receipt, at(Millis{250})));
  EXPECT_EQ(b.expire(at(Millis{300})), (std::vector<Expired>{{"orders", "p", 1, true}}));

  const auto dead = b.dead_letters("orders", "p");
  ASSERT_EQ(dead.size(), 2u);
  EXPECT_EQ(dead[0].topic, "orders");
  EXPECT_EQ(dead[0].subscription, "p");
  EXPECT_EQ(dead[0].reason, "nacked");
  EXPECT_EQ(dead[0].died_at, at(Millis{250}));
  EXPECT_EQ(dead[1].topic, "orders");
  EXPECT_EQ(dead[1].subscription, "p");
  EXPECT_EQ(dead[1].reason, "ack deadline expired");
  EXPECT_EQ(dead[1].died_at, at(Millis{300}));
}

// ---- committed and cursor ----

TEST(Committed, AfterAFailedPushCommittedStaysAtTheFailedMessageWhileTheCursorMovesOn) {
  Broker b{SyncBroker()};
  b.create_topic("orders");
  b.subscribe("orders", "s", [](const Delivery& d) {
    return d.message->offset() != 1 || d.attempt > 1;  // offset 1 fails once
  });
  for (int i = 0; i < 3; ++i) b.publish("orders", "m");
  EXPECT_EQ(b.stats("orders", "s").committed, 0u);

  EXPECT_EQ(b.drain(), 1u);  // 0 confirmed, 1 failed: stops
  auto s = b.stats("orders", "s");
  EXPECT_EQ(s.committed, 1u) << "offset 1 is not done";
  EXPECT_EQ(s.cursor, 2u) << "the cursor already moved past it";
  EXPECT_EQ(s.backlog, 2u);

  EXPECT_EQ(b.drain(), 2u);
  s = b.stats("orders", "s");
  EXPECT_EQ(s.committed, 3u);
  EXPECT_EQ(s.cursor, 3u);
}

TEST(Committed, WithPullMessagesInFlightCommittedIsTheLowestNotYetDone) {
  Broker b{SyncBroker()};
  b.create_topic("orders");
  b.subscribe_pull("orders", "p", Pull(Millis{1000}));
  for (int i = 0; i < 4; ++i) b.publish("orders", "m");
  const auto got = b.poll("orders", "p", "w", 3, Time{});  // 0, 1, 2 held
  ASSERT_EQ(got.size(), 3u);
  auto s = b.stats("orders", "p");
  EXPECT_EQ(s.committed, 0u);
  EXPECT_EQ(s.cursor, 3u);

  ASSERT_TRUE(b.ack(got[1].receipt, Time{}));
  EXPECT_EQ(b.stats("orders", "p").committed, 0u) << "offset 0 is still held";
  ASSERT_TRUE(b.ack(got[0].receipt, Time{}));
  EXPECT_EQ(b.stats("orders", "p").committed, 2u) << "0 and 1 are done, 2 is held";
  ASSERT_TRUE(b.nack(got[2].receipt, Time{}));
  s = b.stats("orders", "p");
  EXPECT_EQ(s.committed, 2u) << "a returned message is not done";
  EXPECT_EQ(s.cursor, 3u);

  const auto again = b.poll("orders", "p", "w", 2, Time{});  // 2 (attempt 2), 3
  ASSERT_EQ(again.size(), 2u);
  ASSERT_TRUE(b.ack(again[1].receipt, Time{}));
  EXPECT_EQ(b.stats("orders", "p").committed, 2u);
  ASSERT_TRUE(b.ack(again[0].receipt, Time{}));
  s = b.stats("orders", "p");
  EXPECT_EQ(s.committed, 4u);
  EXPECT_EQ(s.cursor, 4u);
}

TEST(Committed, DeadLetteredAndFilteredMessagesCountAsDone) {
  Broker b{SyncBroker()};
  b.create_topic("orders");
  b.subscribe_pull("orders", "p", Pull(Millis{1000}, 1, {{"type", "a"}}));
  b.publish("orders", "m0", {{"type", "a"}});
  b.publish("orders", "m1", {{"type", "b"}});  // filtered out
  b.publish("orders", "m2", {{"type", "a"}});
  const auto got = b.poll("orders", "p", "w", 5, Time{});  // 0, 2
  ASSERT_EQ(got.size(), 2u);
  ASSERT_TRUE(b.nack(got[0].receipt, Time{}));  // max_deliveries 1: dead
  auto s = b.stats("orders", "p");
  EXPECT_EQ(s.committed, 2u) << "0 dead-lettered, 1 filtered, 2 held";
  ASSERT_TRUE(b.ack(got[1].receipt, Time{}));
  s = b.stats("orders", "p");
  EXPECT_EQ(s.committed, 3u);
  EXPECT_LE(s.committed, s.cursor);
}

// ---- automatic expiry ----

/// Waits until pred() holds or `limit` (real time) passed, sleeping 5 ms between checks.
bool Within(std::chrono::milliseconds limit, const std::function<bool()>& pred) {
  const auto give_up = std::chrono::steady_clock::now() + limit;
  while (!pred()) {
    if (std::chrono::steady_clock::now() > give_up) return pred();
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

/// Polls until a message comes back or `limit` (real time) passed, sleeping 5 ms between.
std::vector<Received> PollUntilSomething(Broker& b, const ManualClock& clock,
                                         std::chrono::milliseconds limit) {
  const auto give_up = std::chrono::steady_clock::now() + limit;
  for (;;) {
    auto got = b.poll("orders", "p", "w2", 1, clock.now());
    if (!got.empty() || std::chrono::steady_clock::now() > give_up) return got;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

TEST(AutoExpire, AnExpiredPullMessageComesBackWithoutCallingExpire) {
  auto clock = std::make_shared<ManualClock>(at(Millis{1000}));
  Broker b{BrokerOptions::synchronous().with_clock(clock).with_auto_expire(Millis{5})};
  b.create_topic("orders");
  b.subscribe_pull("orders", "p", Pull(Millis{100}));
  b.publish("orders", "m");
  const auto first = b.poll("orders", "p", "w1", 1, clock->now());
  ASSERT_EQ(first.size(), 1u);
  ASSERT_EQ(first[0].deadline, at(Millis{1100}));

  clock->advance(Millis{150});  // past the deadline; nobody calls expire
  const auto back = PollUntilSomething(b, *clock, std::chrono::milliseconds(2000));

  ASSERT_EQ(back.size(), 1u) << "the timer must hand the message back within 2 s";
  EXPECT_EQ(back[0].message->offset(), 0u);
  EXPECT_EQ(back[0].attempt, 2);
  EXPECT_EQ(back[0].deadline, at(Millis{1250}));
  EXPECT_FALSE(b.ack(first[0].receipt, clock->now())) << "the crashed worker's ack is late";
  EXPECT_TRUE(b.ack(back[0].receipt, clock->now()));
}

TEST(AutoExpire, AnExpiredPullMessageThatUsedItsDeliveriesIsDeadLetteredByTheTimer) {
  auto clock = std::make_shared<ManualClock>();
  Broker b{BrokerOptions::synchronous().with_clock(clock).with_auto_expire(Millis{5})};
  b.create_topic("orders");
  b.subscribe_pull("orders", "p", Pull(Millis{100}, 1));
  b.publish("orders", "m");
  ASSERT_EQ(b.poll("orders", "p", "w1", 1, clock->now()).size(), 1u);

  clock->advance(Millis{100});  // deadline <= now: expired
  EXPECT_TRUE(Within(std::chrono::milliseconds(2000), [&] {
    return b.stats("orders", "p").dead_lettered == 1;
  })) << "the timer must dead-letter it within 2 s";
  const auto dead = b.dead_letters("orders", "p");
  ASSERT_EQ(dead.size(), 1u);
  EXPECT_EQ(dead[0].reason, "ack deadline expired");
}

TEST(AutoExpire, WithoutAutoExpireAnExpiredMessageStaysHeldUntilExpireIsCalled) {
  auto clock = std::make_shared<ManualClock>(at(Millis{1000}));
  Broker b{BrokerOptions::synchronous().with_clock(clock)};
  b.create_topic("orders");
  b.subscribe_pull("orders", "p", Pull(Millis{100}));
  b.publish("orders", "m");
  ASSERT_EQ(b.poll("orders", "p", "w1", 1, clock->now()).size(), 1u);

  clock->advance(Millis{150});
  EXPECT_TRUE(PollUntilSomething(b, *clock, std::chrono::milliseconds(100)).empty())
      << "nothing expires by itself";
  EXPECT_EQ(b.stats("orders", "p").in_flight, 1u);

  EXPECT_EQ(b.expire(clock->now()), (std::vector<Expired>{{"orders", "p", 0, false}}));
  const auto back = b.poll("orders", "p", "w2", 1, clock->now());
  ASSERT_EQ(back.size(), 1u);
  EXPECT_EQ(back[0].attempt, 2);
}

TEST(AutoExpire, OnTheSteadyClockAMessagePastItsDeadlineComesBack) {
  Broker b{BrokerOptions::synchronous().with_auto_expire(Millis{5})};
  b.create_topic("orders");
  b.subscribe_pull("orders", "p", Pull(Millis{20}));
  b.publish("orders", "m");
  ASSERT_EQ(b.poll("orders", "p", "w1", 1, b.clock().now()).size(), 1u);

  std::vector<Received> back;
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  while (back.empty() && std::chrono::steady_clock::now() < give_up) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    back = b.poll("orders", "p", "w2", 1, b.clock().now());
  }
  ASSERT_EQ(back.size(), 1u) << "20 ms ack timeout, 2 s of waiting";
  EXPECT_EQ(back[0].attempt, 2);
}

}  // namespace
}  // namespace broker
