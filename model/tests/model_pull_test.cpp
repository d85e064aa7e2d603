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

TEST_F(ModelPullTest, R11PollWaitPollsAtTheClockAndWaitsForNothing) {
  m.advance(7);
  EXPECT_EQ(m.poll_wait("orders", "billing", "w1", 2, 1),
            (std::vector<Received>{{0, "m1", 1, 37}, {1, "m2", 1, 37}}));
  EXPECT_EQ(m.poll_wait("orders", "billing", "w1", 5, 1000),
            (std::vector<Received>{{2, "m3", 1, 37}}));
  EXPECT_TRUE(m.poll_wait("orders", "billing", "w1", 1, 1000).empty());
  EXPECT_EQ(m.now(), 7);  // the model's clock did not move while it "waited"
}

TEST_F(ModelPullTest, R15WaitsDoNotConsiderPullSubscriptions) {
  EXPECT_TRUE(m.wait_delivered(0));  // three messages wait on pull subscriptions only
  EXPECT_TRUE(m.wait_idle(0));
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
  EXPECT_EQ(
      m.dead_letters("orders", "billing"),
      (std::vector<DeadLetter>{
          {"orders", "billing", 1, "m2", 2, "ack deadline expired", 60, {{"type", "created"}}}}));
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
  EXPECT_EQ(s.cursor, 3u);
  EXPECT_EQ(s.committed, 1u);  // 1 returned, 2 held
  EXPECT_EQ(s.backlog, 1u);
  EXPECT_EQ(s.in_flight, 1u);
  EXPECT_EQ(s.delivered, s.confirmed + s.dead_lettered + s.in_flight + 1);  // 1 returned
}

TEST_F(ModelPullTest, R13CommittedIsTheLowestHeldOrReturnedOffset) {
  m.poll("orders", "billing", "w", 0, 3);
  EXPECT_EQ(m.stats("orders", "billing").committed, 0u);  // all three held
  m.ack("orders", "billing", 1, "w", 0);
  EXPECT_EQ(m.stats("orders", "billing").committed, 0u);  // 0 still held: no gap closes
  m.ack("orders", "billing", 0, "w", 0);
  EXPECT_EQ(m.stats("orders", "billing").committed, 2u);
  m.nack("orders", "billing", 2, "w", 0);
  EXPECT_EQ(m.stats("orders", "billing").committed, 2u);  // returned: not done yet
  m.poll("orders", "billing", "w", 0, 1);
  m.nack("orders", "billing", 2, "w", 5);  // second of two deliveries: dead
  const Stats s = m.stats("orders", "billing");
  EXPECT_EQ(s.committed, 3u);
  EXPECT_EQ(s.committed, s.cursor);
  // email passed over m3 (filtered) and holds nothing: everything below the cursor is done
  m.poll("orders", "email", "w", 0, 5);
  m.ack("orders", "email", 0, "w", 0);
  EXPECT_EQ(m.stats("orders", "email").committed, 1u);
  m.ack("orders", "email", 1, "w", 0);
  EXPECT_EQ(m.stats("orders", "email").committed, 3u);
}

TEST_F(ModelPullTest, R7PullDeadLettersCarryTopicSubscriptionAndTheCallsNow) {
  m.poll("orders", "billing", "w", 100, 2);
  m.nack("orders", "billing", 0, "w", 110);
  m.poll("orders", "billing", "w", 120, 1);  // offset 0 again, attempt 2
  EXPECT_TRUE(m.nack("orders", "billing", 0, "w", 125));
  EXPECT_EQ(m.expire(500).size(), 1u);  // offset 1: back (1 of 2)
  m.poll("orders", "billing", "w", 600, 1);
  EXPECT_EQ(m.expire(700).size(), 1u);  // offset 1: dead at the expire's now
  EXPECT_EQ(
      m.dead_letters("orders", "billing"),
      (std::vector<DeadLetter>{
          {"orders", "billing", 0, "m1", 2, "nacked", 125, {{"type", "created"}}},
          {"orders", "billing", 1, "m2", 2, "ack deadline expired", 700, {{"type", "created"}}}}));
}

TEST_F(ModelPullTest, R22PollStopsAtMaxInFlightAcrossMembersAndRedeliveries) {
  m.subscribe_pull("orders", "bounded",
                   {.ack_timeout = 30, .start = {Start::Kind::kBeginning, 0}, .max_in_flight = 2});
  EXPECT_EQ(m.poll("orders", "bounded", "w1", 0, 5).size(), 2u);  // 0 and 1: the bound
  EXPECT_TRUE(m.poll("orders", "bounded", "w2", 0, 5).empty());   // every member's count
  EXPECT_EQ(m.stats("orders", "bounded").backlog, 1u);            // m3 waits, counted
  EXPECT_TRUE(m.nack("orders", "bounded", 0, "w1", 1));           // a place frees; 0 is back first
  const std::vector<Received> again = m.poll("orders", "bounded", "w2", 2, 5);
  ASSERT_EQ(again.size(), 1u);  // the redelivery takes the one free place: no bypass
  EXPECT_EQ(again[0].offset, 0u);
  EXPECT_EQ(again[0].attempt, 2);
  EXPECT_EQ(m.expire(100).size(), 2u);  // both back: two free places
  EXPECT_EQ(m.poll("orders", "bounded", "w1", 100, 5).size(), 2u);
}

TEST_F(ModelPullTest, R22BoundIsAnOptionCheckedAndComparedLikeTheOthers) {
  try {
    m.subscribe_pull("orders", "x", {.max_in_flight = kMaxInFlight + 1});
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
  }
  EXPECT_TRUE(m.subscriptions("orders") == (std::vector<std::string>{"billing", "email"}));
  m.subscribe_pull("orders", "x", {.max_in_flight = kMaxInFlight});
  try {
    m.subscribe_pull("orders", "x", {.max_in_flight = 1});
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kOptionsMismatch);
  }
}

TEST_F(ModelPullTest, R23TermDeadLettersAtOnceWhateverMaxDeliveries) {
  m.subscribe_pull("orders", "unlimited",
                   {.ack_timeout = 30, .max_deliveries = 0, .start = {Start::Kind::kBeginning, 0}});
  m.poll("orders", "unlimited", "w", 10, 2);
  EXPECT_FALSE(m.term("orders", "unlimited", 0, "other", 11));  // not its holder
  EXPECT_FALSE(m.term("orders", "unlimited", 1, "w", 40));      // at the deadline: late
  EXPECT_TRUE(m.term("orders", "unlimited", 0, "w", 12));
  EXPECT_FALSE(m.term("orders", "unlimited", 0, "w", 13));  // already dead
  EXPECT_EQ(m.dead_letters("orders", "unlimited"),
            (std::vector<DeadLetter>{
                {"orders", "unlimited", 0, "m1", 1, "terminated", 12, {{"type", "created"}}}}));
  // Offset 1 was still held at 40 (the term came too late): it expires back, 0 never does.
  const std::vector<Expired> back = m.expire(40);
  ASSERT_EQ(back.size(), 1u);
  EXPECT_EQ(back[0].offset, 1u);
  const std::vector<Received> next = m.poll("orders", "unlimited", "w", 41, 5);
  ASSERT_EQ(next.size(), 2u);
  EXPECT_EQ(next[0].offset, 1u);
  EXPECT_EQ(next[1].offset, 2u);
  const Stats s = m.stats("orders", "unlimited");
  EXPECT_EQ(s.dead_lettered, 1u);
  EXPECT_EQ(s.committed, 1u);
}

TEST_F(ModelPullTest, R24ADelayedNackWaitsWithoutHoldingNewerMessagesBack) {
  m.poll("orders", "billing", "w", 0, 1);
  EXPECT_THROW(m.nack("orders", "billing", 0, "w", 1, -1), Error);  // bad delay: nothing changed
  EXPECT_TRUE(m.nack("orders", "billing", 0, "w", 1, 10));
  const std::vector<Received> early = m.poll("orders", "billing", "w", 1, 5);
  ASSERT_EQ(early.size(), 2u);  // 1 and 2; 0 waits until t=11
  EXPECT_EQ(early[0].offset, 1u);
  EXPECT_EQ(m.stats("orders", "billing").committed, 0u);  // the waiting one keeps it there
  EXPECT_TRUE(m.poll("orders", "billing", "w", 10, 5).empty());
  const std::vector<Received> due = m.poll("orders", "billing", "w", 11, 5);
  ASSERT_EQ(due.size(), 1u);
  EXPECT_EQ(due[0].offset, 0u);
  EXPECT_EQ(due[0].attempt, 2);
}

TEST_F(ModelPullTest, R24TheBackoffListWaitsPerAttemptAfterNacksAndExpiries) {
  m.subscribe_pull("orders", "slow",
                   {.ack_timeout = 5,
                    .max_deliveries = 0,
                    .start = {Start::Kind::kBeginning, 0},
                    .backoff = {10, 100}});
  m.poll("orders", "slow", "w", 0, 1);
  EXPECT_TRUE(m.nack("orders", "slow", 0, "w", 0));  // attempt 1 failed: waits 10
  EXPECT_EQ(m.poll("orders", "slow", "w", 9, 1)[0].offset, 1u);
  EXPECT_EQ(m.poll("orders", "slow", "w", 10, 1)[0].offset, 0u);  // attempt 2, due at 15
  m.expire(15);  // offset 0's attempt 2 expired: waits 100 (the last entry from here on);
                 // offset 1 (deadline 14) expired too: its attempt 1 waits 10
  const std::vector<Received> at25 = m.poll("orders", "slow", "w", 25, 5);
  ASSERT_EQ(at25.size(), 2u);
  EXPECT_EQ(at25[0].offset, 1u);                         // back at 25
  EXPECT_EQ(at25[1].offset, 2u);                         // new
  EXPECT_TRUE(m.nack("orders", "slow", 2, "w", 26, 0));  // an explicit delay beats the list
  EXPECT_EQ(m.poll("orders", "slow", "w", 26, 5)[0].offset, 2u);
  EXPECT_TRUE(m.poll("orders", "slow", "w", 114, 1).empty());
  EXPECT_EQ(m.poll("orders", "slow", "w", 115, 1)[0].offset, 0u);
  EXPECT_THROW(m.subscribe_pull("orders", "bad", {.backoff = {5, -1}}), Error);
  EXPECT_THROW(m.subscribe_pull("orders", "bad", {.backoff = std::vector<Millis>(33, 1)}), Error);
}

PullOptions ordered_from_start() {
  PullOptions o;
  o.start = {Start::Kind::kBeginning, 0};
  o.ordered_by_key = true;
  return o;
}

// R31: one message per key held; the key's next waits; other keys and keyless go on.
TEST_F(ModelPullTest, R31OrderedHandsOutOneMessagePerKey) {
  Model k;  // a fresh model: the fixture's topics play no part
  k.create_topic("t");
  PullOptions o = ordered_from_start();
  k.subscribe_pull("t", "s", o);
  k.publish("t", "a1", {}, "a");
  k.publish("t", "a2", {}, "a");
  k.publish("t", "b1", {}, "b");
  k.publish("t", "x");
  std::vector<Offset> got;
  for (const Received& r : k.poll("t", "s", "w", 0, 10)) got.push_back(r.offset);
  EXPECT_EQ(got, (std::vector<Offset>{0, 2, 3}));
  EXPECT_EQ(k.stats("t", "s").backlog, 1u);  // a2, passed over, waits
  EXPECT_TRUE(k.poll("t", "s", "v", 0, 10).empty());
  EXPECT_TRUE(k.nack("t", "s", 0, "w", 0));  // a1 comes back first; a2 still waits
  got.clear();
  for (const Received& r : k.poll("t", "s", "v", 0, 10)) got.push_back(r.offset);
  EXPECT_EQ(got, (std::vector<Offset>{0}));
  EXPECT_TRUE(k.ack("t", "s", 0, "v", 0));
  got.clear();
  for (const Received& r : k.poll("t", "s", "v", 0, 10)) got.push_back(r.offset);
  EXPECT_EQ(got, (std::vector<Offset>{1}));
}

// R31: a dead letter releases its key.
TEST_F(ModelPullTest, R31ADeadLetterReleasesItsKey) {
  Model k;  // a fresh model: the fixture's topics play no part
  k.create_topic("t");
  PullOptions o = ordered_from_start();
  o.max_deliveries = 1;
  k.subscribe_pull("t", "s", o);
  k.publish("t", "a1", {}, "a");
  k.publish("t", "a2", {}, "a");
  ASSERT_EQ(k.poll("t", "s", "w", 0, 10).size(), 1u);
  EXPECT_TRUE(k.nack("t", "s", 0, "w", 0));
  EXPECT_EQ(k.dead_letters("t", "s").size(), 1u);
  const std::vector<Received> got = k.poll("t", "s", "w", 0, 10);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].offset, 1u);
}

// R31: past kMaxPassedOver waiting messages a poll stops at a blocked one.
TEST_F(ModelPullTest, R31PassingOverIsBounded) {
  Model k;  // a fresh model: the fixture's topics play no part
  k.create_topic("t");
  PullOptions o = ordered_from_start();
  k.subscribe_pull("t", "s", o);
  for (std::size_t i = 0; i < kMaxPassedOver + 2; ++i) k.publish("t", "a", {}, "hot");
  k.publish("t", "cold", {}, "c");
  ASSERT_EQ(k.poll("t", "s", "w", 0, 1).size(), 1u);  // the first "hot"
  EXPECT_TRUE(k.poll("t", "s", "w", 0, 10).empty());  // the line waits at 1025
  EXPECT_EQ(k.stats("t", "s").cursor, kMaxPassedOver + 1);
}

}  // namespace
}  // namespace model
