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

}  // namespace
}  // namespace model
