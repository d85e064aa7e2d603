// What an answer to a held message says (SPEC R11, R32) through the public API: ack, nack,
// term and extend return an AckResult that is true exactly when the answer took effect, and
// otherwise names why not, in AckOutcome's order; a refused answer changes nothing.
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "broker/broker.h"
#include "test_support.h"

namespace broker {
namespace {

constexpr Millis kAckTimeout{100};

Time time_at(std::int64_t ms) { return at(Millis{ms}); }

// A synchronous broker on a manual clock at 0 with topic "t" and pull subscription "s"
// (ack timeout 100 ms, from the beginning), holding `n` published messages.
class AckOutcomes : public ::testing::Test {
 protected:
  void SetUp() override {
    b_.create_topic("t");
    PullOptions o;
    o.ack_timeout = kAckTimeout;
    o.start = StartPosition::beginning();
    b_.subscribe_pull("t", "s", o);
  }
  void publish(int n) {
    for (int i = 0; i < n; ++i) b_.publish("t", "m" + std::to_string(i));
  }
  std::vector<Received> poll(const std::string& member, std::size_t max, std::int64_t now = 0) {
    return b_.poll("t", "s", member, max, time_at(now));
  }
  Receipt receipt(Offset offset, const std::string& member) {
    return Receipt{"t", "s", member, offset};
  }

  Broker b_{testing::SyncBroker()};
};

TEST_F(AckOutcomes, AnAnswerFromTheHolderBeforeItsDeadlineIsAccepted) {
  publish(1);
  const auto got = poll("w", 1);
  ASSERT_EQ(got.size(), 1u);
  const AckResult r = b_.ack(got[0].receipt, time_at(kAckTimeout.count() - 1));
  EXPECT_TRUE(r);
  EXPECT_EQ(r.outcome, AckOutcome::kAccepted);
  EXPECT_EQ(b_.stats("t", "s").confirmed, 1u);
}

TEST_F(AckOutcomes, AnAnswerAtOrAfterTheDeadlineIsLateUntilExpireTakesTheMessageBack) {
  publish(1);
  const auto got = poll("w", 1);
  ASSERT_EQ(got.size(), 1u);
  const Time deadline = time_at(kAckTimeout.count());
  for (const AckResult r :
       {b_.ack(got[0].receipt, deadline), b_.nack(got[0].receipt, deadline),
        b_.term(got[0].receipt, deadline), b_.extend(got[0].receipt, deadline, Millis{50})}) {
    EXPECT_FALSE(r);
    EXPECT_EQ(r.outcome, AckOutcome::kLate);
  }
  EXPECT_EQ(b_.stats("t", "s").in_flight, 1u);  // nothing changed
  ASSERT_EQ(b_.expire(deadline).size(), 1u);
  EXPECT_EQ(b_.ack(got[0].receipt, deadline).outcome, AckOutcome::kAlreadySettled);
}

TEST_F(AckOutcomes, AnotherMembersReceiptIsNotTheHolders) {
  publish(1);
  const auto got = poll("w1", 1);
  ASSERT_EQ(got.size(), 1u);
  const AckResult r = b_.ack(receipt(got[0].receipt.offset, "w2"), time_at(0));
  EXPECT_FALSE(r);
  EXPECT_EQ(r.outcome, AckOutcome::kNotHolder);
  EXPECT_TRUE(b_.ack(got[0].receipt, time_at(0)));  // the holder's still counts
}

TEST_F(AckOutcomes, ASecondAnswerFindsTheMessageAlreadySettled) {
  publish(2);
  const auto got = poll("w", 2);
  ASSERT_EQ(got.size(), 2u);
  ASSERT_TRUE(b_.ack(got[0].receipt, time_at(0)));
  ASSERT_TRUE(b_.nack(got[1].receipt, time_at(0)));
  EXPECT_EQ(b_.ack(got[0].receipt, time_at(0)).outcome, AckOutcome::kAlreadySettled);
  EXPECT_EQ(b_.term(got[0].receipt, time_at(0)).outcome, AckOutcome::kAlreadySettled);
  EXPECT_EQ(b_.ack(got[1].receipt, time_at(0)).outcome,
            AckOutcome::kAlreadySettled);  // handed back
  EXPECT_EQ(b_.stats("t", "s").confirmed, 1u);
}

TEST_F(AckOutcomes, AnOffsetNeverHandedOutIsUnknown) {
  publish(2);
  ASSERT_EQ(poll("w", 1).size(), 1u);
  EXPECT_EQ(b_.ack(receipt(1, "w"), time_at(0)).outcome, AckOutcome::kUnknownOffset);  // published
  EXPECT_EQ(b_.ack(receipt(7, "w"), time_at(0)).outcome, AckOutcome::kUnknownOffset);  // not yet
  b_.seek("t", "s", 0);  // forgets what it handed out
  EXPECT_EQ(b_.ack(receipt(0, "w"), time_at(0)).outcome, AckOutcome::kUnknownOffset);
}

TEST(AckOutcomesInGroups, AReceiptOfAPartitionThatMovedIsOfAStaleGeneration) {
  Broker b(testing::SyncBroker());
  TopicOptions t;
  t.partitions = 2;
  b.create_topic("orders", t);
  GroupOptions o;
  o.assignor = Assignor::kCooperativeSticky;
  o.pull.ack_timeout = Millis{1000};
  o.pull.start = StartPosition::beginning();
  b.join_group("orders", "billing", "A", o);
  b.publish_to("orders", 0, "m0");
  b.publish_to("orders", 1, "m1");
  const auto got = b.poll_group("orders", "billing", "A", 2, Time{});
  ASSERT_EQ(got.size(), 2u);
  ASSERT_EQ(b.join_group("orders", "billing", "B", o), (Membership{2, {1}}));  // p1 moves
  const AckResult moved = b.ack(got[1].receipt, Time{});
  EXPECT_FALSE(moved);
  EXPECT_EQ(moved.outcome, AckOutcome::kStaleGeneration);
  EXPECT_TRUE(b.ack(got[0].receipt, Time{}));  // p0 stayed with A
}

TEST(AckOutcomesPrint, AResultPrintsItsOutcomeByName) {
  std::ostringstream out;
  out << AckResult{AckOutcome::kNotHolder} << ' ' << AckOutcome::kAlreadySettled;
  EXPECT_EQ(out.str(), "AckResult{outcome=not_holder} already_settled");
  EXPECT_EQ(to_string(AckOutcome::kStaleGeneration), "stale_generation");
}

}  // namespace
}  // namespace broker
