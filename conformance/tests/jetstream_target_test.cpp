// The JetStream target against a real nats-server, one model rule per test (SPEC R1, R5,
// R7, R11, R14). One server serves the suite; every test has its own target and prefix.
// One model ms is 20 real ms: an ack timeout of 10 is 200 ms of the server's AckWait, and
// every wait past a deadline leaves at least 200 ms of margin.
#include "conformance/jetstream_target.h"

#include <gtest/gtest.h>
#include <nats/nats.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>
#include <iterator>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <variant>
#include <vector>

#include "conformance/local_process.h"
#include "conformance/nats_cluster.h"
#include "conformance/nats_server.h"
#include "conformance/profile.h"
#include "conformance/runner.h"
#include "conformance/target.h"
#include "model/errors.h"
#include "oplang/ops.h"
#include "oplang/outcome.h"
#include "oplang/text.h"
#include "push_steps.h"

namespace conformance {
namespace {

using model::ErrorCode;
using model::Received;

constexpr model::Millis kUnitMs = 20;
constexpr model::Millis kAckTimeout = 10;

class JetStreamTargetTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { server_ = new NatsServer(); }
  static void TearDownTestSuite() {
    delete server_;
    server_ = nullptr;
  }

  void SetUp() override {
    const std::string prefix = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    target_ = std::make_unique<JetStreamTarget>(server_->url(), prefix, kUnitMs);
  }
  void TearDown() override {
    target_.reset();
    ASSERT_TRUE(server_->alive()) << server_->log_tail(20);
  }

  oplang::Outcome Step(const oplang::Op& op) { return target_->step(op); }

  // The op's value, failing the test if it was refused.
  template <typename T>
  T Value(const oplang::Op& op) {
    const oplang::Outcome out = Step(op);
    EXPECT_FALSE(out.error.has_value()) << oplang::print(out);
    const T* v = std::get_if<T>(&out.value);
    EXPECT_NE(v, nullptr) << oplang::print(out);
    return v == nullptr ? T{} : *v;
  }
  std::optional<ErrorCode> ErrorOf(const oplang::Op& op) { return Step(op).error; }

  void Create(const std::string& topic) { Value<oplang::Done>(oplang::CreateTopic{topic}); }
  model::Offset Publish(const std::string& topic, const std::string& payload,
                        model::Headers headers = {}) {
    return Value<oplang::OffsetResult>(oplang::Publish{topic, payload, std::move(headers), ""})
        .offset;
  }
  void Subscribe(const std::string& topic, const std::string& name, int max_deliveries = 0,
                 model::Headers filter = {}) {
    oplang::SubscribePull op;
    op.topic = topic;
    op.name = name;
    op.filter = std::move(filter);
    op.ack_timeout = kAckTimeout;
    op.max_deliveries = max_deliveries;
    op.start.kind = model::Start::Kind::kBeginning;
    Value<oplang::Done>(op);
  }
  std::vector<Received> Poll(const std::string& topic, const std::string& sub, std::size_t max = 10,
                             const std::string& member = "m") {
    return Value<std::vector<Received>>(oplang::Poll{topic, sub, member, max});
  }
  bool Ack(const std::string& topic, const std::string& sub, model::Offset offset,
           const std::string& member = "m") {
    return Value<oplang::BoolResult>(oplang::Ack{topic, sub, offset, member}).value;
  }
  bool Nack(const std::string& topic, const std::string& sub, model::Offset offset,
            const std::string& member = "m") {
    return Value<oplang::BoolResult>(oplang::Nack{topic, sub, offset, member}).value;
  }
  bool Term(const std::string& topic, const std::string& sub, model::Offset offset,
            const std::string& member = "m") {
    return Value<oplang::BoolResult>(oplang::Term{topic, sub, offset, member}).value;
  }
  void Advance(model::Millis ms) { Value<oplang::Done>(oplang::Advance{ms}); }
  std::vector<model::DeadLetter> DeadLetters(const std::string& topic, const std::string& sub) {
    return Value<std::vector<model::DeadLetter>>(oplang::GetDeadLetters{topic, sub});
  }
  /// The dead letters once there are at least n, asked again for up to 2 s: the server
  /// announces a death on its own schedule, which a loaded machine can push past the one
  /// model ms the adapter waits (no drain or other call in between).
  std::vector<model::DeadLetter> DeadLettersOnce(const std::string& topic, const std::string& sub,
                                                 std::size_t n) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(2);
    std::vector<model::DeadLetter> dead = DeadLetters(topic, sub);
    while (dead.size() < n && std::chrono::steady_clock::now() < until) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      dead = DeadLetters(topic, sub);
    }
    return dead;
  }

  static NatsServer* server_;
  std::unique_ptr<JetStreamTarget> target_;
};

NatsServer* JetStreamTargetTest::server_ = nullptr;

// R2, R11: offsets from 0 in publish order, first attempt, deadline = now + ack_timeout.
TEST_F(JetStreamTargetTest, PollReturnsPublishedMessagesWithOffsetsAttemptAndDeadline) {
  Create("t");
  Subscribe("t", "s");
  EXPECT_EQ(Publish("t", "a"), 0u);
  EXPECT_EQ(Publish("t", "b", {{"k", "v"}}), 1u);
  EXPECT_EQ(Publish("t", ""), 2u);
  Advance(3);
  const std::vector<Received> got = Poll("t", "s");
  const std::vector<Received> want = {
      {0, "a", 1, 3 + kAckTimeout}, {1, "b", 1, 3 + kAckTimeout}, {2, "", 1, 3 + kAckTimeout}};
  EXPECT_EQ(got, want);
  EXPECT_TRUE(Poll("t", "s").empty());  // all held
}

// R11: max bounds a poll; the rest comes with the next one.
TEST_F(JetStreamTargetTest, PollReturnsAtMostMax) {
  Create("t");
  Subscribe("t", "s");
  for (const char* p : {"a", "b", "c"}) Publish("t", p);
  const std::vector<Received> first = Poll("t", "s", 2);
  ASSERT_EQ(first.size(), 2u);
  EXPECT_EQ(first[0].offset, 0u);
  EXPECT_EQ(first[1].offset, 1u);
  const std::vector<Received> second = Poll("t", "s", 2);
  ASSERT_EQ(second.size(), 1u);
  EXPECT_EQ(second[0].offset, 2u);
}

// R7, R11: an acked message is done: not offered again once its ack timeout has passed.
TEST_F(JetStreamTargetTest, AckedMessageIsNotOfferedAgainAfterAckTimeout) {
  Create("t");
  Subscribe("t", "s");
  Publish("t", "a");
  ASSERT_EQ(Poll("t", "s").size(), 1u);
  EXPECT_TRUE(Ack("t", "s", 0));
  EXPECT_TRUE(Ack("t", "s", 0));  // the server answers every ack (acks_always_confirmed)
  Advance(kAckTimeout + 10);
  EXPECT_TRUE(Poll("t", "s").empty());
}

// R11: an unanswered message is offered again after its ack timeout, attempt 2. The
// previous holder's ack still reaches the server and settles it (late_ack_by_previous_holder):
// it does not come back after the new holder's deadline either. A member never given it
// has nothing to ack with.
TEST_F(JetStreamTargetTest, UnackedMessageIsOfferedAgainAfterAckTimeout) {
  Create("t");
  Subscribe("t", "s");
  Publish("t", "a");
  ASSERT_EQ(Poll("t", "s").size(), 1u);
  Advance(kAckTimeout + 10);
  const std::vector<Received> want = {{0, "a", 2, target_->now() + kAckTimeout}};
  EXPECT_EQ(Poll("t", "s", 10, "other"), want);
  EXPECT_FALSE(Ack("t", "s", 0, "nobody"));
  EXPECT_TRUE(Ack("t", "s", 0, "m"));
  Advance(kAckTimeout + 10);
  EXPECT_TRUE(Poll("t", "s", 10, "other").empty());
}

// R11: an extend by the holder, before the deadline, restarts AckWait (an in-progress ack):
// past the first deadline the message is still held, and comes back only after the second.
// By another member, or too late, it changes nothing.
TEST_F(JetStreamTargetTest, ExtendByTheHolderMovesTheDeadline) {
  Create("t");
  Subscribe("t", "s");
  Publish("t", "a");
  ASSERT_EQ(Poll("t", "s").size(), 1u);
  Advance(kAckTimeout - 4);
  auto extend = [&](const std::string& member) {
    return Value<oplang::BoolResult>(oplang::Extend{"t", "s", 0, member, kAckTimeout}).value;
  };
  EXPECT_FALSE(extend("other"));  // never given it: nothing to send
  EXPECT_TRUE(extend("m"));
  Advance(8);  // past the first deadline, before the new one
  EXPECT_TRUE(Poll("t", "s", 10, "other").empty());
  Advance(kAckTimeout);
  EXPECT_TRUE(extend("m"));  // past the new deadline: answered, but too late to keep it
  EXPECT_EQ(Poll("t", "s", 10, "other").size(), 1u);
  EXPECT_TRUE(Ack("t", "s", 0, "other"));
  EXPECT_THROW(Step(oplang::Extend{"t", "s", 0, "other", kAckTimeout + 1}), std::invalid_argument);
  EXPECT_EQ(Step(oplang::Extend{"t", "s", 0, "other", 0}).error, ErrorCode::kInvalidArgument);
  EXPECT_EQ(Step(oplang::Extend{"t", "nope", 0, "other", kAckTimeout}).error,
            ErrorCode::kUnknownSubscription);
}

// R7, R11: a nacked message is offered again at once, attempt 2.
TEST_F(JetStreamTargetTest, NackedMessageIsOfferedAgainAtOnce) {
  Create("t");
  Subscribe("t", "s");
  Publish("t", "a");
  ASSERT_EQ(Poll("t", "s").size(), 1u);
  EXPECT_FALSE(Nack("t", "s", 0, "someone-else"));
  EXPECT_TRUE(Nack("t", "s", 0));
  const std::vector<Received> want = {{0, "a", 2, kAckTimeout}};
  EXPECT_EQ(Poll("t", "s"), want);
}

// R24: a nack with a delay (-NAK {"delay": ...}) gives the message back only once the delay
// has passed; a delay of 0 at once; a negative one is refused (the adapter's check).
TEST_F(JetStreamTargetTest, NackWithADelayIsOfferedAgainOnlyAfterIt) {
  Create("t");
  Subscribe("t", "s");
  Publish("t", "a");
  ASSERT_EQ(Poll("t", "s").size(), 1u);
  EXPECT_TRUE(
      Value<oplang::BoolResult>(oplang::Nack{"t", "s", 0, "m", oplang::Which::kOffset, 0}).value);
  ASSERT_EQ(Poll("t", "s").size(), 1u);  // at once
  EXPECT_TRUE(Value<oplang::BoolResult>(
                  oplang::Nack{"t", "s", 0, "m", oplang::Which::kOffset, 3 * kAckTimeout})
                  .value);
  EXPECT_TRUE(Poll("t", "s").empty());
  Advance(2 * kAckTimeout);  // past the ack timeout, still inside the delay
  EXPECT_TRUE(Poll("t", "s").empty());
  Advance(kAckTimeout + 5);
  const std::vector<Received> again = Poll("t", "s");
  ASSERT_EQ(again.size(), 1u);
  EXPECT_EQ(again[0].attempt, 3);
  EXPECT_EQ(ErrorOf(oplang::Nack{"t", "s", 0, "m", oplang::Which::kOffset, -1}),
            ErrorCode::kInvalidArgument);
}

// R5: only messages with every filter header equal are offered, also after expiry.
TEST_F(JetStreamTargetTest, HeaderFilterNeverReturnsNonMatchingMessages) {
  Create("t");
  Subscribe("t", "s", 0, {{"color", "red"}});
  Publish("t", "r0", {{"color", "red"}});
  Publish("t", "b1", {{"color", "blue"}});
  Publish("t", "n2");
  Publish("t", "r3", {{"color", "red"}, {"size", "xl"}});
  Publish("t", "c4", {{"Color", "red"}});
  const std::vector<Received> got = Poll("t", "s", 2);  // refetches past the filtered ones
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].offset, 0u);
  EXPECT_EQ(got[1].offset, 3u);
  EXPECT_TRUE(Poll("t", "s").empty());
  Advance(kAckTimeout + 10);
  const std::vector<Received> again = Poll("t", "s");
  ASSERT_EQ(again.size(), 2u);
  EXPECT_EQ(again[0].offset, 0u);
  EXPECT_EQ(again[0].attempt, 2);
  EXPECT_EQ(again[1].offset, 3u);
}

// R23: a term by the holder dead-letters the message at once, whatever max_deliveries
// allows: it is never offered again, and the dead letter says a term ended it.
// R5 and R22 together: the header filter is the adapter's (it acks a non-matching message
// at once), and under MaxAckPending 1 the server hands out nothing more until that ack, so
// the poll must ask again after it: the matching message behind it is the poll's answer.
TEST_F(JetStreamTargetTest, FilteredMessagesDoNotHoldBackMatchingOnesUnderMaxInFlight) {
  Create("t");
  oplang::SubscribePull op;
  op.topic = "t";
  op.name = "s";
  op.filter = {{"color", "red"}};
  op.ack_timeout = kAckTimeout;
  op.max_deliveries = 0;
  op.max_in_flight = 1;
  op.start.kind = model::Start::Kind::kBeginning;
  Value<oplang::Done>(op);
  Publish("t", "blue", {{"color", "blue"}});
  Publish("t", "red", {{"color", "red"}});
  const std::vector<Received> got = Poll("t", "s", 3);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].offset, 1u);
  EXPECT_TRUE(Poll("t", "s", 3).empty());  // one held: the bound
}

TEST_F(JetStreamTargetTest, TermDeadLettersAtOnceAndTheMessageNeverComesBack) {
  Create("t");
  Subscribe("t", "s", 5);
  Publish("t", "poison");
  Publish("t", "b");
  ASSERT_EQ(Poll("t", "s", 1).size(), 1u);
  EXPECT_FALSE(Term("t", "s", 0, "someone-else"));
  EXPECT_TRUE(Term("t", "s", 0));
  const std::vector<model::DeadLetter> dead = DeadLetters("t", "s");
  ASSERT_EQ(dead.size(), 1u);
  EXPECT_EQ(dead[0].offset, 0u);
  EXPECT_EQ(dead[0].payload, "poison");
  EXPECT_EQ(dead[0].attempts, 1);
  EXPECT_EQ(dead[0].reason, "terminated");
  const std::vector<Received> next = Poll("t", "s");
  ASSERT_EQ(next.size(), 1u);
  EXPECT_EQ(next[0].offset, 1u);  // b, not the poison again
  Advance(kAckTimeout + 10);      // nor after b's deadline passed
  const std::vector<Received> later = Poll("t", "s");
  ASSERT_EQ(later.size(), 1u);
  EXPECT_EQ(later[0].offset, 1u);
}

// R7: with max_deliveries 2, the second failed attempt (nacks) dead-letters the message.
TEST_F(JetStreamTargetTest, MaxDeliveriesDeadLettersAfterTwoNacks) {
  Create("t");
  Subscribe("t", "s", 2);
  Publish("t", "a");
  ASSERT_EQ(Poll("t", "s").size(), 1u);
  EXPECT_TRUE(Nack("t", "s", 0));
  const std::vector<Received> second = Poll("t", "s");
  ASSERT_EQ(second.size(), 1u);
  EXPECT_EQ(second[0].attempt, 2);
  EXPECT_TRUE(Nack("t", "s", 0));
  EXPECT_TRUE(Poll("t", "s").empty());
  const std::vector<model::DeadLetter> dead = DeadLetters("t", "s");
  ASSERT_EQ(dead.size(), 1u);
  EXPECT_EQ(dead[0].topic, "t");
  EXPECT_EQ(dead[0].subscription, "s");
  EXPECT_EQ(dead[0].offset, 0u);
  EXPECT_EQ(dead[0].payload, "a");
  EXPECT_EQ(dead[0].attempts, 2);
  EXPECT_EQ(dead[0].reason, "max deliveries");
}

// R7, R11: the same with two expired ack timeouts.
TEST_F(JetStreamTargetTest, MaxDeliveriesDeadLettersAfterTwoExpiries) {
  Create("t");
  Subscribe("t", "s", 2);
  Publish("t", "a");
  Publish("t", "b");
  ASSERT_EQ(Poll("t", "s", 1).size(), 1u);
  Advance(kAckTimeout + 10);
  const std::vector<Received> second = Poll("t", "s", 1);
  ASSERT_EQ(second.size(), 1u);
  EXPECT_EQ(second[0].offset, 0u);
  EXPECT_EQ(second[0].attempt, 2);
  Advance(kAckTimeout + 10);
  // Offset 0 is dead: the next poll offers offset 1.
  const std::vector<Received> third = Poll("t", "s");
  ASSERT_EQ(third.size(), 1u);
  EXPECT_EQ(third[0].offset, 1u);
  EXPECT_EQ(third[0].attempt, 1);
  EXPECT_TRUE(Ack("t", "s", 0));  // dead: answered all the same, and nothing changes
  const std::vector<model::DeadLetter> dead = DeadLetters("t", "s");
  ASSERT_EQ(dead.size(), 1u);
  EXPECT_EQ(dead[0].offset, 0u);
  EXPECT_EQ(dead[0].payload, "a");
  EXPECT_EQ(dead[0].attempts, 2);
  EXPECT_EQ(dead[0].died_at, target_->now());
  EXPECT_TRUE(Ack("t", "s", 1));
}

// R12: a seek makes the consumer again at the offset: what was held and acked is offered
// again from there, each at attempt 1, and an answer through a delivery from before the
// seek is refused; a seek to the end offers only what comes next.
// Outside [oldest, end], or on an unknown topic or subscription, it is refused.
TEST_F(JetStreamTargetTest, SeekOffersAgainFromTheOffsetAtAttemptOne) {
  Create("t");
  Subscribe("t", "s");
  for (const char* p : {"a", "b", "c"}) Publish("t", p);
  ASSERT_EQ(Poll("t", "s").size(), 3u);
  EXPECT_TRUE(Ack("t", "s", 0));
  EXPECT_TRUE(Nack("t", "s", 1));
  ASSERT_EQ(Poll("t", "s", 1).at(0).attempt, 2);  // offset 1 again
  Value<oplang::Done>(oplang::Seek{"t", "s", 1});
  const std::vector<Received> again = Poll("t", "s");
  ASSERT_EQ(again.size(), 2u);
  EXPECT_EQ(again[0].offset, 1u);
  EXPECT_EQ(again[0].attempt, 1);
  EXPECT_EQ(again[1].offset, 2u);
  EXPECT_EQ(again[1].attempt, 1);
  // Offset 0, acked before the seek: its delivery's consumer is gone, nobody takes the ack.
  EXPECT_FALSE(Ack("t", "s", 0));
  Value<oplang::Done>(oplang::Seek{"t", "s", 0});
  EXPECT_EQ(Poll("t", "s", 1).at(0).offset, 0u);
  Value<oplang::Done>(oplang::Seek{"t", "s", 3});
  EXPECT_TRUE(Poll("t", "s").empty());
  Publish("t", "d");
  const std::vector<Received> next = Poll("t", "s");
  ASSERT_EQ(next.size(), 1u);
  EXPECT_EQ(next[0].offset, 3u);
  EXPECT_EQ(ErrorOf(oplang::Seek{"t", "s", 5}), ErrorCode::kOffsetOutOfRange);
  EXPECT_EQ(ErrorOf(oplang::Seek{"t", "nope", 0}), ErrorCode::kUnknownSubscription);
  EXPECT_EQ(ErrorOf(oplang::Seek{"nope", "s", 0}), ErrorCode::kUnknownTopic);
}

// R28: a seek by time makes the consumer again at the first message the server stamped at or
// after that model time's wall-clock instant, and answers the offset the server starts at:
// each publish time finds its own message, 0 the first, now past the last the end; a time
// after now is refused.
TEST_F(JetStreamTargetTest, SeekToTimeStartsAtTheFirstMessageStampedAtOrAfterIt) {
  Create("t");
  Subscribe("t", "s");
  Publish("t", "a");  // model time 0
  Advance(10);
  Publish("t", "b");  // 10
  Advance(10);
  Publish("t", "c");  // 20
  ASSERT_EQ(Poll("t", "s").size(), 3u);
  EXPECT_EQ(Value<oplang::OffsetResult>(oplang::SeekToTime{"t", "s", 10}).offset, 1u);
  const std::vector<Received> again = Poll("t", "s");
  ASSERT_EQ(again.size(), 2u);
  EXPECT_EQ(again[0].offset, 1u);
  EXPECT_EQ(again[0].attempt, 1);
  EXPECT_EQ(Value<oplang::OffsetResult>(oplang::SeekToTime{"t", "s", 0}).offset, 0u);
  EXPECT_EQ(Value<oplang::OffsetResult>(oplang::SeekToTime{"t", "s", 20}).offset, 2u);
  Advance(10);
  EXPECT_EQ(Value<oplang::OffsetResult>(oplang::SeekToTime{"t", "s", 30}).offset, 3u);
  EXPECT_TRUE(Poll("t", "s").empty());
  EXPECT_EQ(ErrorOf(oplang::SeekToTime{"t", "s", 31}), ErrorCode::kInvalidArgument);
  EXPECT_EQ(ErrorOf(oplang::SeekToTime{"t", "nope", 0}), ErrorCode::kUnknownSubscription);
}

// R28 at every tenth of a second: eleven messages 5 model ms (100 real ms) apart span a
// whole second of the wall clock, so some seek's instant falls in the first tenth of a
// second (where libnats would write it wrong, JetStreamRawProbe.LibnatsWrites*), and each
// publish time finds its own message.
TEST_F(JetStreamTargetTest, SeekToTimeFindsEachMessageOfASecondAtItsOwnTime) {
  Create("t");
  Subscribe("t", "s");
  for (int i = 0; i <= 10; ++i) {
    if (i > 0) Advance(5);
    Publish("t", "m" + std::to_string(i));
  }
  Advance(5);
  for (model::Offset i = 0; i <= 10; ++i) {
    EXPECT_EQ(
        Value<oplang::OffsetResult>(oplang::SeekToTime{"t", "s", static_cast<model::Millis>(5 * i)})
            .offset,
        i);
  }
}

// The same through the kit, under the jetstream profile: late answers (acks_always_confirmed,
// late_ack_by_previous_holder) do not reach past a seek, in the model as on the server.
TEST_F(JetStreamTargetTest, TheKitJudgesAnAnswerFromBeforeASeekAsRefused) {
  oplang::SubscribePull sub;
  sub.topic = "t";
  sub.name = "s";
  sub.ack_timeout = kAckTimeout;
  sub.start.kind = model::Start::Kind::kBeginning;
  const oplang::Script script = {
      oplang::CreateTopic{"t"},          sub,
      oplang::Publish{"t", "a", {}, ""}, oplang::Publish{"t", "b", {}, ""},
      oplang::Poll{"t", "s", "w1", 2},   oplang::Seek{"t", "s", 1},
      oplang::Ack{"t", "s", 0, "w1"},    oplang::Poll{"t", "s", "w2", 2},
      oplang::Nack{"t", "s", 1, "w1"},   oplang::Poll{"t", "s", "w1", 2}};
  const Verdict v = check(*target_, script, jetstream_profile());
  EXPECT_FALSE(v.violation) << (v.violation ? v.violation->rule : "");
  EXPECT_FALSE(v.void_run);
}

// R1, R14: topics.
TEST_F(JetStreamTargetTest, TopicErrors) {
  EXPECT_EQ(ErrorOf(oplang::CreateTopic{""}), ErrorCode::kInvalidArgument);
  Create("t");
  EXPECT_EQ(ErrorOf(oplang::CreateTopic{"t"}), ErrorCode::kDuplicateTopic);
  EXPECT_EQ(ErrorOf(oplang::DeleteTopic{"nope"}), ErrorCode::kUnknownTopic);
  EXPECT_EQ(ErrorOf(oplang::Publish{"nope", "a", {}, ""}), ErrorCode::kUnknownTopic);
  Subscribe("t", "s");
  EXPECT_EQ(ErrorOf(oplang::DeleteTopic{"t"}), ErrorCode::kTopicInUse);
  EXPECT_TRUE(Value<oplang::BoolResult>(oplang::Unsubscribe{"t", "s"}).value);
  Value<oplang::Done>(oplang::DeleteTopic{"t"});
  EXPECT_EQ(ErrorOf(oplang::Publish{"t", "a", {}, ""}), ErrorCode::kUnknownTopic);
  // A topic made again starts empty, at offset 0; names outside [A-Za-z0-9-] work too.
  Create("t");
  EXPECT_EQ(Publish("t", "x"), 0u);
  Create("a.b c_d*>");
  Create("a_b c.d*>");
  EXPECT_EQ(Publish("a.b c_d*>", "x"), 0u);
  EXPECT_EQ(Publish("a_b c.d*>", "y"), 0u);
}

// R11, R14: subscriptions and their options.
TEST_F(JetStreamTargetTest, SubscriptionErrors) {
  Create("t");
  oplang::SubscribePull op;
  op.topic = "t";
  op.name = "s";
  op.ack_timeout = kAckTimeout;
  op.max_deliveries = 3;
  op.start.kind = model::Start::Kind::kEnd;
  oplang::SubscribePull unknown_topic = op;
  unknown_topic.topic = "nope";
  EXPECT_EQ(ErrorOf(unknown_topic), ErrorCode::kUnknownTopic);
  oplang::SubscribePull bad = op;
  bad.ack_timeout = 0;
  EXPECT_EQ(ErrorOf(bad), ErrorCode::kInvalidArgument);
  bad = op;
  bad.name = "";
  EXPECT_EQ(ErrorOf(bad), ErrorCode::kInvalidArgument);
  bad = op;
  bad.max_deliveries = -1;
  EXPECT_EQ(ErrorOf(bad), ErrorCode::kInvalidArgument);

  Publish("t", "before");
  Value<oplang::Done>(op);
  Value<oplang::Done>(op);  // same options: a no-op
  oplang::SubscribePull other = op;
  other.ack_timeout = kAckTimeout + 1;
  EXPECT_EQ(ErrorOf(other), ErrorCode::kOptionsMismatch);
  other = op;
  other.filter = {{"k", "v"}};
  EXPECT_EQ(ErrorOf(other), ErrorCode::kOptionsMismatch);
  other = op;
  other.start.kind = model::Start::Kind::kBeginning;
  EXPECT_EQ(ErrorOf(other), ErrorCode::kOptionsMismatch);

  // Start at the end: only what is published after the subscribe.
  EXPECT_EQ(Publish("t", "after"), 1u);
  const std::vector<Received> got = Poll("t", "s");
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].offset, 1u);

  EXPECT_EQ(ErrorOf(oplang::Poll{"nope", "s", "m", 1}), ErrorCode::kUnknownTopic);
  EXPECT_EQ(ErrorOf(oplang::Poll{"t", "nope", "m", 1}), ErrorCode::kUnknownSubscription);
  EXPECT_EQ(ErrorOf(oplang::Poll{"t", "s", "m", 0}), ErrorCode::kInvalidArgument);
  EXPECT_EQ(ErrorOf(oplang::Poll{"t", "s", "", 1}), ErrorCode::kInvalidArgument);
  EXPECT_EQ(ErrorOf(oplang::Ack{"t", "nope", 1, "m"}), ErrorCode::kUnknownSubscription);
  EXPECT_EQ(ErrorOf(oplang::Nack{"nope", "s", 1, "m"}), ErrorCode::kUnknownTopic);
  EXPECT_EQ(ErrorOf(oplang::GetDeadLetters{"t", "nope"}), ErrorCode::kUnknownSubscription);
  EXPECT_EQ(ErrorOf(oplang::Advance{-1}), ErrorCode::kInvalidArgument);
  EXPECT_FALSE(Ack("t", "s", 7));  // never polled

  EXPECT_FALSE(Value<oplang::BoolResult>(oplang::Unsubscribe{"t", "nope"}).value);
  EXPECT_EQ(ErrorOf(oplang::Unsubscribe{"nope", "s"}), ErrorCode::kUnknownTopic);
  EXPECT_TRUE(Value<oplang::BoolResult>(oplang::Unsubscribe{"t", "s"}).value);
  EXPECT_EQ(ErrorOf(oplang::Poll{"t", "s", "m", 1}), ErrorCode::kUnknownSubscription);
  EXPECT_TRUE(Value<std::vector<model::Expired>>(oplang::Expire{}).empty());
}

// R8 on a push consumer: a drain serves topics, then their push subscriptions, in creation
// order, each until nothing is pending or its handler fails; the failed message comes back
// at the next drain, attempt 2. Every step is also judged against the model.
TEST_F(JetStreamTargetTest, DrainServesEachPushSubscriptionInCreationOrderUntilAFailure) {
  using model::Verdict;
  const oplang::Script script = {
      oplang::CreateTopic{"t"},
      oplang::CreateTopic{"u"},
      push("u", "x", {}),
      push("t", "y", {Verdict::kConfirm, Verdict::kReject}),
      push("t", "a", {}),
      oplang::Publish{"t", "m0", {}, ""},
      oplang::Publish{"t", "m1", {}, ""},
      oplang::Publish{"u", "n0", {}, ""},
      oplang::Drain{},
      oplang::Drain{},
      oplang::Drain{},
  };
  std::vector<oplang::Outcome> drains;
  for (const oplang::Op& op : script) {
    const oplang::Outcome out = Step(op);
    ASSERT_FALSE(out.error) << oplang::print(op) << " -> " << oplang::print(out);
    if (std::holds_alternative<oplang::Drain>(op)) drains.push_back(out);
  }
  EXPECT_EQ(offers(drains[0]),
            (std::vector<std::string>{"t/y m0#1", "t/y m1#1", "t/a m0#1", "t/a m1#1", "u/x n0#1"}));
  EXPECT_EQ(std::get<oplang::CountResult>(drains[0].value).count, 4u);
  EXPECT_EQ(offers(drains[1]), (std::vector<std::string>{"t/y m1#2"}));
  EXPECT_TRUE(drains[2].calls.empty());
  target_.reset();
  target_ = std::make_unique<JetStreamTarget>(server_->url(), "again", kUnitMs);
  const conformance::Verdict judged = check(*target_, script, jetstream_profile());
  EXPECT_FALSE(judged.violation) << judged.violation->rule;
}

// R7, R23 on push: the last allowed failure and a terminate dead-letter the message at once
// (the server pushes the next offer: dead_letter_when_offered_again is the pull's), and the
// next drain goes on with the next message.
TEST_F(JetStreamTargetTest, PushDeadLettersAtTheLastFailureAndAtATerminate) {
  using model::Verdict;
  Create("t");
  Value<oplang::Done>(
      push("t", "h", {Verdict::kReject, Verdict::kThrowStd, Verdict::kTerminate}, 2));
  Publish("t", "a");
  Publish("t", "b");
  Publish("t", "c");
  EXPECT_EQ(Value<oplang::CountResult>(oplang::Drain{}).count, 0u);  // a#1 rejected
  EXPECT_TRUE(DeadLetters("t", "h").empty());
  EXPECT_EQ(Value<oplang::CountResult>(oplang::Drain{}).count, 0u);  // a#2 threw: dead
  std::vector<model::DeadLetter> dead = DeadLettersOnce("t", "h", 1);
  ASSERT_EQ(dead.size(), 1u);
  EXPECT_EQ(dead[0].offset, 0u);
  EXPECT_EQ(dead[0].attempts, 2);
  EXPECT_EQ(Value<oplang::CountResult>(oplang::Drain{}).count, 0u);  // b#1 terminated
  dead = DeadLettersOnce("t", "h", 2);
  ASSERT_EQ(dead.size(), 2u);
  EXPECT_EQ(dead[1].offset, 1u);
  EXPECT_EQ(dead[1].reason, "terminated");
  const oplang::Outcome last = Step(oplang::Drain{});
  ASSERT_EQ(last.calls.size(), 1u);  // c, confirmed once the script is used up
  EXPECT_EQ(last.calls[0].payload, "c");
  EXPECT_EQ(std::get<oplang::CountResult>(last.value).count, 1u);
}

// R11, R14 between the kinds (push_steps.h).
TEST_F(JetStreamTargetTest, PushAndPullNamesAreKeptApart) {
  expect_push_and_pull_names_kept_apart(*target_, kAckTimeout);
}

TEST_F(JetStreamTargetTest, OpsOutsideTheSubsetAreRefused) {
  EXPECT_THROW(Step(oplang::CreateTopic{"t", 0, 100}), std::invalid_argument);  // bytes
  oplang::Subscribe grouped;
  grouped.topic = "t";
  grouped.name = "h";
  grouped.group = "g";  // R10: deliver groups are not served yet
  EXPECT_THROW(Step(grouped), std::invalid_argument);
  EXPECT_EQ(target_->name(), "jetstream");
}

// Faults: a server that dies under a run is an engine failure (TargetFailure), never an
// outcome the kit would judge; a missing binary is one line naming the package.
TEST(JetStreamFaults, AServerThatDiesIsAnEngineFailureNotAnOutcome) {
  NatsServer server;
  JetStreamTarget target(server.url(), "faults", 20);
  ASSERT_FALSE(target.step(oplang::CreateTopic{"t"}).error);
  server.kill();
  EXPECT_FALSE(server.alive());
  EXPECT_THROW(target.step(oplang::Publish{"t", "lost", {}, ""}), TargetFailure);
}

// A poll returns only once the server has ended its pull request: the server hands a
// message that becomes available (another worker's nack) to any request still open and
// counts it as delivered (JetStreamRawProbe.AnOpenPullRequestTakesANackedMessageAsADelivery),
// so a poll that gave up on its own clock would leave a delivery nobody saw. With the server
// paused the poll cannot know that its request ended, and waits; resumed, it answers.
TEST(JetStreamFaults, APollWaitsForTheServerToEndItsPullRequest) {
  NatsServer server;
  JetStreamTarget target(server.url(), "pollwait", 20);
  ASSERT_FALSE(target.step(oplang::CreateTopic{"t"}).error);
  oplang::SubscribePull sub;
  sub.topic = "t";
  sub.name = "s";
  sub.ack_timeout = 10;
  ASSERT_FALSE(target.step(sub).error);
  server.pause();
  auto poll = std::async(std::launch::async, [&target] {
    return target.step(oplang::Poll{"t", "s", "m", 1});
  });
  // Twenty times the expiry the request asks for: a poll on its own clock is back by now.
  const bool back_while_paused =
      poll.wait_for(std::chrono::milliseconds(300)) == std::future_status::ready;
  server.resume();
  EXPECT_FALSE(back_while_paused);
  const oplang::Outcome out = poll.get();
  EXPECT_FALSE(out.error.has_value()) << oplang::print(out);
  const auto* got = std::get_if<std::vector<Received>>(&out.value);
  ASSERT_NE(got, nullptr) << oplang::print(out);
  EXPECT_TRUE(got->empty());
  EXPECT_TRUE(server.alive()) << server.log_tail(20);
}

// A run is void by the engine's lag as well as the client's (Target::lag): a server that
// answers late, as one starved of CPU does (its ack-wait timers then fire late by as much), is
// measured by a round trip. Here the client is on the model's clock (an advance waited for
// it) and the server is stopped for a second: the lag is the server's second.
TEST(JetStreamFaults, LagCountsTheServersRoundTripNotOnlyTheClientsClock) {
  NatsServer server;
  JetStreamTarget target(server.url(), "lagrtt", kUnitMs);
  ASSERT_FALSE(target.step(oplang::CreateTopic{"t"}).error);
  ASSERT_FALSE(target.step(oplang::Advance{10}).error);  // the client's clock caught up
  server.pause();
  auto resume = std::async(std::launch::async, [&server] {
    std::this_thread::sleep_for(std::chrono::milliseconds(1000));
    server.resume();
  });
  const model::Millis lag = target.lag();
  resume.get();
  EXPECT_GE(lag, 800 / kUnitMs) << "the server was stopped for 1000 ms";
  EXPECT_TRUE(server.alive()) << server.log_tail(20);
}

// The fixture's restart is a real one, on the same port and store: after kill -9 and after
// a clean restart the stream and its messages are there, and a target made to reconnect
// serves again without being made anew.
TEST(JetStreamFaults, RestartKeepsTheStoreAndAReconnectingTargetServesAgain) {
  NatsServer server;
  const int port = server.port();
  JetStreamTarget target(server.url(), "restart", 1, /*reconnect=*/true);
  ASSERT_FALSE(target.step(oplang::CreateTopic{"t"}).error);
  oplang::SubscribePull sp;
  sp.topic = "t";
  sp.name = "s";
  sp.ack_timeout = 1000;
  sp.start = model::Start{model::Start::Kind::kBeginning, 0};
  ASSERT_FALSE(target.step(sp).error);
  ASSERT_FALSE(target.step(oplang::Publish{"t", "m0", {}, ""}).error);
  server.kill9();
  server.restart();
  EXPECT_EQ(server.port(), port);
  oplang::Outcome published;
  for (int i = 0; i < 100; ++i) {  // the client reconnects on its own, within ~10 s
    try {
      published = target.step(oplang::Publish{"t", "m1", {}, ""});
      break;
    } catch (const TargetFailure&) {
      ::usleep(100000);
    }
  }
  ASSERT_FALSE(published.error);
  server.restart();
  std::vector<std::string> got;
  for (int i = 0; i < 100 && got.size() < 2; ++i) {
    try {
      const oplang::Outcome o = target.step(oplang::Poll{"t", "s", "w", 10});
      for (const model::Received& m : std::get<std::vector<model::Received>>(o.value)) {
        got.push_back(m.payload);
      }
    } catch (const TargetFailure&) {
    }
    if (got.size() < 2) ::usleep(100000);
  }
  EXPECT_EQ(got, (std::vector<std::string>{"m0", "m1"}));
}

// The three-node cluster forms on loopback, an R3 stream has a leader the fixture names,
// and with that leader killed the other two still take publishes (a client reconnecting
// through the list of nodes).
TEST(JetStreamCluster, FormsNamesTheLeaderAndSurvivesItsKill) {
  NatsCluster cluster;
  JetStreamTarget target(cluster.urls(), "cluster", 1, /*reconnect=*/true, /*replicas=*/3);
  ASSERT_FALSE(target.step(oplang::CreateTopic{"t"}).error);
  const int leader = cluster.leader_of(target.stream_of("t"));
  ASSERT_GE(leader, 0);
  cluster.node(leader).kill9();
  // The cluster's own state: a new leader elected among the two left.
  const int next = cluster.leader_of(target.stream_of("t"), leader);
  ASSERT_GE(next, 0) << "no new leader within 30 s";
  bool published = false;
  for (int i = 0; i < 100 && !published; ++i) {  // the client reconnects to a live node
    try {
      published = !target.step(oplang::Publish{"t", "m", {}, ""}).error;
    } catch (const TargetFailure&) {
      ::usleep(100000);
    }
  }
  EXPECT_TRUE(published);
  cluster.node(leader).restart();
  EXPECT_TRUE(cluster.node(leader).alive());
  EXPECT_TRUE(cluster.wait_current(target.stream_of("t"), leader))
      << "the restarted node never caught up";
}

// The stream's peers as the server reports them through libnats (leader first), asked of
// the cluster's first node; empty if it did not answer.
std::vector<std::string> raw_peers(NatsCluster& cluster, const std::string& stream) {
  natsConnection* nc = nullptr;
  jsCtx* js = nullptr;
  jsStreamInfo* si = nullptr;
  std::vector<std::string> peers;
  if (natsConnection_ConnectTo(&nc, cluster.node(0).url().c_str()) == NATS_OK &&
      natsConnection_JetStream(&js, nc, nullptr) == NATS_OK &&
      js_GetStreamInfo(&si, js, stream.c_str(), nullptr, nullptr) == NATS_OK &&
      si->Cluster != nullptr && si->Cluster->Leader != nullptr) {
    peers.emplace_back(si->Cluster->Leader);
    for (int i = 0; i < si->Cluster->ReplicasLen; ++i) {
      if (si->Cluster->Replicas[i]->Current) peers.emplace_back(si->Cluster->Replicas[i]->Name);
    }
  }
  jsStreamInfo_Destroy(si);
  jsCtx_Destroy(js);
  natsConnection_Destroy(nc);
  return peers;
}

// The membership fault's two halves: remove_replica takes the named node (a follower, then
// the leader) out of the stream's peers, and add_replica_back makes it a current peer
// again, each as the server itself reports; publishes are taken throughout.
TEST(JetStreamCluster, AMembershipChangeTakesTheNamedNodeOutAndBringsItBack) {
  NatsCluster cluster;
  JetStreamTarget target(cluster.urls(), "members", 1, /*reconnect=*/true, /*replicas=*/3);
  ASSERT_FALSE(target.step(oplang::CreateTopic{"t"}).error);
  const std::string stream = target.stream_of("t");
  const int leader = cluster.leader_of(stream);
  ASSERT_GE(leader, 0);
  for (const int node : {(leader + 1) % 3, leader}) {
    const std::string name = "n" + std::to_string(node + 1);
    const std::string answer = cluster.remove_replica(stream, node);
    EXPECT_NE(answer, "") << "the server never answered the removal";
    std::vector<std::string> peers = raw_peers(cluster, stream);
    EXPECT_EQ(peers.size(), 2u);
    EXPECT_EQ(std::count(peers.begin(), peers.end(), name), 0) << name << " is still a peer";
    ASSERT_FALSE(target.step(oplang::Publish{"t", "m", {}, ""}).error);
    cluster.add_replica_back(stream, node, std::chrono::seconds(30));
    // Current as the leader reports it: the kit's own wait said so, the server says so too.
    for (int i = 0; i < 100 && raw_peers(cluster, stream).size() < 3; ++i) ::usleep(100000);
    peers = raw_peers(cluster, stream);
    EXPECT_EQ(peers.size(), 3u);
    EXPECT_EQ(std::count(peers.begin(), peers.end(), name), 1) << name << " did not come back";
  }
}

// What an R3 stream acknowledged survives its leader's kill (the other two elect a new
// one), then the kill of the remaining follower (the new leader alone is no majority: it
// serves again only once the first victim has rejoined), and comes back in order.
TEST(JetStreamCluster, AnR3StreamKeepsWhatItAcknowledgedThroughALeaderAndAFollowerKill) {
  NatsCluster cluster;
  JetStreamTarget target(cluster.urls(), "kept", 20, /*reconnect=*/true, /*replicas=*/3);
  ASSERT_FALSE(target.step(oplang::CreateTopic{"t"}).error);
  oplang::SubscribePull sub;
  sub.topic = "t";
  sub.name = "s";
  sub.ack_timeout = 1000;
  sub.start = model::Start{model::Start::Kind::kBeginning};
  ASSERT_FALSE(target.step(sub).error);
  ASSERT_FALSE(target.step(oplang::Publish{"t", "a", {}, ""}).error);
  const int leader = cluster.leader_of(target.stream_of("t"));
  ASSERT_GE(leader, 0);
  cluster.node(leader).kill9();
  // The cluster's own state: a new leader elected among the two left.
  const int next = cluster.leader_of(target.stream_of("t"), leader);
  ASSERT_GE(next, 0) << "no new leader within 30 s";
  bool published = false;
  for (int i = 0; i < 100 && !published; ++i) {  // the client reconnects to a live node
    try {
      published = !target.step(oplang::Publish{"t", "b", {}, ""}).error;
    } catch (const TargetFailure&) {
      ::usleep(100000);
    }
  }
  ASSERT_TRUE(published) << "no publish accepted after the leader was killed";
  cluster.node(3 - leader - next).kill9();  // the node neither killed nor leading
  cluster.node(leader).restart();
  // Wait on the cluster's state, not on time: the restarted node has caught up, and the
  // consumer's own group has a leader again.
  ASSERT_TRUE(cluster.wait_current(target.stream_of("t"), leader))
      << "the restarted node never caught up";
  ASSERT_GE(cluster.consumer_leader(target.stream_of("t"), "s"), 0)
      << "the consumer elected no leader";
  std::vector<std::string> got;
  std::string last_error;
  // At most ~90 s: the consumer's own group elects a leader once the restarted node has
  // caught up, and until then a no-wait fetch times out like an empty one. 16 s is usual;
  // a CI run with other tests on both cores once took more than 30.
  for (int i = 0; i < 900 && got.size() < 2; ++i) {
    try {
      const oplang::Outcome o = target.step(oplang::Poll{"t", "s", "w", 10});
      if (o.error) {
        last_error = oplang::print(o);
      } else {
        for (const model::Received& r : std::get<std::vector<model::Received>>(o.value)) {
          got.push_back(r.payload);
        }
      }
    } catch (const TargetFailure& e) {
      last_error = e.what();  // a poll during the election
    }
    if (got.size() < 2) ::usleep(100000);
  }
  EXPECT_EQ(got, (std::vector<std::string>{"a", "b"}))
      << "last error: " << last_error
      << "; the stream's leader now: " << cluster.leader_of(target.stream_of("t"));
}

TEST(JetStreamFaults, AMissingServerIsOneLineNamingThePackage) {
  ::setenv("NATS_SERVER_BIN", "/nonexistent/nats-server", 1);
  try {
    NatsServer server;
    ::unsetenv("NATS_SERVER_BIN");
    FAIL() << "a server started from a binary that does not exist";
  } catch (const TargetFailure& e) {
    ::unsetenv("NATS_SERVER_BIN");
    EXPECT_NE(std::string(e.what()).find("apt-get install -y nats-server"), std::string::npos)
        << e.what();
  }
}

// A deployment of the user's own (--url): the tool starts no server, judges what it finds,
// and leaves no stream behind (its prefix's streams go after each script).
TEST(ConformanceUrl, PointedAtADeploymentItStartsNoServerAndLeavesNoStream) {
  NatsServer server;
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("aloc-url-test-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string out = (dir / "out.txt").string();
  const std::string report = (dir / "report.md").string();
  const std::string command = std::string(CONFORMANCE_TOOL) + " --target jetstream --url " +
                              server.url() + " --seconds 3 --parallel 2 --out " + dir.string() +
                              " --report " + report + " >" + out + " 2>&1";
  const int status = std::system(command.c_str());
  std::ifstream out_file(out);
  const std::string output((std::istreambuf_iterator<char>(out_file)),
                           std::istreambuf_iterator<char>());
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << command << "\n" << output;
  EXPECT_EQ(output.find("nats-server started"), std::string::npos) << output;
  std::ifstream report_file(report);
  const std::string table((std::istreambuf_iterator<char>(report_file)),
                          std::istreambuf_iterator<char>());
  EXPECT_NE(table.find("under profile 'jetstream'"), std::string::npos) << table;
  EXPECT_NE(table.find("| L | parallel pull workers"), std::string::npos) << table;

  natsConnection* nc = nullptr;
  ASSERT_EQ(natsConnection_ConnectTo(&nc, server.url().c_str()), NATS_OK);
  jsCtx* js = nullptr;
  ASSERT_EQ(natsConnection_JetStream(&js, nc, nullptr), NATS_OK);
  jsStreamNamesList* names = nullptr;
  const natsStatus listed = js_StreamNames(&names, js, nullptr, nullptr);
  // NATS_NOT_FOUND: no stream at all.
  EXPECT_TRUE(listed == NATS_NOT_FOUND || (listed == NATS_OK && names->Count == 0))
      << "streams left behind: " << (listed == NATS_OK ? names->Count : -1);
  jsStreamNamesList_Destroy(names);
  jsCtx_Destroy(js);
  natsConnection_Destroy(nc);
  std::filesystem::remove_all(dir);
  EXPECT_TRUE(server.alive()) << server.log_tail(20);
}

// The tool started as a child, stderr to `err` (stdout to `out`, or nowhere); its pid.
pid_t start_tool(const std::vector<std::string>& args, const std::string& err,
                 const std::string& out = "/dev/null") {
  std::vector<std::string> argv = {CONFORMANCE_TOOL};
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<char*> ptrs;
  for (std::string& a : argv) ptrs.push_back(a.data());
  ptrs.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid == 0) {
    std::freopen(out.c_str(), "w", stdout);
    std::freopen(err.c_str(), "w", stderr);
    ::execv(ptrs[0], ptrs.data());
    ::_exit(127);
  }
  return pid;
}

std::string read_all(const std::string& path) {
  std::ifstream in(path);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// The names of the streams on the server at url that start with prefix.
std::vector<std::string> streams_with(const std::string& url, const std::string& prefix) {
  natsConnection* nc = nullptr;
  jsCtx* js = nullptr;
  jsStreamNamesList* names = nullptr;
  std::vector<std::string> out;
  if (natsConnection_ConnectTo(&nc, url.c_str()) == NATS_OK &&
      natsConnection_JetStream(&js, nc, nullptr) == NATS_OK &&
      js_StreamNames(&names, js, nullptr, nullptr) == NATS_OK) {
    for (int i = 0; i < names->Count; ++i) {
      if (std::string(names->List[i]).starts_with(prefix)) out.push_back(names->List[i]);
    }
  }
  jsStreamNamesList_Destroy(names);
  jsCtx_Destroy(js);
  natsConnection_Destroy(nc);
  return out;
}

// SIGKILL of the kit runs no destructor. The nats-server it started still goes (its
// watchdog), and on a deployment of the user's own (--url) the streams it was using stay
// until the next run, which removes them by their prefix (the dead pid's) before it starts.
TEST(ConformanceUrl, AKilledKitLeavesNoServerAndTheNextRunRemovesItsStreams) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("aloc-kill-test-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string err = (dir / "err.txt").string();

  // Its own server: gone with it.
  const pid_t own =
      start_tool({"--target", "jetstream", "--seconds", "120", "--out", dir.string()}, err);
  ASSERT_GT(own, 0);
  int port = 0;
  for (int i = 0; i < 600 && port == 0; ++i) {  // up to 30 s for the line naming the server
    const std::string text = read_all(err);
    const std::size_t at = text.find("nats-server started at nats://127.0.0.1:");
    if (at != std::string::npos && text.find('\n', at) != std::string::npos) {
      port = std::atoi(text.c_str() + at +
                       std::string("nats-server started at nats://127.0.0.1:").size());
    }
    if (port == 0) ::usleep(50 * 1000);
  }
  ASSERT_GT(port, 0) << read_all(err);
  ASSERT_TRUE(accepts_connection(port));
  ::kill(own, SIGKILL);
  int status = 0;
  ::waitpid(own, &status, 0);
  bool gone = false;
  for (int i = 0; i < 300 && !gone; ++i) {  // the watchdog looks once a second
    gone = !accepts_connection(port);
    if (!gone) ::usleep(50 * 1000);
  }
  EXPECT_TRUE(gone) << "the nats-server on port " << port << " outlived the kit that started it";

  // The user's server: the killed run's streams stay, the next run removes them.
  NatsServer server;
  const pid_t run = start_tool(
      {"--target", "jetstream", "--url", server.url(), "--seconds", "120", "--out", dir.string()},
      err);
  ASSERT_GT(run, 0);
  const std::string prefix = "aloc" + std::to_string(run) + "_";
  for (int i = 0; i < 600 && streams_with(server.url(), prefix).empty(); ++i) ::usleep(50 * 1000);
  ::kill(run, SIGKILL);
  ::waitpid(run, &status, 0);
  ASSERT_FALSE(streams_with(server.url(), prefix).empty()) << "no stream to leave behind";
  const std::string again = std::string(CONFORMANCE_TOOL) + " --target jetstream --url " +
                            server.url() + " --seconds 1 --out " + dir.string() + " >/dev/null 2>" +
                            err;
  const int rc = std::system(again.c_str());
  EXPECT_TRUE(WIFEXITED(rc) && WEXITSTATUS(rc) == 0) << read_all(err);
  EXPECT_NE(read_all(err).find("left by a killed run"), std::string::npos) << read_all(err);
  EXPECT_TRUE(streams_with(server.url(), prefix).empty());
  std::filesystem::remove_all(dir);
}

// A loaded machine: two kits at once, each with its own nats-server, on two cores. Whatever
// the load does to timing shows up as void runs or as disagreements that do not fail again
// (exit 4, not judged), never as a reported violation (exit 1).
TEST(ConformanceUrl, TwoKitsAtOnceOnALoadedMachineReportNoViolation) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("aloc-load-test-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::vector<pid_t> kits;
  for (const char* seed : {"1", "500"}) {
    const std::string stem = (dir / seed).string();
    kits.push_back(
        start_tool({"--target", "jetstream", "--seconds", "20", "--seed", seed, "--out", stem},
                   stem + ".err", stem + ".out"));
  }
  for (std::size_t i = 0; i < kits.size(); ++i) {
    int status = 0;
    ASSERT_EQ(::waitpid(kits[i], &status, 0), kits[i]);
    const std::string stem = (dir / (i == 0 ? "1" : "500")).string();
    ASSERT_TRUE(WIFEXITED(status)) << read_all(stem + ".err");
    EXPECT_TRUE(WEXITSTATUS(status) == 0 || WEXITSTATUS(status) == 4)
        << "exit " << WEXITSTATUS(status) << "\n"
        << read_all(stem + ".out") << read_all(stem + ".err");
    EXPECT_NE(read_all(stem + ".out").find("under profile 'jetstream'"), std::string::npos);
  }
  std::filesystem::remove_all(dir);
}

// --faults against a deployment the user names (--url): the tool starts no server; the
// user's own shell commands kill it (-9) and restart it on the same store, the tool waits
// until it serves again, and the run ends with the anomaly table. Here the "deployment" is a
// nats-server the test starts through a shell, as a user's service manager would, watched
// by a loop that kills it when the test is gone.
TEST(ConformanceFaults, AUsersDeploymentIsKilledAndRestartedByItsOwnCommands) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("aloc-deploy-test-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir / "store");
  const int port = free_loopback_port();
  const std::string pid = (dir / "pid").string();
  const std::string binary = find_server_binary("NATS_SERVER_BIN", "nats-server",
                                                {"/usr/sbin", "/usr/local/sbin", "/usr/local/bin"});
  ASSERT_FALSE(binary.empty()) << "no nats-server (apt-get install -y nats-server)";
  const std::string start = "sh -c 'echo $$ > " + pid + "; exec " + binary +
                            " -js -a 127.0.0.1 -p " + std::to_string(port) + " -sd " +
                            (dir / "store").string() + "' >>" + (dir / "server.log").string() +
                            " 2>&1 &";
  const std::string watchdog = "(while kill -0 " + std::to_string(::getpid()) +
                               " 2>/dev/null; do sleep 1; done; kill -9 $(cat " + pid +
                               ") 2>/dev/null) >/dev/null 2>&1 &";
  ASSERT_EQ(std::system((start + " " + watchdog).c_str()), 0);
  const std::string url = "nats://127.0.0.1:" + std::to_string(port);
  for (int i = 0; i < 200 && !jetstream_answers(url); ++i) ::usleep(50 * 1000);
  ASSERT_TRUE(jetstream_answers(url)) << read_all((dir / "server.log").string());
  const std::string kill = "kill -9 $(cat " + pid + ")";
  const std::string restart = "kill $(cat " + pid + ") 2>/dev/null; while kill -0 $(cat " + pid +
                              ") 2>/dev/null; do sleep 0.05; done; " + start;
  const std::string out = (dir / "out.txt").string();
  const std::string err = (dir / "err.txt").string();
  const pid_t tool = start_tool({"--target", "jetstream", "--faults", "--url", url, "--seconds",
                                 "8", "--seed", "3", "--fault", "both", "--kill-command", kill,
                                 "--restart-command", restart, "--out", dir.string()},
                                err, out);
  int status = 0;
  ASSERT_EQ(::waitpid(tool, &status, 0), tool);
  const std::string output = read_all(out) + read_all(err);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << output;
  EXPECT_EQ(output.find("nats-server started"), std::string::npos) << output;
  EXPECT_NE(output.find("faults on the deployment at " + url), std::string::npos) << output;
  EXPECT_NE(output.find("faults: restart: "), std::string::npos) << output;
  EXPECT_NE(output.find("| jetstream | the user's deployment | lost |"), std::string::npos)
      << output;
  EXPECT_NE(output.find("--restart-command"), std::string::npos) << output;  // the replay line
  EXPECT_TRUE(jetstream_answers(url)) << "the deployment is not serving after the run";
  std::system(("kill -9 $(cat " + pid + ") 2>/dev/null").c_str());
  std::filesystem::remove_all(dir);
}

// --help says every flag, its default and every exit code, on stdout, and exits 0.
TEST(ConformanceUrl, HelpListsEveryFlagAndExitCode) {
  const std::filesystem::path out =
      std::filesystem::temp_directory_path() / ("aloc-help-" + std::to_string(::getpid()));
  const std::string command = std::string(CONFORMANCE_TOOL) + " --help >" + out.string();
  const int rc = std::system(command.c_str());
  const std::string help = read_all(out.string());
  std::filesystem::remove(out);
  EXPECT_TRUE(WIFEXITED(rc) && WEXITSTATUS(rc) == 0);
  for (const char* flag :
       {"--target", "--url", "--seconds", "--seed", "--unit", "--parallel", "--profile", "--report",
        "--out", "--first", "--replay", "--faults", "--fault", "--appendfsync", "--strict",
        "--allow", "--kill-command", "--restart-command", "--help"}) {
    const std::string line = std::string("\n  ") + flag;
    bool found = false;  // the flag itself, not a longer one it begins (--fault, --faults)
    for (std::size_t at = help.find(line); at != std::string::npos && !found;
         at = help.find(line, at + 1)) {
      const char after = help[at + line.size()];
      found = after == ' ' || after == ',';
    }
    EXPECT_TRUE(found) << flag;
  }
  for (const char* code : {"\n  0 ", "\n  1 ", "\n  2 ", "\n  3 ", "\n  4 ", "\n  130 "}) {
    EXPECT_NE(help.find(code), std::string::npos) << code;
  }
}

TEST(InSubsetTest, CommonSubset) {
  EXPECT_TRUE(in_subset(oplang::CreateTopic{"t"}));
  EXPECT_FALSE(in_subset(oplang::CreateTopic{"t", 10, 0}));
  EXPECT_FALSE(in_subset(oplang::CreateTopic{"t", 0, 100}));
  EXPECT_TRUE(in_subset(oplang::DeleteTopic{"t"}));
  EXPECT_TRUE(in_subset(oplang::Publish{"t", "p", {{"k", "v"}}, ""}));
  EXPECT_FALSE(in_subset(oplang::Publish{"t", "p", {}, "key"}));
  oplang::SubscribePull pull;
  pull.start.kind = model::Start::Kind::kBeginning;
  EXPECT_TRUE(in_subset(pull));
  pull.start.kind = model::Start::Kind::kEnd;
  EXPECT_TRUE(in_subset(pull));
  pull.start = model::Start{model::Start::Kind::kOffset, 3};
  EXPECT_FALSE(in_subset(pull));
  EXPECT_TRUE(in_subset(oplang::Unsubscribe{"t", "s"}));
  EXPECT_TRUE(in_subset(oplang::Poll{"t", "s", "m", 1}));
  EXPECT_TRUE(in_subset(oplang::Ack{"t", "s", 0, "m"}));
  EXPECT_FALSE(in_subset(oplang::Ack{"t", "s", 0, "m", oplang::Which::kAll}));
  EXPECT_TRUE(in_subset(oplang::Nack{"t", "s", 0, "m"}));
  EXPECT_FALSE(in_subset(oplang::Nack{"t", "s", 0, "m", oplang::Which::kOldest}));
  EXPECT_TRUE(in_subset(oplang::Advance{5}));
  EXPECT_TRUE(in_subset(oplang::Expire{}));
  EXPECT_TRUE(in_subset(oplang::GetDeadLetters{"t", "s"}));
  EXPECT_FALSE(in_subset(oplang::Subscribe{}));
  EXPECT_FALSE(in_subset(oplang::Seek{}));
  oplang::Extend extend{"t", "s", 0, "m", 10};
  EXPECT_TRUE(in_subset(extend));
  extend.which = oplang::Which::kOldest;
  EXPECT_FALSE(in_subset(extend));
  EXPECT_FALSE(in_subset(oplang::GetStats{}));
  EXPECT_FALSE(in_subset(oplang::PollWait{}));
  EXPECT_FALSE(in_subset(oplang::Restart{}));
}

}  // namespace
}  // namespace conformance
