// Unit tests of the broker facade, one SPEC rule at a time: retention (R3), start positions
// (R4), filters (R5), offers and stats (R6, R13), failure reasons (R7), groups (R10), pull
// acceptance rules (R11), seek (R12), topics (R1, R2).
#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "broker/broker.h"
#include "broker/idempotent.h"
#include "test_support.h"

namespace broker {
namespace {

using testing::Pull;
using testing::Push;
using testing::SyncBroker;

/// Records (name, offset, attempt) of every handler call.
struct Log {
  std::vector<std::string> calls;
  Handler Confirming(const std::string& name) {
    return [this, name](const Delivery& d) {
      calls.push_back(name + "@" + std::to_string(d.message->offset()));
      return true;
    };
  }
};

std::vector<Offset> Offsets(const std::vector<Received>& got) {
  std::vector<Offset> out;
  for (const auto& r : got) out.push_back(r.message->offset());
  return out;
}

// ---- R1/R2 topics and publish ----

TEST(Topics, TopicsAreListedInCreationOrderAndDeletedWhenUnused) {
  Broker b{SyncBroker()};
  b.create_topic("c");
  b.create_topic("a");
  b.create_topic("b");
  EXPECT_EQ(b.topics(), (std::vector<std::string>{"c", "a", "b"}));
  b.delete_topic("a");
  EXPECT_EQ(b.topics(), (std::vector<std::string>{"c", "b"}));
  b.create_topic("a");
  EXPECT_EQ(b.topics(), (std::vector<std::string>{"c", "b", "a"}));
  EXPECT_EQ(b.end_offset("a"), 0u) << "a re-created topic starts empty";
}

TEST(Topics, DeleteTopicIsRefusedWhileSubscribedThenAllowed) {
  Broker b{SyncBroker()};
  b.create_topic("orders");
  b.subscribe("orders", "s", [](const Delivery&) { return true; });
  b.subscribe_pull("orders", "p", Pull());
  EXPECT_THROW(b.delete_topic("orders"), TopicInUse);
  EXPECT_TRUE(b.unsubscribe("orders", "s"));
  EXPECT_THROW(b.delete_topic("orders"), TopicInUse) << "the pull subscription remains";
  EXPECT_TRUE(b.unsubscribe("orders", "p"));
  EXPECT_NO_THROW(b.delete_topic("orders"));
  EXPECT_TRUE(b.topics().empty());
}

TEST(Publish, OffsetsCountFromZeroPerTopic) {
  Broker b{SyncBroker()};
  b.create_topic("a");
  b.create_topic("b");
  EXPECT_EQ(b.publish("a", "x"), 0u);
  EXPECT_EQ(b.publish("a", "x"), 1u);
  EXPECT_EQ(b.publish("b", "x"), 0u);
  EXPECT_EQ(b.publish("a", "x"), 2u);
  EXPECT_EQ(b.end_offset("a"), 3u);
  EXPECT_EQ(b.oldest_offset("a"), 0u);
}

TEST(Publish, MessageCarriesPayloadHeadersKeyAndTheClocksTime) {
  auto clock = std::make_shared<ManualClock>(at(Millis{1234}));
  Broker b{SyncBroker(clock)};
  b.create_topic("orders");
  b.subscribe_pull("orders", "p", Pull());
  b.publish("orders", "first", {{"type", "created"}}, "customer-7");
  clock->advance(Millis{10});
  b.publish("orders", "second");

  const auto got = b.poll("orders", "p", "w", 2, Time{});
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].message->payload(), "first");
  EXPECT_EQ(got[0].message->headers(), (Headers{{"type", "created"}}));
  EXPECT_EQ(got[0].message->key(), "customer-7");
  EXPECT_EQ(got[0].message->publish_time(), at(Millis{1234}));
  EXPECT_EQ(got[1].message->publish_time(), at(Millis{1244}));
  EXPECT_EQ(got[1].message->key(), "");
}

// Every field reads back as published, whatever its size or bytes: records of every size
// from empty to larger than a segment, NUL and high bytes, headers before the payload, so
// segments roll over at every kind of boundary and reads walk the sparse index.
TEST(Publish, EveryFieldReadsBackAsPublishedAcrossSegmentBoundaries) {
  Broker b{SyncBroker()};
  b.create_topic("t");
  b.subscribe_pull("t", "p", Pull());
  struct Sent {
    std::string payload;
    Headers headers;
    std::string key;
  };
  std::vector<Sent> sent;
  std::uint64_t x = 88172645463325252ull;  // xorshift: the same sizes every run
  const auto next = [&x] {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return x;
  };
  for (int i = 0; i < 400; ++i) {
    // One record larger than a full-size segment (2 MiB): a segment of its own, mapped.
    const std::size_t size = i == 200      ? std::size_t{5} << 19
                             : i % 50 == 7 ? 70'000 + next() % 200'000
                                           : next() % 300;
    Sent m;
    for (std::size_t k = 0; k < size; ++k) m.payload.push_back(static_cast<char>(next() & 0xff));
    if (i % 3 == 0) m.headers = {{"n", std::to_string(i)}, {std::string(1, '\0'), "zero"}};
    if (i % 2 == 0) m.key = "key-" + std::to_string(i % 7);
    EXPECT_EQ(b.publish("t", m.payload, m.headers, m.key), static_cast<Offset>(i));
    sent.push_back(std::move(m));
  }
  std::vector<Received> got;
  for (std::vector<Received> batch; !(batch = b.poll("t", "p", "w", 64, Time{})).empty();) {
    for (Received& r : batch) {
      EXPECT_TRUE(b.ack(r.receipt, Time{}));
      got.push_back(std::move(r));
    }
  }
  ASSERT_EQ(got.size(), sent.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    const Message& m = *got[i].message;
    EXPECT_EQ(m.offset(), i);
    EXPECT_EQ(m.payload(), sent[i].payload) << "offset " << i;
    EXPECT_EQ(m.headers(), sent[i].headers) << "offset " << i;
    EXPECT_EQ(m.header_count(), sent[i].headers.size());
    EXPECT_EQ(m.header("n"),
              i % 3 == 0 ? std::optional<std::string_view>(std::to_string(i)) : std::nullopt);
    EXPECT_EQ(m.key(), sent[i].key) << "offset " << i;
  }
}

// make_message builds the same record the log does: the same bytes, field for field.
TEST(Publish, AStandaloneMessageIsTheRecordTheLogKeeps) {
  auto clock = std::make_shared<ManualClock>(at(Millis{77}));
  Broker b{SyncBroker(clock)};
  b.create_topic("t");
  b.subscribe_pull("t", "p", Pull());
  b.publish("t", std::string("pay\0load", 8), {{"a", "1"}, {"b", ""}}, "k");
  const auto got = b.poll("t", "p", "w", 1, Time{});
  ASSERT_EQ(got.size(), 1u);
  const MessagePtr made =
      make_message(0, std::string("pay\0load", 8), {{"a", "1"}, {"b", ""}}, "k", at(Millis{77}));
  EXPECT_EQ(made->record(), got[0].message->record());
  EXPECT_EQ(made->payload(), std::string_view("pay\0load", 8));
  EXPECT_EQ(made->header("b"), std::optional<std::string_view>(""));
  EXPECT_EQ(made->header("c"), std::nullopt);
}

// ---- R3 retention ----

TEST(Retention, MessageBoundKeepsTheNewestNAndCountsWhatASubscriptionMissed) {
  Broker b{SyncBroker()};
  TopicOptions o;
  o.retention_messages = 3;
  b.create_topic("orders", o);
  Log log;
  b.subscribe("orders", "s", log.Confirming("s"));
  for (int i = 0; i < 5; ++i) b.publish("orders", "m");

  EXPECT_EQ(b.oldest_offset("orders"), 2u);
  EXPECT_EQ(b.end_offset("orders"), 5u);
  const auto s = b.stats("orders", "s");
  EXPECT_EQ(s.skipped, 2u) << "nothing is lost without a trace";
  EXPECT_EQ(s.cursor, 2u);
  EXPECT_EQ(s.backlog, 3u);
  b.drain();
  EXPECT_EQ(log.calls, (std::vector<std::string>{"s@2", "s@3", "s@4"}));
}

TEST(Retention, ByteBoundDropsOldestWhileOverButAlwaysKeepsTheNewest) {
  Broker b{SyncBroker()};
  TopicOptions o;
  o.retention_bytes = 10;
  b.create_topic("orders", o);
  b.publish("orders", "aaaa");  // 4
  b.publish("orders", "bbbb");  // 8
  EXPECT_EQ(b.oldest_offset("orders"), 0u);
  b.publish("orders", "cccc");  // 12 > 10: drop offset 0 -> 8
  EXPECT_EQ(b.oldest_offset("orders"), 1u);
  b.publish("orders", "cc");  // 10: not over
  EXPECT_EQ(b.oldest_offset("orders"), 1u);
  b.publish("orders", std::string(25, 'x'));  // bigger than the bound alone
  EXPECT_EQ(b.oldest_offset("orders"), 4u) << "the newest message is always kept";
  EXPECT_EQ(b.end_offset("orders"), 5u);
}

TEST(Retention, SeekRangeIsOldestKeptToEnd) {
  Broker b{SyncBroker()};
  TopicOptions o;
  o.retention_messages = 2;
  b.create_topic("orders", o);
  b.subscribe("orders", "s", [](const Delivery&) { return true; });
  for (int i = 0; i < 4; ++i) b.publish("orders", "m");
  EXPECT_THROW(b.seek("orders", "s", 1), OffsetOutOfRange);
  EXPECT_NO_THROW(b.seek("orders", "s", 2));
  EXPECT_EQ(b.stats("orders", "s").cursor, 2u);
  EXPECT_NO_THROW(b.seek("orders", "s", 4));
  EXPECT_EQ(b.stats("orders", "s").backlog, 0u);
  EXPECT_THROW(b.seek("orders", "s", 5), OffsetOutOfRange);
}

TEST(Retention, ReturnedMessagesDroppedByRetentionAreCountedAsSkipped) {
  Broker b{SyncBroker()};
  TopicOptions o;
  o.retention_messages = 2;
  b.create_topic("orders", o);
  b.subscribe_pull("orders", "p", Pull());
  b.publish("orders", "m0");
  ASSERT_EQ(b.poll("orders", "p", "w", 1, Time{}).size(), 1u);
  ASSERT_TRUE(b.nack(Receipt{"orders", "p", "w", 0}, Time{}));  // offset 0 waits for redelivery
  b.publish("orders", "m1");
  b.publish("orders", "m2");  // drops offset 0

  const auto s = b.stats("orders", "p");
  EXPECT_EQ(s.skipped, 1u);
  EXPECT_EQ(s.backlog, 2u);
  EXPECT_EQ(Offsets(b.poll("orders", "p", "w", 5, Time{})), (std::vector<Offset>{1, 2}));
}

TEST(Retention, HeldMessagesStayAliveForTheirHolder) {
  Broker b{SyncBroker()};
  TopicOptions o;
  o.retention_messages = 1;
  b.create_topic("orders", o);
  b.subscribe_pull("orders", "p", Pull());
  b.publish("orders", "held");
  const auto got = b.poll("orders", "p", "w", 1, Time{});
  ASSERT_EQ(got.size(), 1u);
  for (int i = 0; i < 5; ++i) b.publish("orders", "newer");

  EXPECT_EQ(got[0].message->payload(), "held");
  EXPECT_EQ(b.stats("orders", "p").in_flight, 1u) << "held messages are not touched";
  EXPECT_TRUE(b.ack(Receipt{"orders", "p", "w", 0}, Time{}));
  EXPECT_EQ(b.stats("orders", "p").skipped, 4u) << "offsets 1..4 were dropped unseen";
}

// R3: a dropped message's memory goes once its last holder lets go; with no holder at all
// it goes with retention (a log bounded to N keeps memory for N messages, plus at most the
// one segment the oldest kept shares with dropped ones, whatever it stored before).
TEST(Retention, DroppedMessagesAreFreedOnceNoHolderKeepsThem) {
  Broker b{SyncBroker()};
  TopicOptions o;
  o.retention_messages = 10;
  b.create_topic("orders", o);
  b.subscribe_pull("orders", "p", Pull());
  b.publish("orders", "first");
  std::weak_ptr<const Message> first;
  {
    const auto got = b.poll("orders", "p", "w", 1, Time{});
    ASSERT_EQ(got.size(), 1u);
    first = got[0].message;
    EXPECT_TRUE(b.ack(got[0].receipt, Time{}));
  }
  std::vector<MessagePtr> held;
  for (int i = 1; i <= 2000; ++i) {
    b.publish("orders", "m" + std::to_string(i));
    if (i == 1000) {  // a holder keeps its message, however much retention drops after
      const auto got = b.poll("orders", "p", "w", 1, Time{});
      ASSERT_EQ(got.size(), 1u);
      held.push_back(got[0].message);
    }
  }
  EXPECT_TRUE(first.expired()) << "message 0, dropped and let go, is still in memory";
  ASSERT_EQ(held.size(), 1u);
  EXPECT_EQ(held[0]->payload(), "m991") << "a held message must stay readable";
  // Retention itself went on meanwhile: the newest 10 are what the log keeps.
  EXPECT_EQ(b.oldest_offset("orders"), 1991u);
}

// R3 with recycled segments (issue 19): a bounded log reuses the buffers of the full-size
// segments it freed, so later messages must never overwrite one a holder still keeps, and
// every kept message reads back as published however many buffers went round.
TEST(Retention, RecycledSegmentsNeverChangeAMessageSomebodyStillHolds) {
  Broker b{SyncBroker()};
  TopicOptions o;
  o.retention_messages = 2;
  b.create_topic("big", o);
  b.subscribe_pull("big", "holder", Pull());
  // 300 kB records: the log's segments reach their full 2 MiB after a few messages, and
  // retention then frees one about every seventh message.
  const auto payload = [](Offset i) {
    std::string p(300'000, static_cast<char>('a' + i % 26));
    const std::string stamp = std::to_string(i) + ":";
    return p.replace(0, stamp.size(), stamp);
  };
  // What the holder keeps, with the offset it had when taken (an overwritten record would
  // bring its own offset along).
  std::vector<std::pair<Offset, MessagePtr>> held;
  for (Offset i = 0; i < 400; ++i) {
    b.publish("big", payload(i));
    if (i % 50 == 20) {  // the holder takes the oldest kept message and keeps it
      const auto got = b.poll("big", "holder", "w", 1, Time{});
      ASSERT_EQ(got.size(), 1u);
      held.emplace_back(got[0].message->offset(), got[0].message);
    }
    // A reader from the oldest kept message sees both kept ones intact.
    for (Offset k = b.oldest_offset("big"); k <= i; ++k) {
      b.subscribe_pull("big", "reader", Pull(Millis{30000}, 5, {}, StartPosition::at(k)));
      const auto got = b.poll("big", "reader", "r", 1, Time{});
      b.unsubscribe("big", "reader");
      ASSERT_EQ(got.size(), 1u) << "offset " << k;
      ASSERT_EQ(got[0].message->payload(), payload(k)) << "offset " << k << " after " << i;
    }
  }
  ASSERT_EQ(held.size(), 8u);
  for (const auto& [offset, m] : held) {
    EXPECT_EQ(m->offset(), offset);
    EXPECT_EQ(m->payload(), payload(offset)) << "held offset " << offset;
  }
}

// R3 with a subscription that stopped reading: it may keep what it last read, never what
// others read since (a lagging reader must not keep the whole log alive).
TEST(Retention, AReaderThatStoppedKeepsNoLaterMessagesAlive) {
  Broker b{SyncBroker()};
  TopicOptions o;
  o.retention_messages = 10;
  b.create_topic("orders", o);
  b.subscribe_pull("orders", "stopped", Pull());
  b.subscribe_pull("orders", "going", Pull());
  auto poll_one = [&](const std::string& sub) {
    const auto got = b.poll("orders", sub, "w", 1, Time{});
    EXPECT_EQ(got.size(), 1u);
    if (got.empty()) return MessagePtr{};
    EXPECT_TRUE(b.ack(got[0].receipt, Time{}));
    return got[0].message;
  };
  b.publish("orders", "m0");
  poll_one("stopped");  // and never again
  std::weak_ptr<const Message> middle;
  for (int i = 1; i <= 2000; ++i) {
    b.publish("orders", "m" + std::to_string(i));
    if (i == 500) middle = poll_one("going");
    if (i == 1500) poll_one("going");
  }
  EXPECT_TRUE(middle.expired())
      << "a message dropped by retention, read and let go, stays in memory while another "
         "subscription's reading stopped earlier";
}

// ---- R4 start positions ----

TEST(StartPosition, DefaultIsTheEndOfTheLog) {
  Broker b{SyncBroker()};
  b.create_topic("orders");
  b.publish("orders", "old");
  Log log;
  b.subscribe("orders", "s", log.Confirming("s"));
  b.publish("orders", "new");
  b.drain();
  EXPECT_EQ(log.calls, std::vector<std::string>{"s@1"});
}

TEST(StartPosition, BeginningIsTheOldestKeptOffset) {
  Broker b{SyncBroker()};
  TopicOptions o;
  o.retention_messages = 2;
  b.create_topic("orders", o);
  for (int i = 0; i < 3; ++i) b.publish("orders", "m");
  Log log;
  b.subscribe("orders", "s", log.Confirming("s"), Push(5, StartPosition::beginning()));
  EXPECT_EQ(b.stats("orders", "s").cursor, 1u);
  EXPECT_EQ(b.stats("orders", "s").skipped, 0u) << "it never had the dropped offset";
  b.drain();
  EXPECT_EQ(log.calls, (std::vector<std::string>{"s@1", "s@2"}));
}

TEST(StartPosition, AtAnOffsetInsideTheKeptRange) {
  Broker b{SyncBroker()};
  b.create_topic("orders");
  for (int i = 0; i < 3; ++i) b.publish("orders", "m");
  b.subscribe_pull("orders", "p", Pull(Millis{1000}, 5, {}, StartPosition::at(1)));
  b.subscribe_pull("orders", "q", Pull(Millis{1000}, 5, {}, StartPosition::at(3)));
  EXPECT_EQ(Offsets(b.poll("orders", "p", "w", 10, Time{})), (std::vector<Offset>{1, 2}));
  EXPECT_TRUE(b.poll("orders", "q", "w", 10, Time{}).empty());
}

TEST(StartPosition, SubscriptionNamesAreUniqueAcrossKindsButGroupNamesAreSeparate) {
  Broker b{SyncBroker()};
  b.create_topic("orders");
  b.subscribe("orders", "g", [](const Delivery&) { return true; });
  PushOptions group = Push();
  group.group = "g";
  EXPECT_NO_THROW(b.subscribe(
      "orders", "m1", [](const Delivery&) { return true; }, group));
  EXPECT_EQ(b.subscriptions("orders"), (std::vector<std::string>{"g", "m1"}));
  b.create_topic("other");
  EXPECT_NO_THROW(b.subscribe("other", "g", [](const Delivery&) { return true; }))
      << "names are per topic";
}

// ---- R5 filters ----

TEST(Filters, HeaderFilterDeliversOnlyMatchesAndCountsThePassedOver) {
  Broker b{SyncBroker()};
  b.create_topic("orders");
  Log log;
  PushOptions o = Push();
  o.header_filter = {{"type", "created"}, {"region", "eu"}};
  b.subscribe("orders", "s", log.Confirming("s"), o);
  b.publish("orders", "a", {{"type", "created"}, {"region", "eu"}, {"extra", "1"}});
  b.publish("orders", "b", {{"type", "paid"}, {"region", "eu"}});
  b.publish("orders", "c", {{"type", "created"}});
  b.publish("orders", "d", {{"type", "created"}, {"region", "eu"}});

  EXPECT_EQ(b.stats("orders", "s").backlog, 2u) << "backlog counts only matching messages";
  b.drain();

  EXPECT_EQ(log.calls, (std::vector<std::string>{"s@0", "s@3"}));
  const auto s = b.stats("orders", "s");
  EXPECT_EQ(s.filtered, 2u);
  EXPECT_EQ(s.cursor, 4u) << "the cursor moves past non-matching messages";
  EXPECT_EQ(s.backlog, 0u);
}

TEST(Filters, PredicateRunsAfterTheHeaderFilter) {
  Broker b{SyncBroker()};
  b.create_topic("orders");
  Log log;
  PushOptions o = Push();
  o.header_filter = {{"type", "created"}};
  o.filter = [](const Message& m) { return m.payload().starts_with("big"); };
  b.subscribe("orders", "s", log.Confirming("s"), o);
  b.publish("orders", "big-1", {{"type", "created"}});
  b.publish("orders", "small", {{"type", "created"}});
  b.publish("orders", "big-2", {{"type", "paid"}});
  b.publish("orders", "big-3", {{"type", "created"}});
  b.drain();
  EXPECT_EQ(log.calls, (std::vector<std::string>{"s@0", "s@3"}));
  EXPECT_EQ(b.stats("orders", "s").filtered, 2u);
}

TEST(Filters, PullHeaderFilterSkipsNonMatching) {
  Broker b{SyncBroker()};
  b.create_topic("orders");
  b.subscribe_pull("orders", "p", Pull(Millis{1000}, 5, {{"type", "created"}}));
  b.publish("orders", "a", {{"type", "paid"}});
  b.publish("orders", "b", {{"type", "created"}});
  EXPECT_EQ(Offsets(b.poll("orders", "p", "w", 10, Time{})), std::vector<Offset>{1});
  EXPECT_EQ(b.stats("orders", "p").filtered, 1u);
}

// ---- R6/R13 offers and stats ----

TEST(Stats, CountersAddUp) {
  Broker b{SyncBroker()};
  b.create_topic("orders");
  b.subscribe_pull("orders", "p", Pull(Millis{100}, 2));
  for (int i = 0; i < 5; ++i) b.publish("orders", "m");
  // offers: 0,1,2,3 (attempt 1); ack 0; nack 1; 2 expires; 3 stays held.
  ASSERT_EQ(b.poll("orders", "p", "w", 4, Time{}).size(), 4u);
  ASSERT_TRUE(b.ack(Receipt{"orders", "p", "w", 0}, Time{}));
  ASSERT_TRUE(b.nack(Receipt{"orders", "p", "w", 1}, Time{}));
  ASSERT_TRUE(b.extend(Receipt{"orders", "p", "w", 3}, Time{}, Millis{1000}));
  EXPECT_EQ(b.expire(at(Millis{100})), (std::vector<Expired>{{"orders", "p", 2, false}}));
  // offers again: 1 (attempt 2), 2 (attempt 2), then 1 nacked again -> dead.
  const auto again = b.poll("orders", "p", "w", 2, at(Millis{100}));
  ASSERT_EQ(again.size(), 2u);
  EXPECT_EQ(again[0].attempt, 2);
  EXPECT_EQ(again[1].attempt, 2);
  ASSERT_TRUE(b.nack(Receipt{"orders", "p", "w", 1}, at(Millis{100})));

  const auto s = b.stats("orders", "p");
  EXPECT_EQ(s.delivered, 6u);
  EXPECT_EQ(s.redelivered, 2u);
  EXPECT_EQ(s.confirmed, 1u);
  EXPECT_EQ(s.dead_lettered, 1u);
  EXPECT_EQ(s.in_flight, 2u) << "offsets 2 and 3";
  EXPECT_EQ(s.backlog, 1u) << "offset 4";
  EXPECT_EQ(s.cursor, 4u);
  EXPECT_EQ(s.skipped, 0u);
  EXPECT_EQ(s.filtered, 0u);
  // Every first offer ends confirmed, dead, in flight or waiting for redelivery (none here).
  EXPECT_EQ(s.delivered - s.redelivered, s.confirmed + s.dead_lettered + s.in_flight);
}

TEST(Stats, PushInFlightDuringTheHandlerAndConfirmedAfter) {
  Broker b{SyncBroker()};
  b.create_topic("orders");
  SubscriptionStats during{};
  b.subscribe("orders", "s", [&](const Delivery&) {
    during = b.stats("orders", "s");
    return true;
  });
  b.publish("orders", "m");
  b.drain();
  EXPECT_EQ(during.in_flight, 1u);
  EXPECT_EQ(during.delivered, 1u);
  EXPECT_EQ(during.confirmed, 0u);
  const auto after = b.stats("orders", "s");
  EXPECT_EQ(after.in_flight, 0u);
  EXPECT_EQ(after.confirmed, 1u);
}

// ---- R7 failure reasons ----

TEST(DeadLetters, ReasonsNameTheFailure) {
  Broker b{SyncBroker()};
  b.create_topic("orders");
  b.subscribe(
      "orders", "rejects", [](const Delivery&) { return false; }, Push(1));
  b.subscribe(
      "orders", "throws", [](const Delivery&) -> bool { throw std::runtime_error("boom"); },
      Push(1));
  b.subscribe(
      "orders", "throws42", [](const Delivery&) -> bool { throw 42; }, Push(1));
  b.subscribe_pull("orders", "nacks", Pull(Millis{1000}, 1));
  b.subscribe_pull("orders", "expires", Pull(Millis{1000}, 1));
  b.publish("orders", "m");
  b.drain();
  ASSERT_EQ(b.poll("orders", "nacks", "w", 1, Time{}).size(), 1u);
  ASSERT_TRUE(b.nack(Receipt{"orders", "nacks", "w", 0}, Time{}));
  ASSERT_EQ(b.poll("orders", "expires", "w", 1, Time{}).size(), 1u);
  EXPECT_EQ(b.expire(at(Millis{1000})), (std::vector<Expired>{{"orders", "expires", 0, true}}));

  const std::vector<std::pair<std::string, std::string>> expected{
      {"rejects", "rejected"},
      {"throws", "exception: boom"},
      {"throws42", "unknown exception"},
      {"nacks", "nacked"},
      {"expires", "ack deadline expired"}};
  for (const auto& [name, reason] : expected) {
    const auto dead = b.dead_letters("orders", name);
    ASSERT_EQ(dead.size(), 1u) << name;
    EXPECT_EQ(dead[0].reason, reason) << name;
    EXPECT_EQ(dead[0].attempts, 1) << name;
    EXPECT_EQ(dead[0].message->payload(), "m") << name;
    EXPECT_EQ(b.stats("orders", name).dead_lettered, 1u) << name;
  }
}

TEST(DeadLetters, ZeroMaxDeliveriesMeansNoLimit) {
  Broker b{SyncBroker()};
  b.create_topic("orders");
  int offers = 0;
  b.subscribe(
      "orders", "s",
      [&](const Delivery&) {
        ++offers;
        return false;
      },
      Push(0));
  b.publish("orders", "m");
  for (int i = 0; i < 12; ++i) b.drain();
  EXPECT_EQ(offers, 12);
  EXPECT_TRUE(b.dead_letters("orders", "s").empty());
}

TEST(DeadLetters, AreListedInTheOrderTheyDied) {
  Broker b{SyncBroker()};
  b.create_topic("orders");
  b.subscribe_pull("orders", "p", Pull(Millis{1000}, 1));
  for (int i = 0; i < 3; ++i) b.publish("orders", "m" + std::to_string(i));
  ASSERT_EQ(b.poll("orders", "p", "w", 3, Time{}).size(), 3u);
  ASSERT_TRUE(b.nack(Receipt{"orders", "p", "w", 2}, Time{}));
  ASSERT_TRUE(b.nack(Receipt{"orders", "p", "w", 0}, Time{}));
  const auto dead = b.dead_letters("orders", "p");
  ASSERT_EQ(dead.size(), 2u);
  EXPECT_EQ(dead[0].message->offset(), 2u);
  EXPECT_EQ(dead[1].message->offset(), 0u);
}

// ---- R10 groups ----

class Groups : public ::testing::Test {
 protected:
  Broker b{SyncBroker()};
  Log log;
  void Join(const std::string& member) {
    PushOptions o = Push();
    o.group = "g";
    b.subscribe("orders", member, log.Confirming(member), o);
  }
  void SetUp() override { b.create_topic("orders"); }
};

TEST_F(Groups, OffersGoRoundRobinInMemberOrder) {
  Join("a");
  Join("b");
  Join("c");
  for (int i = 0; i < 7; ++i) b.publish("orders", "m");
  EXPECT_EQ(b.drain(), 7u);
  EXPECT_EQ(log.calls, (std::vector<std::string>{"a@0", "b@1", "c@2", "a@3", "b@4", "c@5", "a@6"}));
}

TEST_F(Groups, WhenTheLastServedMemberLeftTheFirstMemberIsNext) {
  Join("a");
  Join("b");
  Join("c");
  b.publish("orders", "m");
  b.publish("orders", "m");
  b.drain();  // a@0, b@1
  ASSERT_TRUE(b.unsubscribe("orders", "b"));
  b.publish("orders", "m");
  b.publish("orders", "m");
  b.drain();
  EXPECT_EQ(log.calls, (std::vector<std::string>{"a@0", "b@1", "a@2", "c@3"}));
}

TEST_F(Groups, MembersShareOneStateForStatsSeekAndDeadLetters) {
  Join("a");
  Join("b");
  for (int i = 0; i < 4; ++i) b.publish("orders", "m");
  b.drain();
  EXPECT_EQ(b.stats("orders", "a"), b.stats("orders", "b"));
  EXPECT_EQ(b.stats("orders", "a").confirmed, 4u);
  b.seek("orders", "b", 2);
  EXPECT_EQ(b.stats("orders", "a").cursor, 2u);
  log.calls.clear();
  b.drain();
  EXPECT_EQ(log.calls.size(), 2u) << "offsets 2 and 3 replayed once for the group";
}

TEST_F(Groups, GroupStateLivesWhileItHasMembers) {
  Join("a");
  b.publish("orders", "m");
  b.drain();
  ASSERT_TRUE(b.unsubscribe("orders", "a"));
  PushOptions other = Push(2, StartPosition::beginning());
  other.group = "g";
  EXPECT_NO_THROW(b.subscribe("orders", "a2", log.Confirming("a2"), other))
      << "the old state is gone, so other options are fine";
  EXPECT_EQ(b.stats("orders", "a2").confirmed, 0u);
}

TEST_F(Groups, AGroupGetsEachMessageOnceAlongsideOtherSubscriptions) {
  Join("a");
  Join("b");
  b.subscribe("orders", "solo", log.Confirming("solo"));
  b.publish("orders", "m");
  b.publish("orders", "m");
  b.drain();
  EXPECT_EQ(log.calls, (std::vector<std::string>{"a@0", "b@1", "solo@0", "solo@1"}));
}

// ---- R11 pull acceptance ----

class PullRules : public ::testing::Test {
 protected:
  Broker b{SyncBroker()};
  void SetUp() override {
    b.create_topic("orders");
    b.subscribe_pull("orders", "p", Pull(Millis{100}, 5));
    for (int i = 0; i < 3; ++i) b.publish("orders", "m");
  }
};

TEST_F(PullRules, SubscribePullWithEqualOptionsIsANoOp) {
  ASSERT_EQ(b.poll("orders", "p", "w", 1, Time{}).size(), 1u);
  const auto before = b.stats("orders", "p");
  EXPECT_NO_THROW(b.subscribe_pull("orders", "p", Pull(Millis{100}, 5)));
  EXPECT_EQ(b.stats("orders", "p"), before) << "the existing subscription is kept as it is";
  EXPECT_EQ(b.subscriptions("orders"), std::vector<std::string>{"p"});
  EXPECT_THROW(b.subscribe_pull("orders", "p", Pull(Millis{100}, 4)), OptionsMismatch);
  b.subscribe("orders", "push", [](const Delivery&) { return true; });
  EXPECT_THROW(b.subscribe_pull("orders", "push", Pull(Millis{100}, 5)), WrongKind);
}

TEST_F(PullRules, PollHandsOutDeadlinesAndNeverTheSameMessageTwice) {
  const auto w1 = b.poll("orders", "p", "w1", 2, at(Millis{10}));
  const auto w2 = b.poll("orders", "p", "w2", 2, at(Millis{20}));
  EXPECT_EQ(Offsets(w1), (std::vector<Offset>{0, 1}));
  EXPECT_EQ(Offsets(w2), std::vector<Offset>{2});
  EXPECT_EQ(w1[0].deadline, at(Millis{110}));
  EXPECT_EQ(w2[0].deadline, at(Millis{120}));
  EXPECT_TRUE(b.poll("orders", "p", "w3", 2, at(Millis{20})).empty());
}

TEST_F(PullRules, AckIsAcceptedOnlyFromTheHolderBeforeTheDeadline) {
  ASSERT_EQ(b.poll("orders", "p", "w1", 1, Time{}).size(), 1u);
  const auto before = b.stats("orders", "p");
  EXPECT_FALSE(b.ack(Receipt{"orders", "p", "w2", 0}, Time{})) << "not the holder";
  EXPECT_FALSE(b.ack(Receipt{"orders", "p", "w1", 0}, at(Millis{100})))
      << "now == deadline is late";
  EXPECT_FALSE(b.ack(Receipt{"orders", "p", "w1", 1}, Time{})) << "never handed out";
  EXPECT_FALSE(b.ack(Receipt{"orders", "p", "w1", 99}, Time{})) << "does not exist";
  EXPECT_FALSE(b.nack(Receipt{"orders", "p", "w2", 0}, Time{}));
  EXPECT_FALSE(b.extend(Receipt{"orders", "p", "w2", 0}, Time{}, Millis{10}));
  EXPECT_FALSE(b.extend(Receipt{"orders", "p", "w1", 0}, at(Millis{100}), Millis{10}));
  EXPECT_EQ(b.stats("orders", "p"), before) << "refused calls change nothing";
  EXPECT_TRUE(b.ack(Receipt{"orders", "p", "w1", 0}, at(Millis{99})));
  EXPECT_FALSE(b.ack(Receipt{"orders", "p", "w1", 0}, at(Millis{99}))) << "already confirmed";
}

TEST_F(PullRules, NackReturnsAtOnceAndTheNextPollOffersItFirstWithTheNextAttempt) {
  ASSERT_EQ(b.poll("orders", "p", "w1", 2, Time{}).size(), 2u);
  EXPECT_TRUE(b.nack(Receipt{"orders", "p", "w1", 1}, Time{}));
  EXPECT_FALSE(b.nack(Receipt{"orders", "p", "w1", 1}, Time{})) << "no longer held";
  const auto got = b.poll("orders", "p", "w2", 2, Time{});
  ASSERT_EQ(Offsets(got), (std::vector<Offset>{1, 2}));
  EXPECT_EQ(got[0].attempt, 2);
  EXPECT_EQ(got[1].attempt, 1);
}

TEST_F(PullRules, ExtendMovesTheDeadline) {
  ASSERT_EQ(b.poll("orders", "p", "w1", 1, Time{}).size(), 1u);
  EXPECT_TRUE(
      b.extend(Receipt{"orders", "p", "w1", 0}, at(Millis{50}), Millis{200}));  // deadline 250
  EXPECT_TRUE(b.expire(at(Millis{100})).empty());
  EXPECT_TRUE(b.ack(Receipt{"orders", "p", "w1", 0}, at(Millis{249})));
}

TEST_F(PullRules, ExpireReturnsLateMessagesToTheFrontInOffsetOrder) {
  ASSERT_EQ(b.poll("orders", "p", "w1", 2, Time{}).size(), 2u);
  EXPECT_EQ(b.expire(at(Millis{99})), std::vector<Expired>{});
  EXPECT_EQ(b.expire(at(Millis{100})),
            (std::vector<Expired>{{"orders", "p", 0, false}, {"orders", "p", 1, false}}));
  EXPECT_EQ(Offsets(b.poll("orders", "p", "w2", 3, at(Millis{100}))),
            (std::vector<Offset>{0, 1, 2}));
}

TEST_F(PullRules, ExpireWalksTopicsAndSubscriptionsInCreationOrder) {
  b.create_topic("audit");
  b.subscribe_pull("audit", "a", Pull(Millis{100}));
  b.subscribe_pull("orders", "q", Pull(Millis{100}, 5, {}, StartPosition::beginning()));
  b.publish("audit", "x");
  ASSERT_EQ(b.poll("audit", "a", "w", 1, Time{}).size(), 1u);
  ASSERT_EQ(b.poll("orders", "q", "w", 1, Time{}).size(), 1u);
  ASSERT_EQ(b.poll("orders", "p", "w", 1, Time{}).size(), 1u);
  EXPECT_EQ(b.expire(at(Millis{100})),
            (std::vector<Expired>{
                {"orders", "p", 0, false}, {"orders", "q", 0, false}, {"audit", "a", 0, false}}));
}

TEST_F(PullRules, SeekForgetsHeldMessagesAndRefusesTheirLateAcks) {
  ASSERT_EQ(b.poll("orders", "p", "w1", 2, Time{}).size(), 2u);
  b.seek("orders", "p", 0);
  EXPECT_FALSE(b.ack(Receipt{"orders", "p", "w1", 0}, Time{})) << "forgotten by the seek";
  const auto s = b.stats("orders", "p");
  EXPECT_EQ(s.in_flight, 0u);
  EXPECT_EQ(s.backlog, 3u);
  EXPECT_EQ(s.delivered, 2u) << "counters are kept";
  const auto again = b.poll("orders", "p", "w1", 1, Time{});
  ASSERT_EQ(again.size(), 1u);
  EXPECT_EQ(again[0].attempt, 1) << "attempts are forgotten too";
}

// ---- exactly-once in effect (broker/idempotent.h) ----

TEST(Idempotent, RepeatsOfAnAppliedOffsetAreConfirmedWithoutCallingTheInnerHandler) {
  Broker b{SyncBroker()};
  b.create_topic("orders");
  std::vector<Offset> applied;
  b.subscribe("orders", "billing", idempotent([&](const Delivery& d) {
                applied.push_back(d.message->offset());
                return true;
              }));
  for (int i = 0; i < 3; ++i) b.publish("orders", "m");
  EXPECT_EQ(b.drain(), 3u);
  b.seek("orders", "billing", 0);  // the broker replays 0..2 (at-least-once)

  EXPECT_EQ(b.drain(), 3u) << "the repeats are confirmed";

  EXPECT_EQ(applied, (std::vector<Offset>{0, 1, 2})) << "but applied only once";
  EXPECT_EQ(b.stats("orders", "billing").delivered, 6u) << "the broker did offer them twice";
}

TEST(Idempotent, AFailedOfferIsNotRememberedAsApplied) {
  Broker b{SyncBroker()};
  b.create_topic("orders");
  std::vector<std::pair<Offset, int>> calls;
  b.subscribe("orders", "billing", idempotent([&](const Delivery& d) {
                calls.emplace_back(d.message->offset(), d.attempt);
                if (d.attempt == 1) throw std::runtime_error("not applied");
                return true;
              }));
  b.publish("orders", "m");
  b.drain();
  b.drain();
  EXPECT_EQ(calls, (std::vector<std::pair<Offset, int>>{{0, 1}, {0, 2}}));
  EXPECT_EQ(b.stats("orders", "billing").confirmed, 1u);
  const auto dead = b.dead_letters("orders", "billing");
  EXPECT_TRUE(dead.empty());
}

TEST(Idempotent, KeepsOneMarkPerTopic) {
  Broker b{SyncBroker()};
  b.create_topic("a");
  b.create_topic("b");
  std::vector<std::string> applied;
  const Handler shared = idempotent([&](const Delivery& d) {
    applied.push_back(*d.topic + "@" + std::to_string(d.message->offset()));
    return true;
  });
  b.subscribe("a", "s", shared);
  b.subscribe("b", "s", shared);
  b.publish("a", "m");
  b.publish("a", "m");
  b.publish("b", "m");
  b.drain();
  EXPECT_EQ(applied, (std::vector<std::string>{"a@0", "a@1", "b@0"}))
      << "offset 0 of topic b is not a repeat of offset 0 of topic a";
}

}  // namespace
}  // namespace broker
