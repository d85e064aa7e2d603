// Model unit tests: pull subscriptions and stats (R11, R13), following seed 004.
#include <gtest/gtest.h>

#include "model/model.h"

namespace model {
namespace {

class ModelPullTest : public ::testing::Test {
 protected:
  void SetUp() override {
    m.create_topic("orders");
    m.subscribe_pull(
        "orders", "billing",
        {.ack_timeout = 30, .max_deliveries = 2, .start = {Start::Kind::kBeginning, 0}});
    m.subscribe_pull("orders", "email", {.header_filter = {{"type", "created"}}});
    m.publish("orders", "m1", {{"type", "created"}});
    m.publish("orders", "m2", {{"type", "created"}});
    m.publish("orders", "m3", {{"type", "paid"}});
  }
  Model m;
};

TEST_F(ModelPullTest, R11SubscribePullIdempotentAndValidated) {
  m.subscribe_pull("orders", "billing",
                   {.ack_timeout = 30, .max_deliveries = 2, .start = {Start::Kind::kBeginning, 0}});
  EXPECT_THROW(m.subscribe_pull("orders", "billing", {}), Error);
  EXPECT_THROW(m.subscribe_pull("orders", "x", {.ack_timeout = 0}), Error);
  m.subscribe("orders", "push", {});
  try {
    m.subscribe_pull("orders", "push", {});
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kWrongKind);
  }
  EXPECT_THROW(m.ack("orders", "push", 0, "w", 0), Error);
}

TEST_F(ModelPullTest, R11Seed004Trace) {
  EXPECT_EQ(m.poll("orders", "billing", "w1", 0, 1), (std::vector<Received>{{0, "m1", 1, 30}}));
  EXPECT_EQ(m.poll("orders", "billing", "w2", 0, 1), (std::vector<Received>{{1, "m2", 1, 30}}));
  EXPECT_TRUE(m.ack("orders", "billing", 0, "w1", 0));
  EXPECT_FALSE(m.ack("orders", "billing", 0, "w1", 0));
  EXPECT_EQ(m.expire(30), (std::vector<Expired>{{"orders", "billing", 1, false}}));
  EXPECT_EQ(m.poll("orders", "billing", "w1", 30, 2),
            (std::vector<Received>{{1, "m2", 2, 60}, {2, "m3", 1, 60}}));
  EXPECT_FALSE(m.ack("orders", "billing", 1, "w2", 30));
  EXPECT_EQ(m.expire(60), (std::vector<Expired>{{"orders", "billing", 1, true},
                                                {"orders", "billing", 2, false}}));
  EXPECT_EQ(m.dead_letters("orders", "billing"),
            (std::vector<DeadLetter>{{1, "m2", 2, "ack deadline expired"}}));
  EXPECT_EQ(m.stats("orders", "email").backlog, 2u);
}

TEST_F(ModelPullTest, R11AnswersOnlyFromHolderBeforeDeadline) {
  m.poll("orders", "billing", "w1", 0, 1);
  EXPECT_FALSE(m.ack("orders", "billing", 0, "w2", 0));
  EXPECT_FALSE(m.ack("orders", "billing", 0, "w1", 30));  // now == deadline: too late
  EXPECT_TRUE(m.extend("orders", "billing", 0, "w1", 29, 10));
  EXPECT_TRUE(m.ack("orders", "billing", 0, "w1", 38));
  EXPECT_THROW(m.ack("orders", "nobody", 0, "w1", 0), Error);  // bad input, not "refused"
  EXPECT_THROW(m.extend("orders", "billing", 0, "w1", 0, 0), Error);
  EXPECT_THROW(m.poll("orders", "billing", "", 0, 1), Error);
}

TEST_F(ModelPullTest, R11NackReturnsToFrontLowestFirst) {
  m.poll("orders", "billing", "w", 0, 3);
  EXPECT_TRUE(m.nack("orders", "billing", 2, "w", 0));
  EXPECT_TRUE(m.nack("orders", "billing", 1, "w", 0));
  const std::vector<Received> again = m.poll("orders", "billing", "w", 0, 1);
  ASSERT_EQ(again.size(), 1u);
  EXPECT_EQ(again[0].offset, 1u);
  EXPECT_EQ(again[0].attempt, 2);
}

TEST_F(ModelPullTest, R13StatsAddUp) {
  m.poll("orders", "billing", "w", 0, 3);
  m.ack("orders", "billing", 0, "w", 0);
  m.nack("orders", "billing", 1, "w", 0);
  const Stats s = m.stats("orders", "billing");
  EXPECT_EQ(s.next_offset, 3u);
  EXPECT_EQ(s.backlog, 1u);
  EXPECT_EQ(s.in_flight, 1u);
  EXPECT_EQ(s.delivered, s.confirmed + s.dead_lettered + s.in_flight + 1);  // 1 returned
}

}  // namespace
}  // namespace model
