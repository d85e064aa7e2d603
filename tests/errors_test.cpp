// Every typed error path of SPEC.md: the exact exception type and code, and nothing
// changed (R14: topics, offsets, subscriptions, stats and dead letters compared before and
// after). Then re-entrancy (R8, R9): what a handler may call on its own broker.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "broker/broker.h"
#include "test_support.h"

namespace broker {
namespace {

using testing::LaneBroker;
using testing::PoolBroker;
using testing::Pull;
using testing::Push;
using testing::SyncBroker;

bool Confirm(const Delivery&) { return true; }

/// A broker with some state worth protecting: two topics, push, group and pull
/// subscriptions, a dead letter, a held message and a retention gap.
class Errors : public ::testing::Test {
 protected:
  Broker b{SyncBroker()};
  void SetUp() override {
    TopicOptions small;
    small.retention_messages = 3;
    b.create_topic("orders", small);
    b.create_topic("audit");
    b.subscribe("orders", "billing", Confirm, Push(2, StartPosition::beginning()));
    b.subscribe(
        "orders", "poisoned", [](const Delivery& d) { return d.message->payload() != "bad"; },
        Push(1));
    PushOptions group = Push();
    group.group = "g";
    b.subscribe("orders", "g1", Confirm, group);
    b.subscribe("orders", "g2", Confirm, group);
    b.subscribe_pull("orders", "workers", Pull(Millis{1000}, 3));
    b.subscribe_pull("audit", "readers", Pull());
    b.publish("orders", "ok");
    b.publish("orders", "ok");
    b.publish("orders", "bad");  // offset 2
    b.publish("orders", "ok");
    b.publish("orders", "ok");  // retention (3) has dropped offsets 0 and 1
    b.publish("audit", "a");
    b.drain();
    ASSERT_EQ(b.poll("orders", "workers", "w1", 1, Time{}).size(), 1u);
    ASSERT_EQ(b.oldest_offset("orders"), 2u);
    ASSERT_EQ(b.dead_letters("orders", "poisoned").size(), 1u);
  }
};

// ---- R1 topics ----

TEST_F(Errors, CreateTopicWithEmptyNameIsInvalidArgument) {
  EXPECT_ERROR_CHANGES_NOTHING(b, InvalidArgument, ErrorCode::kInvalidArgument, b.create_topic(""));
}

TEST_F(Errors, CreateTopicWithNameInUseIsDuplicateTopic) {
  EXPECT_ERROR_CHANGES_NOTHING(b, DuplicateTopic, ErrorCode::kDuplicateTopic,
                               b.create_topic("orders"));
}

TEST_F(Errors, DeleteUnknownTopicIsUnknownTopic) {
  EXPECT_ERROR_CHANGES_NOTHING(b, UnknownTopic, ErrorCode::kUnknownTopic, b.delete_topic("nope"));
}

TEST_F(Errors, DeleteTopicWithPushSubscriptionsIsTopicInUse) {
  EXPECT_ERROR_CHANGES_NOTHING(b, TopicInUse, ErrorCode::kTopicInUse, b.delete_topic("orders"));
}

TEST_F(Errors, DeleteTopicWithOnlyAPullSubscriptionIsTopicInUse) {
  EXPECT_ERROR_CHANGES_NOTHING(b, TopicInUse, ErrorCode::kTopicInUse, b.delete_topic("audit"));
}

TEST_F(Errors, TopicQueriesOnUnknownTopicAreUnknownTopic) {
  EXPECT_ERROR_CHANGES_NOTHING(b, UnknownTopic, ErrorCode::kUnknownTopic,
                               (void)b.end_offset("nope"));
  EXPECT_ERROR_CHANGES_NOTHING(b, UnknownTopic, ErrorCode::kUnknownTopic,
                               (void)b.oldest_offset("nope"));
  EXPECT_ERROR_CHANGES_NOTHING(b, UnknownTopic, ErrorCode::kUnknownTopic,
                               (void)b.subscriptions("nope"));
}

// ---- R2 publish ----

TEST_F(Errors, PublishToUnknownTopicIsUnknownTopicAndAppendsNothing) {
  EXPECT_ERROR_CHANGES_NOTHING(b, UnknownTopic, ErrorCode::kUnknownTopic, b.publish("nope", "x"));
  EXPECT_EQ(b.end_offset("orders"), 5u);
  EXPECT_EQ(b.end_offset("audit"), 1u);
}

// ---- R4 subscribe (push) ----

TEST_F(Errors, SubscribeOnUnknownTopicIsUnknownTopic) {
  EXPECT_ERROR_CHANGES_NOTHING(b, UnknownTopic, ErrorCode::kUnknownTopic,
                               b.subscribe("nope", "x", Confirm));
}

TEST_F(Errors, SubscribeWithoutHandlerIsInvalidArgument) {
  EXPECT_ERROR_CHANGES_NOTHING(b, InvalidArgument, ErrorCode::kInvalidArgument,
                               b.subscribe("orders", "x", Handler{}));
}

TEST_F(Errors, SubscribeWithEmptyNameIsInvalidArgument) {
  EXPECT_ERROR_CHANGES_NOTHING(b, InvalidArgument, ErrorCode::kInvalidArgument,
                               b.subscribe("orders", "", Confirm));
}

TEST_F(Errors, SubscribeWithNegativeMaxDeliveriesIsInvalidArgument) {
  EXPECT_ERROR_CHANGES_NOTHING(b, InvalidArgument, ErrorCode::kInvalidArgument,
                               b.subscribe("orders", "x", Confirm, Push(-1)));
}

TEST_F(Errors, SubscribeWithNameInUseIsDuplicateSubscription) {
  EXPECT_ERROR_CHANGES_NOTHING(b, DuplicateSubscription, ErrorCode::kDuplicateSubscription,
                               b.subscribe("orders", "billing", Confirm));
}

TEST_F(Errors, PushNameTakenByAPullSubscriptionIsDuplicateSubscription) {
  EXPECT_ERROR_CHANGES_NOTHING(b, DuplicateSubscription, ErrorCode::kDuplicateSubscription,
                               b.subscribe("orders", "workers", Confirm));
}

TEST_F(Errors, GroupMemberNameInUseIsDuplicateSubscription) {
  PushOptions group = Push();
  group.group = "g";
  EXPECT_ERROR_CHANGES_NOTHING(b, DuplicateSubscription, ErrorCode::kDuplicateSubscription,
                               b.subscribe("orders", "g1", Confirm, group));
  EXPECT_ERROR_CHANGES_NOTHING(b, DuplicateSubscription, ErrorCode::kDuplicateSubscription,
                               b.subscribe("orders", "billing", Confirm, group));
}

TEST_F(Errors, SubscribeStartBeyondEndIsOffsetOutOfRange) {
  EXPECT_ERROR_CHANGES_NOTHING(b, OffsetOutOfRange, ErrorCode::kOffsetOutOfRange,
                               b.subscribe("orders", "x", Confirm, Push(5, StartPosition::at(6))));
}

TEST_F(Errors, SubscribeStartBelowOldestKeptIsOffsetOutOfRange) {
  EXPECT_ERROR_CHANGES_NOTHING(b, OffsetOutOfRange, ErrorCode::kOffsetOutOfRange,
                               b.subscribe("orders", "x", Confirm, Push(5, StartPosition::at(1))));
}

// ---- R10 groups ----

TEST_F(Errors, GroupWithPredicateIsInvalidArgument) {
  PushOptions o = Push();
  o.group = "h";
  o.filter = [](const Message&) { return true; };
  EXPECT_ERROR_CHANGES_NOTHING(b, InvalidArgument, ErrorCode::kInvalidArgument,
                               b.subscribe("orders", "h1", Confirm, o));
}

TEST_F(Errors, JoiningAGroupWithOtherOptionsIsOptionsMismatch) {
  PushOptions other_max = Push(3);
  other_max.group = "g";
  EXPECT_ERROR_CHANGES_NOTHING(b, OptionsMismatch, ErrorCode::kOptionsMismatch,
                               b.subscribe("orders", "g3", Confirm, other_max));
  PushOptions other_filter = Push();
  other_filter.group = "g";
  other_filter.header_filter = {{"type", "x"}};
  EXPECT_ERROR_CHANGES_NOTHING(b, OptionsMismatch, ErrorCode::kOptionsMismatch,
                               b.subscribe("orders", "g3", Confirm, other_filter));
  PushOptions other_start = Push(kDefaultMaxDeliveries, StartPosition::beginning());
  other_start.group = "g";
  EXPECT_ERROR_CHANGES_NOTHING(b, OptionsMismatch, ErrorCode::kOptionsMismatch,
                               b.subscribe("orders", "g3", Confirm, other_start));
}

// ---- R11 pull ----

TEST_F(Errors, SubscribePullOnUnknownTopicIsUnknownTopic) {
  EXPECT_ERROR_CHANGES_NOTHING(b, UnknownTopic, ErrorCode::kUnknownTopic,
                               b.subscribe_pull("nope", "x", Pull()));
}

TEST_F(Errors, SubscribePullWithBadOptionsIsInvalidArgument) {
  EXPECT_ERROR_CHANGES_NOTHING(b, InvalidArgument, ErrorCode::kInvalidArgument,
                               b.subscribe_pull("orders", "x", Pull(Millis{0})));
  EXPECT_ERROR_CHANGES_NOTHING(b, InvalidArgument, ErrorCode::kInvalidArgument,
                               b.subscribe_pull("orders", "x", Pull(Millis{-5})));
  EXPECT_ERROR_CHANGES_NOTHING(b, InvalidArgument, ErrorCode::kInvalidArgument,
                               b.subscribe_pull("orders", "x", Pull(Millis{1000}, -1)));
}

TEST_F(Errors, SubscribePullWithEmptyNameIsInvalidArgument) {
  EXPECT_ERROR_CHANGES_NOTHING(b, InvalidArgument, ErrorCode::kInvalidArgument,
                               b.subscribe_pull("orders", "", Pull()));
}

TEST_F(Errors, SubscribePullAgainWithOtherOptionsIsOptionsMismatch) {
  EXPECT_ERROR_CHANGES_NOTHING(b, OptionsMismatch, ErrorCode::kOptionsMismatch,
                               b.subscribe_pull("orders", "workers", Pull(Millis{1000}, 4)));
  EXPECT_ERROR_CHANGES_NOTHING(b, OptionsMismatch, ErrorCode::kOptionsMismatch,
                               b.subscribe_pull("orders", "workers", Pull(Millis{999}, 3)));
}

TEST_F(Errors, SubscribePullOnAPushNameIsWrongKind) {
  EXPECT_ERROR_CHANGES_NOTHING(b, WrongKind, ErrorCode::kWrongKind,
                               b.subscribe_pull("orders", "billing", Pull()));
}

TEST_F(Errors, SubscribePullStartOutOfRangeIsOffsetOutOfRange) {
  EXPECT_ERROR_CHANGES_NOTHING(
      b, OffsetOutOfRange, ErrorCode::kOffsetOutOfRange,
      b.subscribe_pull("orders", "x",
                       Pull(Millis{1000}, 3, {}, StartPosition::at(b.end_offset("orders") + 1))));
  EXPECT_ERROR_CHANGES_NOTHING(
      b, OffsetOutOfRange, ErrorCode::kOffsetOutOfRange,
      b.subscribe_pull("orders", "x", Pull(Millis{1000}, 3, {}, StartPosition::at(0))));
}

TEST_F(Errors, PollWithZeroMaxOrEmptyMemberIsInvalidArgument) {
  EXPECT_ERROR_CHANGES_NOTHING(b, InvalidArgument, ErrorCode::kInvalidArgument,
                               (void)b.poll("orders", "workers", "w2", 0, Time{}));
  EXPECT_ERROR_CHANGES_NOTHING(b, InvalidArgument, ErrorCode::kInvalidArgument,
                               (void)b.poll("orders", "workers", "", 1, Time{}));
}

TEST_F(Errors, PollOnUnknownTopicOrSubscriptionIsTyped) {
  EXPECT_ERROR_CHANGES_NOTHING(b, UnknownTopic, ErrorCode::kUnknownTopic,
                               (void)b.poll("nope", "workers", "w2", 1, Time{}));
  EXPECT_ERROR_CHANGES_NOTHING(b, UnknownSubscription, ErrorCode::kUnknownSubscription,
                               (void)b.poll("orders", "nope", "w2", 1, Time{}));
}

TEST_F(Errors, AckNackExtendOnUnknownTopicOrSubscriptionAreTyped) {
  EXPECT_ERROR_CHANGES_NOTHING(b, UnknownTopic, ErrorCode::kUnknownTopic,
                               (void)b.ack(Receipt{"nope", "workers", "w1", 2}, Time{}));
  EXPECT_ERROR_CHANGES_NOTHING(b, UnknownSubscription, ErrorCode::kUnknownSubscription,
                               (void)b.ack(Receipt{"orders", "nope", "w1", 2}, Time{}));
  EXPECT_ERROR_CHANGES_NOTHING(b, UnknownTopic, ErrorCode::kUnknownTopic,
                               (void)b.nack(Receipt{"nope", "workers", "w1", 2}, Time{}));
  EXPECT_ERROR_CHANGES_NOTHING(b, UnknownSubscription, ErrorCode::kUnknownSubscription,
                               (void)b.nack(Receipt{"orders", "nope", "w1", 2}, Time{}));
  EXPECT_ERROR_CHANGES_NOTHING(
      b, UnknownTopic, ErrorCode::kUnknownTopic,
      (void)b.extend(Receipt{"nope", "workers", "w1", 2}, Time{}, Millis{5}));
  EXPECT_ERROR_CHANGES_NOTHING(
      b, UnknownSubscription, ErrorCode::kUnknownSubscription,
      (void)b.extend(Receipt{"orders", "nope", "w1", 2}, Time{}, Millis{5}));
}

TEST_F(Errors, RefusedAckIsFalseNotAnError) {
  const auto before = testing::Snap(b);
  EXPECT_FALSE(b.ack(Receipt{"orders", "workers", "w2", 2}, Time{})) << "valid call, wrong holder";
  EXPECT_FALSE(b.nack(Receipt{"orders", "workers", "w1", 3}, Time{})) << "valid call, not held";
  EXPECT_EQ(testing::Snap(b), before);
}

TEST_F(Errors, PrecedenceArgumentsBeforeSubscriptionForExtend) {
  EXPECT_ERROR_CHANGES_NOTHING(b, InvalidArgument, ErrorCode::kInvalidArgument,
                               (void)b.extend(Receipt{"nope", "nope", "w1", 2}, Time{}, Millis{0}));
}

TEST_F(Errors, PullCallsOnAPushSubscriptionAreWrongKind) {
  EXPECT_ERROR_CHANGES_NOTHING(b, WrongKind, ErrorCode::kWrongKind,
                               (void)b.poll("orders", "billing", "w", 1, Time{}));
  EXPECT_ERROR_CHANGES_NOTHING(b, WrongKind, ErrorCode::kWrongKind,
                               (void)b.ack(Receipt{"orders", "billing", "w", 2}, Time{}));
  EXPECT_ERROR_CHANGES_NOTHING(b, WrongKind, ErrorCode::kWrongKind,
                               (void)b.nack(Receipt{"orders", "billing", "w", 2}, Time{}));
  EXPECT_ERROR_CHANGES_NOTHING(
      b, WrongKind, ErrorCode::kWrongKind,
      (void)b.extend(Receipt{"orders", "billing", "w", 2}, Time{}, Millis{5}));
  EXPECT_ERROR_CHANGES_NOTHING(b, WrongKind, ErrorCode::kWrongKind,
                               (void)b.poll("orders", "g1", "w", 1, Time{}));
}

TEST_F(Errors, ExtendByZeroOrLessIsInvalidArgument) {
  EXPECT_ERROR_CHANGES_NOTHING(
      b, InvalidArgument, ErrorCode::kInvalidArgument,
      (void)b.extend(Receipt{"orders", "workers", "w1", 2}, Time{}, Millis{0}));
  EXPECT_ERROR_CHANGES_NOTHING(
      b, InvalidArgument, ErrorCode::kInvalidArgument,
      (void)b.extend(Receipt{"orders", "workers", "w1", 2}, Time{}, Millis{-1}));
}

// ---- R12 seek ----

TEST_F(Errors, SeekOnUnknownTopicOrSubscriptionIsTyped) {
  EXPECT_ERROR_CHANGES_NOTHING(b, UnknownTopic, ErrorCode::kUnknownTopic,
                               b.seek("nope", "billing", 2));
  EXPECT_ERROR_CHANGES_NOTHING(b, UnknownSubscription, ErrorCode::kUnknownSubscription,
                               b.seek("orders", "nope", 2));
}

TEST_F(Errors, SeekOutsideOldestToEndIsOffsetOutOfRange) {
  EXPECT_ERROR_CHANGES_NOTHING(b, OffsetOutOfRange, ErrorCode::kOffsetOutOfRange,
                               b.seek("orders", "billing", 1));  // dropped by retention
  EXPECT_ERROR_CHANGES_NOTHING(b, OffsetOutOfRange, ErrorCode::kOffsetOutOfRange,
                               b.seek("orders", "billing", 6));  // past the end
  EXPECT_ERROR_CHANGES_NOTHING(b, OffsetOutOfRange, ErrorCode::kOffsetOutOfRange,
                               b.seek("orders", "workers", 6));
  EXPECT_ERROR_CHANGES_NOTHING(b, OffsetOutOfRange, ErrorCode::kOffsetOutOfRange,
                               b.seek("orders", "g2", 100));
}

// ---- R13 observation ----

TEST_F(Errors, StatsAndDeadLettersOnUnknownNamesAreTyped) {
  EXPECT_ERROR_CHANGES_NOTHING(b, UnknownTopic, ErrorCode::kUnknownTopic,
                               (void)b.stats("nope", "billing"));
  EXPECT_ERROR_CHANGES_NOTHING(b, UnknownSubscription, ErrorCode::kUnknownSubscription,
                               (void)b.stats("orders", "nope"));
  EXPECT_ERROR_CHANGES_NOTHING(b, UnknownTopic, ErrorCode::kUnknownTopic,
                               (void)b.dead_letters("nope", "billing"));
  EXPECT_ERROR_CHANGES_NOTHING(b, UnknownSubscription, ErrorCode::kUnknownSubscription,
                               (void)b.dead_letters("orders", "nope"));
  EXPECT_ERROR_CHANGES_NOTHING(b, UnknownSubscription, ErrorCode::kUnknownSubscription,
                               (void)b.stats("orders", "h"));  // neither a member nor a group
}

// ---- R9 unsubscribe ----

TEST_F(Errors, UnsubscribeOnUnknownTopicIsUnknownTopic) {
  EXPECT_ERROR_CHANGES_NOTHING(b, UnknownTopic, ErrorCode::kUnknownTopic,
                               (void)b.unsubscribe("nope", "billing"));
}

TEST_F(Errors, UnsubscribeUnknownNameOnAKnownTopicIsFalseNotAnError) {
  const auto before = testing::Snap(b);
  EXPECT_FALSE(b.unsubscribe("orders", "nope"));
  EXPECT_FALSE(b.unsubscribe("orders", "g")) << "a group is left by its members, not by name";
  EXPECT_EQ(testing::Snap(b), before);
}

// ---- R14 precedence ----

TEST_F(Errors, PrecedenceArgumentsBeforeTopic) {
  EXPECT_ERROR_CHANGES_NOTHING(b, InvalidArgument, ErrorCode::kInvalidArgument,
                               (void)b.poll("nope", "nope", "", 0, Time{}));
  EXPECT_ERROR_CHANGES_NOTHING(b, InvalidArgument, ErrorCode::kInvalidArgument,
                               b.subscribe_pull("nope", "x", Pull(Millis{0})));
  EXPECT_ERROR_CHANGES_NOTHING(b, InvalidArgument, ErrorCode::kInvalidArgument,
                               b.subscribe("nope", "x", Handler{}));
}

TEST_F(Errors, PrecedenceTopicBeforeSubscription) {
  EXPECT_ERROR_CHANGES_NOTHING(b, UnknownTopic, ErrorCode::kUnknownTopic,
                               b.seek("nope", "nope", 1000));
  EXPECT_ERROR_CHANGES_NOTHING(b, UnknownTopic, ErrorCode::kUnknownTopic,
                               b.subscribe("nope", "billing", Confirm));
}

TEST_F(Errors, PrecedenceSubscriptionBeforeKindOptionsAndRange) {
  EXPECT_ERROR_CHANGES_NOTHING(b, UnknownSubscription, ErrorCode::kUnknownSubscription,
                               b.seek("orders", "nope", 1000));
  // A duplicate name that would also be a range error.
  EXPECT_ERROR_CHANGES_NOTHING(
      b, DuplicateSubscription, ErrorCode::kDuplicateSubscription,
      b.subscribe("orders", "billing", Confirm, Push(5, StartPosition::at(1000))));
}

TEST_F(Errors, PrecedenceKindAndOptionsBeforeRange) {
  EXPECT_ERROR_CHANGES_NOTHING(
      b, WrongKind, ErrorCode::kWrongKind,
      b.subscribe_pull("orders", "billing", Pull(Millis{1000}, 3, {}, StartPosition::at(1000))));
  EXPECT_ERROR_CHANGES_NOTHING(
      b, OptionsMismatch, ErrorCode::kOptionsMismatch,
      b.subscribe_pull("orders", "workers", Pull(Millis{1000}, 3, {}, StartPosition::at(1000))));
}

// ---- R8 drain ----

TEST(DrainErrors, DrainOnALaneBrokerIsNotSynchronous) {
  Broker b{LaneBroker()};
  b.create_topic("orders");
  b.subscribe("orders", "s", Confirm);
  EXPECT_ERROR_CHANGES_NOTHING(b, NotSynchronous, ErrorCode::kNotSynchronous, (void)b.drain());
}

TEST(DrainErrors, DrainOnAPoolBrokerIsNotSynchronous) {
  Broker b{PoolBroker()};
  b.create_topic("orders");
  EXPECT_ERROR_CHANGES_NOTHING(b, NotSynchronous, ErrorCode::kNotSynchronous, (void)b.drain());
}

TEST(DrainErrors, DrainFromInsideAHandlerIsReentrantDrain) {
  Broker b{SyncBroker()};
  b.create_topic("orders");
  int reentrant = 0;
  std::string other;
  b.subscribe("orders", "s", [&](const Delivery&) {
    try {
      b.drain();
    } catch (const ReentrantDrain& e) {
      if (e.code() == ErrorCode::kReentrantDrain) ++reentrant;
    } catch (const std::exception& e) {
      other = e.what();
    }
    return true;
  });
  int neighbour = 0;
  b.subscribe("orders", "t", [&](const Delivery&) {
    ++neighbour;
    return true;
  });
  b.publish("orders", "m0");
  b.publish("orders", "m1");

  EXPECT_EQ(b.drain(), 4u) << "the outer drain goes on as if nothing happened";

  EXPECT_EQ(reentrant, 2);
  EXPECT_EQ(other, "");
  EXPECT_EQ(neighbour, 2);
  EXPECT_EQ(b.stats("orders", "s").confirmed, 2u);
}

// ---- re-entrancy that works ----

TEST(Reentrancy, PublishFromInsideAHandlerIsSeenByUnfinishedSubscriptionsInTheSameDrain) {
  Broker b{SyncBroker()};
  b.create_topic("orders");
  b.create_topic("invoices");
  std::vector<std::string> seen;
  b.subscribe("orders", "billing", [&](const Delivery& d) {
    seen.push_back("billing:" + std::string(d.message->payload()));
    if (d.message->payload() == "order-1") {
      EXPECT_EQ(b.publish("orders", "order-2"), 1u);
      EXPECT_EQ(b.publish("invoices", "invoice-1"), 0u);
    }
    return true;
  });
  b.subscribe("invoices", "mailer", [&](const Delivery& d) {
    seen.push_back("mailer:" + std::string(d.message->payload()));
    return true;
  });
  b.publish("orders", "order-1");

  EXPECT_EQ(b.drain(), 3u);

  EXPECT_EQ(seen,
            (std::vector<std::string>{"billing:order-1", "billing:order-2", "mailer:invoice-1"}));
}

TEST(Reentrancy, SubscribeFromInsideAHandlerWorks) {
  Broker b{SyncBroker()};
  b.create_topic("orders");
  std::vector<Offset> late;
  bool subscribed = false;
  b.subscribe("orders", "first", [&](const Delivery&) {
    if (!subscribed) {
      b.subscribe(
          "orders", "late",
          [&](const Delivery& d) {
            late.push_back(d.message->offset());
            return true;
          },
          Push(kDefaultMaxDeliveries, StartPosition::beginning()));
      subscribed = true;
    }
    return true;
  });
  b.publish("orders", "m0");
  b.publish("orders", "m1");

  b.drain();
  b.drain();

  EXPECT_TRUE(subscribed);
  EXPECT_EQ(b.subscriptions("orders"), (std::vector<std::string>{"first", "late"}));
  EXPECT_EQ(late, (std::vector<Offset>{0, 1}));
}

TEST(Reentrancy, UnsubscribeItselfFromInsideItsHandlerWorks) {
  Broker b{SyncBroker()};
  b.create_topic("orders");
  int calls = 0;
  b.subscribe("orders", "once", [&](const Delivery&) {
    ++calls;
    EXPECT_TRUE(b.unsubscribe("orders", "once"));
    EXPECT_FALSE(b.unsubscribe("orders", "once"));
    return true;
  });
  b.publish("orders", "m0");
  b.publish("orders", "m1");

  b.drain();

  EXPECT_EQ(calls, 1);
  EXPECT_TRUE(b.subscriptions("orders").empty());
  EXPECT_NO_THROW(b.delete_topic("orders")) << "nothing uses the topic any more";
}

TEST(Reentrancy, SeekOwnSubscriptionFromInsideItsHandlerVoidsTheOfferAndReplays) {
  Broker b{SyncBroker()};
  b.create_topic("orders");
  std::vector<Offset> seen;
  bool seeked = false;
  b.subscribe("orders", "replayer", [&](const Delivery& d) {
    seen.push_back(d.message->offset());
    if (d.message->offset() == 2 && !seeked) {
      seeked = true;
      b.seek("orders", "replayer", 0);
    }
    return true;
  });
  for (int i = 0; i < 3; ++i) b.publish("orders", "m");

  EXPECT_EQ(b.drain(), 5u) << "the offer seeked during its run neither counts nor stops (R8)";

  EXPECT_EQ(seen, (std::vector<Offset>{0, 1, 2, 0, 1, 2}));
  const auto s = b.stats("orders", "replayer");
  EXPECT_EQ(s.confirmed, 5u);
  EXPECT_EQ(s.delivered, 6u);
  EXPECT_EQ(s.cursor, 3u);
  EXPECT_EQ(s.backlog, 0u);
}

TEST(Reentrancy, SeekAnotherSubscriptionFromInsideAHandlerWorks) {
  Broker b{SyncBroker()};
  b.create_topic("orders");
  std::vector<Offset> second_seen;
  bool seeked = false;
  b.subscribe("orders", "first", [&](const Delivery&) {
    if (!seeked) {
      seeked = true;
      b.seek("orders", "second", 1);
    }
    return true;
  });
  b.subscribe(
      "orders", "second",
      [&](const Delivery& d) {
        second_seen.push_back(d.message->offset());
        return true;
      },
      Push(kDefaultMaxDeliveries, StartPosition::beginning()));
  for (int i = 0; i < 3; ++i) b.publish("orders", "m");

  b.drain();

  EXPECT_EQ(second_seen, (std::vector<Offset>{1, 2}));
}

}  // namespace
}  // namespace broker
