// Model unit tests: topics, publish, retention and errors (R1, R2, R3, R14).
#include <gtest/gtest.h>

#include "code_of.h"
#include "model/model.h"

namespace model {
namespace {

TEST(ModelTopicsTest, R1CreateDeleteAndOrder) {
  Model m;
  EXPECT_EQ(code_of([&] { m.create_topic(""); }), ErrorCode::kInvalidArgument);
  m.create_topic("b");
  m.create_topic("a");
  EXPECT_EQ(code_of([&] { m.create_topic("a"); }), ErrorCode::kDuplicateTopic);
  EXPECT_EQ(m.topics(), (std::vector<std::string>{"b", "a"}));
  EXPECT_EQ(code_of([&] { m.delete_topic("x"); }), ErrorCode::kUnknownTopic);
  m.subscribe_pull("a", "p", {});
  EXPECT_EQ(code_of([&] { m.delete_topic("a"); }), ErrorCode::kTopicInUse);
  EXPECT_TRUE(m.unsubscribe("a", "p"));
  m.delete_topic("a");
  EXPECT_EQ(m.topics(), (std::vector<std::string>{"b"}));
}

TEST(ModelTopicsTest, R2PublishReturnsNextOffsetAndRunsNoHandler) {
  Model m;
  m.create_topic("t");
  m.subscribe("t", "s", {});
  EXPECT_EQ(m.publish("t", "a"), 0u);
  EXPECT_EQ(m.publish("t", "b"), 1u);
  EXPECT_TRUE(m.take_calls().empty());
  EXPECT_EQ(code_of([&] { m.publish("x", "a"); }), ErrorCode::kUnknownTopic);
  EXPECT_EQ(m.end_offset("t"), 2u);
}

TEST(ModelTopicsTest, R3RetentionByMessagesKeepsNewestN) {
  Model m;
  m.create_topic("t", 2);
  for (int i = 0; i < 5; ++i) m.publish("t", "p");
  EXPECT_EQ(m.oldest_offset("t"), 3u);
  EXPECT_EQ(m.end_offset("t"), 5u);
}

TEST(ModelTopicsTest, R3RetentionByBytesAlwaysKeepsNewest) {
  Model m;
  m.create_topic("t", 0, 4);
  m.publish("t", "ab");
  m.publish("t", "cd");
  EXPECT_EQ(m.oldest_offset("t"), 0u);
  m.publish("t", "toolong");
  EXPECT_EQ(m.oldest_offset("t"), 2u);
}

TEST(ModelTopicsTest, R3CatchUpCountsSkippedAndHeldSurvive) {
  Model m;
  m.create_topic("t", 1);
  m.subscribe_pull("t", "p", {.start = {Start::Kind::kBeginning, 0}});
  m.publish("t", "a");
  ASSERT_EQ(m.poll("t", "p", "w", 0, 1).size(), 1u);  // holds 0
  m.publish("t", "b");
  m.publish("t", "c");  // keeps only 2
  Stats s = m.stats("t", "p");
  EXPECT_EQ(s.skipped, 1u);  // offset 1
  EXPECT_EQ(s.cursor, 2u);
  EXPECT_EQ(s.committed, 0u);  // held 0 is not done
  EXPECT_EQ(s.in_flight, 1u);
  EXPECT_TRUE(m.nack("t", "p", 0, "w", 0));  // the holder kept it alive
  s = m.stats("t", "p");
  EXPECT_EQ(s.skipped, 2u);  // returned below the oldest: skipped
  EXPECT_EQ(s.committed, 2u);
}

TEST(ModelTopicsTest, R14FailedCallsChangeNothing) {
  Model m;
  m.create_topic("t");
  m.subscribe_pull("t", "p", {});
  m.publish("t", "a");
  const Stats before = m.stats("t", "p");
  EXPECT_EQ(code_of([&] { m.seek("t", "p", 9); }), ErrorCode::kOffsetOutOfRange);
  EXPECT_EQ(code_of([&] { m.poll("t", "p", "w", 0, 0); }), ErrorCode::kInvalidArgument);
  EXPECT_EQ(code_of([&] { m.subscribe_pull("t", "p", {.ack_timeout = 1}); }),
            ErrorCode::kOptionsMismatch);
  EXPECT_EQ(m.stats("t", "p"), before);
}

TEST(ModelTopicsTest, R14ErrorPrecedenceArgumentsThenTopicThenName) {
  Model m;
  m.create_topic("t");
  EXPECT_EQ(code_of([&] { m.subscribe("x", "", {}); }), ErrorCode::kInvalidArgument);
  EXPECT_EQ(code_of([&] { m.poll("x", "p", "", 0, 1); }), ErrorCode::kInvalidArgument);
  EXPECT_EQ(code_of([&] { m.poll("x", "p", "w", 0, 1); }), ErrorCode::kUnknownTopic);
  EXPECT_EQ(code_of([&] { m.poll("t", "p", "w", 0, 1); }), ErrorCode::kUnknownSubscription);
  EXPECT_EQ(code_of([&] { m.extend("x", "p", 0, "w", 0, 0); }), ErrorCode::kInvalidArgument);
}

// Issue 13, finding 7: poll_wait reports what poll reports, in poll's order.
TEST(ModelTopicsTest, R14PollWaitChecksArgumentsFirstLikePoll) {
  Model m;
  m.create_topic("t");
  m.subscribe("t", "push", {});
  EXPECT_EQ(code_of([&] { m.poll_wait("nope", "p", "", 1, 0); }), ErrorCode::kInvalidArgument);
  EXPECT_EQ(code_of([&] { m.poll_wait("nope", "p", "w", 0, 0); }), ErrorCode::kInvalidArgument);
  EXPECT_EQ(code_of([&] { m.poll_wait("nope", "p", "w", 1, 0); }), ErrorCode::kUnknownTopic);
  EXPECT_EQ(code_of([&] { m.poll_wait("t", "p", "w", 1, 0); }), ErrorCode::kUnknownSubscription);
  EXPECT_EQ(code_of([&] { m.poll_wait("t", "push", "w", 1, 0); }), ErrorCode::kWrongKind);
}

// R29: a partitioned topic is its partitions, each a topic; it routes and holds nothing.
TEST(ModelTopicsTest, R29PartitionsAreTopicsAndThePartitionedTopicRoutes) {
  Model m;
  EXPECT_EQ(code_of([&] { m.create_topic("t", 0, 0, 0); }), ErrorCode::kInvalidArgument);
  EXPECT_EQ(code_of([&] { m.create_topic("t", 0, 0, kMaxPartitions + 1); }),
            ErrorCode::kInvalidArgument);
  m.create_topic("t-2");
  EXPECT_EQ(code_of([&] { m.create_topic("t", 0, 0, 3); }), ErrorCode::kDuplicateTopic);
  EXPECT_EQ(m.topics(), (std::vector<std::string>{"t-2"}));
  m.create_topic("t", 0, 0, 2);
  EXPECT_EQ(m.topics(), (std::vector<std::string>{"t-2", "t", "t-0", "t-1"}));
  EXPECT_EQ(m.partitions("t"), 2u);
  EXPECT_EQ(m.partitions("t-0"), 1u);
  EXPECT_EQ(m.send("t", "a"), (Placement{0, 0}));  // no key: in turn from partition 0
  EXPECT_EQ(m.send("t", "b"), (Placement{1, 0}));
  EXPECT_EQ(m.send("t", "c"), (Placement{0, 1}));
  EXPECT_EQ(m.publish_to("t", 1, "d", {}, "order-0"), 1u);
  EXPECT_EQ(code_of([&] { m.publish_to("t", 2, "e"); }), ErrorCode::kPartitionOutOfRange);
  EXPECT_EQ(code_of([&] { m.publish_to("t-2", 1, "e"); }), ErrorCode::kPartitionOutOfRange);
  EXPECT_EQ(m.end_offset("t-0") + m.end_offset("t-1"), 4u);
  EXPECT_EQ(m.end_offset("t"), 4u) << "R29: a partitioned topic's end is its total";
  EXPECT_EQ(code_of([&] { (void)m.oldest_offset("t"); }), ErrorCode::kWrongKind);
  EXPECT_EQ(code_of([&] { m.subscribe("t", "s", {}); }), ErrorCode::kWrongKind);
  EXPECT_EQ(code_of([&] { m.delete_topic("t-0"); }), ErrorCode::kWrongKind);
  m.subscribe_pull("t-1", "p", {});
  EXPECT_EQ(code_of([&] { m.delete_topic("t"); }), ErrorCode::kTopicInUse);
  EXPECT_TRUE(m.unsubscribe("t-1", "p"));
  m.delete_topic("t");
  EXPECT_EQ(m.topics(), (std::vector<std::string>{"t-2"}));
}

// R29: seed 003's table, and murmur2 as Kafka computes it (sign bit cleared, not abs).
TEST(ModelTopicsTest, R29KeysGoWhereTheirPartitionerSays) {
  Model m;
  m.create_topic("java", 0, 0, 2, Partitioner::kJavaHashCode);
  std::vector<std::uint32_t> parts;
  for (int i = 0; i < 4; ++i)
    parts.push_back(m.send("java", "m", {}, "order-" + std::to_string(i)).partition);
  EXPECT_EQ(parts, (std::vector<std::uint32_t>{1, 0, 1, 0}));
  m.create_topic("java3", 0, 0, 3, Partitioner::kJavaHashCode);
  EXPECT_EQ(m.send("java3", "m", {}, "polygenelubricants").partition, (1u << 31) % 3);
  m.create_topic("kafka", 0, 0, 1000);
  EXPECT_EQ(m.send("kafka", "m", {}, "1").partition, 154038159u % 1000);  // murmur2 -1993445489
  EXPECT_EQ(m.send("kafka", "m", {}, "21").partition, (0x80000000u - 973932308u) % 1000);
}

// R29, R20: the turn of keyless publishes is not saved.
TEST(ModelTopicsTest, R29ARestartStartsTheTurnAgain) {
  Model m;
  m.create_topic("t", 0, 0, 3);
  m.send("t", "a");
  m.send("t", "b");
  m.restart();
  EXPECT_EQ(m.send("t", "c").partition, 0u);
}

}  // namespace
}  // namespace model
