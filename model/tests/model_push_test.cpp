// Model unit tests: push subscriptions, drain, groups, seek, waits, idempotent handlers (R4-R10,
// R12, R15).
#include <gtest/gtest.h>

#include "model/model.h"

namespace model {
namespace {

Step verdict(Verdict v) { return Step{.verdict = v}; }

std::vector<std::string> payloads(const std::vector<HandlerCall>& calls) {
  std::vector<std::string> out;
  for (const HandlerCall& c : calls) out.push_back(c.subscription + ":" + c.payload);
  return out;
}

TEST(ModelPushTest, R4StartPositionsAndUniqueNames) {
  Model m;
  m.create_topic("t");
  m.publish("t", "old");
  m.subscribe("t", "end", {});
  m.subscribe("t", "begin", {.start = {Start::Kind::kBeginning, 0}});
  EXPECT_THROW(m.subscribe("t", "far", {.start = {Start::Kind::kOffset, 5}}), Error);
  m.subscribe_pull("t", "pull", {});
  try {
    m.subscribe("t", "pull", {});
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kDuplicateSubscription);
  }
  EXPECT_EQ(m.drain(), 1u);
  EXPECT_EQ(payloads(m.take_calls()), (std::vector<std::string>{"begin:old"}));
}

TEST(ModelPushTest, R5FilterPassesOverAndCounts) {
  Model m;
  m.create_topic("t");
  m.subscribe("t", "s", {.header_filter = {{"type", "x"}}});
  m.publish("t", "a", {{"type", "y"}});
  m.publish("t", "b", {{"type", "x"}});
  m.publish("t", "c", {});
  EXPECT_EQ(m.stats("t", "s").backlog, 1u);
  m.drain();
  EXPECT_EQ(payloads(m.take_calls()), (std::vector<std::string>{"s:b"}));
  const Stats s = m.stats("t", "s");
  EXPECT_EQ(s.filtered, 2u);
  EXPECT_EQ(s.cursor, 3u);
  EXPECT_EQ(s.committed, 3u);  // filtered-out messages are done with
}

TEST(ModelPushTest, R6R7FailureRedeliversThenDeadLettersWithReasons) {
  Model m;
  m.create_topic("t");
  m.subscribe("t", "s",
              {.max_deliveries = 3,
               .script = {verdict(Verdict::kReject), verdict(Verdict::kThrowStd),
                          verdict(Verdict::kThrowOther)}});
  m.publish("t", "a");
  for (int i = 0; i < 3; ++i) EXPECT_EQ(m.drain(), 0u);
  const std::vector<HandlerCall> calls = m.take_calls();
  ASSERT_EQ(calls.size(), 3u);
  EXPECT_EQ(calls[2].attempt, 3);
  const std::vector<DeadLetter> dead = m.dead_letters("t", "s");
  ASSERT_EQ(dead.size(), 1u);
  EXPECT_EQ(dead[0], (DeadLetter{"t", "s", 0, "a", 3, "unknown exception", 0}));
  const Stats s = m.stats("t", "s");
  EXPECT_EQ(s.delivered, 3u);
  EXPECT_EQ(s.redelivered, 2u);
  EXPECT_EQ(s.dead_lettered, 1u);
}

TEST(ModelPushTest, R7ExceptionReason) {
  Model m;
  m.create_topic("t");
  m.subscribe("t", "s", {.max_deliveries = 1, .script = {verdict(Verdict::kThrowStd)}});
  m.publish("t", "a");
  m.drain();
  EXPECT_EQ(m.dead_letters("t", "s").at(0).reason, "exception: boom");
}

TEST(ModelPushTest, R23TerminateDeadLettersAtOnceAndStopsTheDrainForThatSubscription) {
  Model m;
  m.create_topic("t");
  m.subscribe(
      "t", "s",
      {.max_deliveries = 0, .script = {verdict(Verdict::kReject), verdict(Verdict::kTerminate)}});
  m.publish("t", "poison");
  m.publish("t", "next");
  EXPECT_EQ(m.drain(), 0u);  // attempt 1 rejected
  EXPECT_EQ(m.drain(), 0u);  // attempt 2 terminates: a failure, the drain stops there
  EXPECT_EQ(m.dead_letters("t", "s"),
            (std::vector<DeadLetter>{{"t", "s", 0, "poison", 2, "terminated", 0}}));
  EXPECT_EQ(m.drain(), 1u);  // then the subscription moves on
  EXPECT_EQ(payloads(m.take_calls()), (std::vector<std::string>{"s:poison", "s:poison", "s:next"}));
}

TEST(ModelPushTest, R24AFailedOfferWaitsItsBackoffWhileNewerMessagesGoOn) {
  Model m;
  m.create_topic("t");
  EXPECT_THROW(m.subscribe("t", "bad", {.backoff = {-1}}), Error);
  m.subscribe(
      "t", "s",
      {.script = {verdict(Verdict::kReject), verdict(Verdict::kReject)}, .backoff = {10, 30}});
  m.publish("t", "a");
  m.publish("t", "b");
  EXPECT_EQ(m.drain(), 0u);  // a#1 rejected: waits 10
  EXPECT_EQ(m.drain(), 0u);  // b#1 rejected too: waits 10; a still waits
  EXPECT_TRUE(m.wait_idle(0));
  EXPECT_FALSE(m.wait_delivered(0));
  m.advance(10);
  EXPECT_EQ(m.drain(), 2u);  // a#2 and b#2, lowest first
  EXPECT_EQ(payloads(m.take_calls()), (std::vector<std::string>{"s:a", "s:b", "s:a", "s:b"}));
}

TEST(ModelPushTest, R8FailureStopsOnlyThatSubscriptionAndLiveEndIsSeen) {
  Model m;
  m.create_topic("t");
  Step publish{.effect = EffectKind::kPublish, .topic = "t", .payload = "late"};
  m.subscribe("t", "a", {.script = {publish, verdict(Verdict::kReject)}});
  m.subscribe("t", "b", {});
  m.publish("t", "x");
  m.publish("t", "y");
  EXPECT_EQ(m.drain(), 4u);  // a: x; a rejects y; b: x, y, late
  EXPECT_EQ(payloads(m.take_calls()),
            (std::vector<std::string>{"a:x", "a:y", "b:x", "b:y", "b:late"}));
}

TEST(ModelPushTest, R8DrainFromInsideIsReentrant) {
  Model m;
  m.create_topic("t");
  m.subscribe("t", "a", {.script = {Step{.effect = EffectKind::kDrain}}});
  m.publish("t", "x");
  m.drain();
  EXPECT_EQ(m.take_calls().at(0).effect, "drain -> reentrant_drain");
}

TEST(ModelPushTest, R9UnsubscribeSelfStopsAtOnceAndVoidsTheResult) {
  Model m;
  m.create_topic("t");
  m.subscribe("t", "a", {.script = {Step{.effect = EffectKind::kUnsubscribeSelf}}});
  m.publish("t", "x");
  m.publish("t", "y");
  EXPECT_EQ(m.drain(), 0u);
  EXPECT_EQ(payloads(m.take_calls()), (std::vector<std::string>{"a:x"}));
  EXPECT_FALSE(m.unsubscribe("t", "a"));
}

TEST(ModelPushTest, R9UnsubscribeOnAnUnknownTopicIsUnknownTopic) {
  Model m;
  m.create_topic("t");
  m.subscribe(
      "t", "a",
      {.script = {Step{.effect = EffectKind::kUnsubscribe, .topic = "nope", .name = "a"},
                  Step{.effect = EffectKind::kUnsubscribe, .topic = "t", .name = "nobody"}}});
  try {
    m.unsubscribe("nope", "a");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kUnknownTopic);
  }
  EXPECT_FALSE(m.unsubscribe("t", "nobody"));  // a known topic: unknown name is just false
  m.publish("t", "x");
  m.publish("t", "y");
  EXPECT_EQ(m.drain(), 2u);  // the effect's error does not change the verdict
  const std::vector<HandlerCall> calls = m.take_calls();
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ(calls[0].effect, "unsubscribe -> unknown_topic");
  EXPECT_EQ(calls[1].effect, "unsubscribe -> false");
}

TEST(ModelPushTest, R10GroupRoundRobinAndSharedState) {
  Model m;
  m.create_topic("t");
  m.subscribe("t", "a", {.group = "g"});
  m.subscribe("t", "b", {.group = "g"});
  EXPECT_THROW(m.subscribe("t", "c", {.max_deliveries = 1, .group = "g"}), Error);
  for (const char* p : {"0", "1", "2"}) m.publish("t", p);
  EXPECT_EQ(m.drain(), 3u);
  EXPECT_EQ(payloads(m.take_calls()), (std::vector<std::string>{"a:0", "b:1", "a:2"}));
  EXPECT_EQ(m.stats("t", "b").confirmed, 3u);
  m.unsubscribe("t", "a");  // a got the previous offer and left: next goes to the first (b)
  m.publish("t", "3");
  m.drain();
  EXPECT_EQ(payloads(m.take_calls()), (std::vector<std::string>{"b:3"}));
}

TEST(ModelPushTest, R12SeekForgetsAndReplays) {
  Model m;
  m.create_topic("t");
  m.subscribe("t", "s", {.script = {verdict(Verdict::kReject)}});
  m.publish("t", "a");
  m.drain();
  EXPECT_EQ(m.stats("t", "s").backlog, 1u);
  m.seek("t", "s", 0);
  EXPECT_THROW(m.seek("t", "s", 2), Error);
  m.drain();
  const std::vector<HandlerCall> calls = m.take_calls();
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ(calls[1].attempt, 1);              // attempts forgotten
  EXPECT_EQ(m.stats("t", "s").delivered, 2u);  // counters kept
}

TEST(ModelPushTest, R15WaitsAnswerAtOnceWhetherAPushSubscriptionHasAnythingLeft) {
  Model m;
  m.create_topic("t", 2);
  EXPECT_TRUE(m.wait_delivered(0));
  m.subscribe("t", "s", {.header_filter = {{"type", "x"}}, .script = {verdict(Verdict::kReject)}});
  m.publish("t", "filtered out");
  EXPECT_TRUE(m.wait_delivered(0));  // nothing s could be offered
  m.publish("t", "a", {{"type", "x"}});
  EXPECT_FALSE(m.wait_delivered(5));  // the timeout changes nothing: only drain delivers
  EXPECT_FALSE(m.wait_idle(5));
  m.drain();  // rejected: waiting for redelivery
  EXPECT_FALSE(m.wait_delivered(0));
  m.drain();
  EXPECT_TRUE(m.wait_delivered(0));
  EXPECT_TRUE(m.wait_idle(0));
  m.seek("t", "s", 1);  // a replay is work again
  EXPECT_FALSE(m.wait_idle(0));
  m.publish("t", "b");
  m.publish("t", "c");  // retention (2) drops offset 1: skipped, nothing left for s
  EXPECT_TRUE(m.wait_delivered(0));
  EXPECT_EQ(m.stats("t", "s").skipped, 1u);
}

// broker::idempotent(): an offer of an offset this member's script confirmed is answered
// true without a step; a failure, a dead letter or an offset a seek skipped is not applied.
TEST(ModelPushTest, IdempotentHandlerSkipsOnlyOffsetsItsScriptConfirmed) {
  Model m;
  m.create_topic("t");
  m.subscribe("t", "s",
              {.max_deliveries = 1,
               .script = {verdict(Verdict::kConfirm), verdict(Verdict::kReject),
                          verdict(Verdict::kConfirm)},
               .idempotent = true});
  m.publish("t", "a");
  m.publish("t", "b");
  m.publish("t", "c");
  m.drain();  // a confirmed, b dead-lettered (max 1)
  m.drain();  // c confirmed
  m.take_calls();
  m.seek("t", "s", 0);
  m.drain();  // a and c repeats; b was never applied: its script runs (confirm forever)
  const std::vector<HandlerCall> calls = m.take_calls();
  ASSERT_EQ(calls.size(), 3u);
  EXPECT_EQ(calls[0].effect, "idempotent -> repeat");
  EXPECT_EQ(calls[1].effect, "");
  EXPECT_EQ(calls[1].payload, "b");
  EXPECT_EQ(calls[2].effect, "idempotent -> repeat");
  EXPECT_EQ(m.stats("t", "s").confirmed, 5u);
  m.unsubscribe("t", "s");  // a new incarnation applies everything again
  m.subscribe("t", "s", {.start = {Start::Kind::kBeginning, 0}, .idempotent = true});
  m.drain();
  for (const HandlerCall& c : m.take_calls()) EXPECT_EQ(c.effect, "");
}

TEST(ModelPushTest, R8SeekInsideHandlerVoidsItsResultAndServingGoesOn) {
  Model m;
  m.create_topic("t");
  Step seek{.effect = EffectKind::kSeek,
            .topic = "t",
            .name = "s",
            .offset = 0,
            .verdict = Verdict::kReject};
  m.subscribe("t", "s", {.start = {Start::Kind::kBeginning, 0}, .script = {seek}});
  m.publish("t", "a");
  EXPECT_EQ(m.drain(), 1u);
  EXPECT_EQ(payloads(m.take_calls()), (std::vector<std::string>{"s:a", "s:a"}));
  EXPECT_TRUE(m.dead_letters("t", "s").empty());
}

TEST(ModelPushTest, R13CommittedStaysAtAFailedMessageWhileTheCursorMovesOn) {
  // Seed 000: billing's handler throws on order-2 (offset 1) and it waits in redelivery.
  Model m;
  m.create_topic("orders");
  m.subscribe("orders", "billing",
              {.script = {verdict(Verdict::kConfirm), verdict(Verdict::kThrowStd)}});
  m.publish("orders", "order-1");
  m.drain();
  EXPECT_EQ(m.stats("orders", "billing").committed, 1u);
  m.publish("orders", "order-2");
  m.publish("orders", "order-3");
  EXPECT_EQ(m.drain(), 0u);
  Stats s = m.stats("orders", "billing");
  EXPECT_EQ(s.committed, 1u);
  EXPECT_EQ(s.cursor, 2u);
  EXPECT_EQ(m.drain(), 2u);  // order-2 again, then order-3
  s = m.stats("orders", "billing");
  EXPECT_EQ(s.committed, 3u);
  EXPECT_EQ(s.cursor, 3u);
}

TEST(ModelPushTest, R13CommittedSkipsWhatRetentionDropped) {
  Model m;
  m.create_topic("t", 2);
  m.subscribe("t", "s", {.script = {verdict(Verdict::kReject)}});
  m.publish("t", "a");
  m.drain();  // a rejected: waits at offset 0
  EXPECT_EQ(m.stats("t", "s").committed, 0u);
  m.publish("t", "b");
  m.publish("t", "c");  // keeps b, c: a is dropped and skipped
  const Stats s = m.stats("t", "s");
  EXPECT_EQ(s.skipped, 1u);
  EXPECT_EQ(s.committed, 1u);
  EXPECT_EQ(s.cursor, 1u);
}

TEST(ModelPushTest, R7PushDeadLettersCarryTopicTheGroupsNameAndTheClock) {
  Model m;
  m.create_topic("t");
  m.subscribe("t", "solo", {.max_deliveries = 1, .script = {verdict(Verdict::kReject)}});
  m.subscribe("t", "a", {.max_deliveries = 1, .group = "g", .script = {verdict(Verdict::kReject)}});
  m.subscribe("t", "b", {.max_deliveries = 1, .group = "g"});
  m.advance(7);
  m.publish("t", "x");
  m.advance(5);
  m.drain();
  EXPECT_EQ(m.dead_letters("t", "solo"),
            (std::vector<DeadLetter>{{"t", "solo", 0, "x", 1, "rejected", 12}}));
  EXPECT_EQ(m.dead_letters("t", "b"),
            (std::vector<DeadLetter>{{"t", "g", 0, "x", 1, "rejected", 12}}));
}

TEST(ModelPushTest, R10GroupNameWorksForStatsDeadLettersAndSeek) {
  Model m;
  m.create_topic("t");
  m.subscribe("t", "a", {.max_deliveries = 1, .group = "g", .script = {verdict(Verdict::kReject)}});
  m.subscribe("t", "b", {.max_deliveries = 1, .group = "g"});
  m.publish("t", "x");
  m.publish("t", "y");
  m.drain();  // a rejects x (dead); the group stops for this drain
  EXPECT_EQ(m.stats("t", "g"), m.stats("t", "a"));
  EXPECT_EQ(m.dead_letters("t", "g"), m.dead_letters("t", "b"));
  m.seek("t", "g", 0);
  EXPECT_EQ(m.stats("t", "b").cursor, 0u);
  try {
    m.stats("t", "h");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kUnknownSubscription);
  }
  EXPECT_FALSE(m.unsubscribe("t", "g"));  // a group is not a subscription: it is not removed
  EXPECT_EQ(m.stats("t", "g").dead_lettered, 1u);
  // A subscription's name wins over a group of the same name.
  m.subscribe_pull("t", "g", {.start = {Start::Kind::kBeginning, 0}});
  EXPECT_EQ(m.stats("t", "g").dead_lettered, 0u);
  EXPECT_EQ(m.stats("t", "g").cursor, 0u);
  m.unsubscribe("t", "a");
  m.unsubscribe("t", "b");
  m.unsubscribe("t", "g");
  try {
    m.seek("t", "g", 0);  // the group went with its last member
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kUnknownSubscription);
  }
}

}  // namespace
}  // namespace model
