// The Redis Streams target against a real redis-server, one model rule per test (SPEC R1,
// R3, R5, R7, R11, R14, R23), and the redis-server fixture: a crash and a restart on the same
// directory, a missing binary, a port in use. Every test starts its own server. One model
// ms is 20 real ms: an ack timeout of 10 is 200 ms of idle time in the group's pending
// list, and every wait past a deadline leaves at least 200 ms of margin.
#include "conformance/redis_target.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <hiredis/hiredis.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>
#include <iterator>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <variant>
#include <vector>

#include "conformance/local_process.h"
#include "conformance/profile.h"
#include "conformance/redis_server.h"
#include "conformance/runner.h"
#include "conformance/target.h"
#include "model/errors.h"
#include "oplang/ops.h"
#include "oplang/outcome.h"
#include "oplang/text.h"
#include "push_steps.h"

namespace conformance {
namespace {

// A redis-server's options: its AOF fsync (none: no AOF) and port (0: a free one).
RedisServerOptions redis_options(std::optional<RedisServerOptions::Fsync> fsync, int port = 0) {
  RedisServerOptions o;
  o.appendonly = fsync;
  o.port = port;
  return o;
}

using model::ErrorCode;
using model::Received;

constexpr model::Millis kUnitMs = 20;
constexpr model::Millis kAckTimeout = 10;

// A raw connection for what the adapter does not show (XLEN, a bare XACK).
class Raw {
 public:
  explicit Raw(int port) : c_(redisConnect("127.0.0.1", port)) {}
  ~Raw() { redisFree(c_); }
  Raw(const Raw&) = delete;
  Raw& operator=(const Raw&) = delete;
  // The integer reply of a command (-1 for anything else).
  long long Integer(const std::vector<std::string>& args) {
    std::vector<const char*> argv;
    std::vector<std::size_t> lens;
    for (const std::string& a : args) {
      argv.push_back(a.data());
      lens.push_back(a.size());
    }
    auto* r = static_cast<redisReply*>(
        redisCommandArgv(c_, static_cast<int>(args.size()), argv.data(), lens.data()));
    const long long v = r != nullptr && r->type == REDIS_REPLY_INTEGER ? r->integer : -1;
    if (r != nullptr) freeReplyObject(r);
    return v;
  }
  // The value CONFIG GET answers for one parameter ("" if none).
  std::string Config(const std::string& name) {
    auto* r = static_cast<redisReply*>(redisCommand(c_, "CONFIG GET %s", name.c_str()));
    std::string v;
    if (r != nullptr && r->type == REDIS_REPLY_ARRAY && r->elements == 2) {
      v.assign(r->element[1]->str, r->element[1]->len);
    }
    if (r != nullptr) freeReplyObject(r);
    return v;
  }

 private:
  redisContext* c_;
};

class RedisTargetTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = std::make_unique<RedisServer>();
    target_ = std::make_unique<RedisTarget>(server_->url(), "test", kUnitMs);
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
  std::vector<model::Expired> Expire() {
    return Value<std::vector<model::Expired>>(oplang::Expire{});
  }
  std::vector<model::DeadLetter> DeadLetters(const std::string& topic, const std::string& sub) {
    return Value<std::vector<model::DeadLetter>>(oplang::GetDeadLetters{topic, sub});
  }

  std::unique_ptr<RedisServer> server_;
  std::unique_ptr<RedisTarget> target_;
};

// A stream the engine lost (deleted behind the adapter's back here; a failover onto an
// empty replica in a fault run) is the engine's own answer passed on: NOGROUP becomes
// unknown_subscription, the call is no failure, and nothing is made again to hide it.
TEST_F(RedisTargetTest, AGroupTheEngineLostIsRefusedAsUnknownAndNeverMadeAgain) {
  Create("t");
  Subscribe("t", "s");
  Publish("t", "m0");
  Raw raw(server_->port());
  ASSERT_EQ(raw.Integer({"DEL", "test:t"}), 1) << "the stream's key is not test:t";
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(ErrorOf(oplang::Poll{"t", "s", "m", 10}), ErrorCode::kUnknownSubscription);
  }
  EXPECT_EQ(raw.Integer({"EXISTS", "test:t"}), 0) << "the adapter made the stream again";
}

// A run is void by the engine's lag as well as the client's (Target::lag): a server that
// answers late, as one starved of CPU does, is measured by a PING's round trip. Here the
// client is on the model's clock (an advance waited for it) and the server is stopped for a
// second: the lag is the server's second.
TEST_F(RedisTargetTest, LagCountsTheServersRoundTripNotOnlyTheClientsClock) {
  ASSERT_FALSE(Step(oplang::CreateTopic{"t"}).error);
  ASSERT_FALSE(Step(oplang::Advance{10}).error);  // the client's clock caught up
  server_->pause();
  auto resume = std::async(std::launch::async, [this] {
    std::this_thread::sleep_for(std::chrono::milliseconds(1000));
    server_->resume();
  });
  const model::Millis lag = target_->lag();
  resume.get();
  EXPECT_GE(lag, 800 / kUnitMs) << "the server was stopped for 1000 ms";
}

// R2, R11: offsets from 0 in publish order, first attempt, deadline = now + ack_timeout.
TEST_F(RedisTargetTest, R11PollReturnsPublishedMessagesWithOffsetsAttemptAndDeadline) {
  Create("t");
  Subscribe("t", "s");
  EXPECT_EQ(Publish("t", "a"), 0u);
  EXPECT_EQ(Publish("t", "b", {{"k", "v"}}), 1u);
  EXPECT_EQ(Publish("t", std::string("\0x", 2)), 2u);  // binary-safe
  Advance(3);
  const std::vector<Received> got = Poll("t", "s", 2);
  const std::vector<Received> want = {{0, "a", 1, 3 + kAckTimeout}, {1, "b", 1, 3 + kAckTimeout}};
  EXPECT_EQ(got, want);
  const std::vector<Received> rest = {{2, std::string("\0x", 2), 1, 3 + kAckTimeout}};
  EXPECT_EQ(Poll("t", "s"), rest);
  EXPECT_TRUE(Poll("t", "s").empty());  // all held
}

// R11: max bounds a poll; the rest comes with the next one; any max is served.
TEST_F(RedisTargetTest, R11PollReturnsAtMostMax) {
  Create("t");
  Subscribe("t", "s");
  for (const char* p : {"a", "b", "c"}) Publish("t", p);
  const std::vector<Received> first = Poll("t", "s", 2);
  ASSERT_EQ(first.size(), 2u);
  EXPECT_EQ(first[0].offset, 0u);
  EXPECT_EQ(first[1].offset, 1u);
  const std::vector<Received> second = Poll("t", "s", std::numeric_limits<std::size_t>::max());
  ASSERT_EQ(second.size(), 1u);
  EXPECT_EQ(second[0].offset, 2u);
}

// R7, R11: an acked message is done: not offered again once its ack timeout has passed.
TEST_F(RedisTargetTest, R11AckedMessageIsNotOfferedAgainAfterAckTimeout) {
  Create("t");
  Subscribe("t", "s");
  Publish("t", "a");
  ASSERT_EQ(Poll("t", "s").size(), 1u);
  EXPECT_TRUE(Ack("t", "s", 0));
  EXPECT_FALSE(Ack("t", "s", 0));  // no longer held
  Advance(kAckTimeout + 10);
  EXPECT_TRUE(Expire().empty());
  EXPECT_TRUE(Poll("t", "s").empty());
}

// R11: an unanswered message expires at its deadline and is offered again, attempt 2, to
// whoever polls; only the new holder may ack it, and a late ack is refused.
TEST_F(RedisTargetTest, R11UnackedMessageIsOfferedAgainAfterAckTimeout) {
  Create("t");
  Subscribe("t", "s");
  Publish("t", "a");
  ASSERT_EQ(Poll("t", "s").size(), 1u);
  Advance(kAckTimeout + 10);
  EXPECT_FALSE(Ack("t", "s", 0, "m"));  // past its deadline: the adapter refuses it
  const std::vector<model::Expired> expired = {{"t", "s", 0, false}};
  EXPECT_EQ(Expire(), expired);
  EXPECT_TRUE(Expire().empty());  // once
  const std::vector<Received> want = {{0, "a", 2, target_->now() + kAckTimeout}};
  EXPECT_EQ(Poll("t", "s", 10, "other"), want);
  EXPECT_FALSE(Ack("t", "s", 0, "m"));
  EXPECT_TRUE(Ack("t", "s", 0, "other"));
}

// R11: Redis itself would take that ack: XACK does not ask which consumer holds an entry.
// The check is the adapter's (its settle script), and this is why it is needed.
TEST_F(RedisTargetTest, R11OwnershipIsTheAdaptersCheckRedisXackTakesAnyConsumer) {
  Create("t");
  Subscribe("t", "s");
  Publish("t", "a");
  ASSERT_EQ(Poll("t", "s", 10, "m").size(), 1u);
  EXPECT_FALSE(Ack("t", "s", 0, "intruder"));
  EXPECT_TRUE(Ack("t", "s", 0, "m"));
  // Bare Redis: XACK names no consumer at all, so any client of the group settles any
  // pending entry, also long past any deadline.
  Raw raw(server_->port());
  raw.Integer({"XADD", "bare", "1-1", "p", "a"});
  raw.Integer({"XGROUP", "CREATE", "bare", "g", "0"});
  raw.Integer({"XREADGROUP", "GROUP", "g", "holder", "COUNT", "1", "STREAMS", "bare", ">"});
  EXPECT_EQ(raw.Integer({"XACK", "bare", "g", "1-1"}), 1);
}

// R11: an extend by the holder, before the deadline, claims the entry to it again with idle
// time 0 (JUSTID: the delivery count stays): past the first deadline the message is still
// held, and comes back only after the second. By another member, or too late, it changes
// nothing.
TEST_F(RedisTargetTest, R11ExtendByTheHolderMovesTheDeadline) {
  Create("t");
  Subscribe("t", "s");
  Publish("t", "a");
  ASSERT_EQ(Poll("t", "s").size(), 1u);
  Advance(kAckTimeout - 4);
  auto extend = [&](const std::string& member) {
    return Value<oplang::BoolResult>(oplang::Extend{"t", "s", 0, member, kAckTimeout}).value;
  };
  EXPECT_FALSE(extend("other"));
  EXPECT_TRUE(extend("m"));
  Advance(8);  // past the first deadline, before the new one
  EXPECT_TRUE(Expire().empty());
  EXPECT_TRUE(Poll("t", "s", 10, "other").empty());
  Advance(kAckTimeout);
  EXPECT_FALSE(extend("m"));  // past the new deadline: too late
  const std::vector<Received> want = {{0, "a", 2, target_->now() + kAckTimeout}};
  EXPECT_EQ(Poll("t", "s", 10, "other"), want);  // attempt 2: the extend counted none
  EXPECT_TRUE(Ack("t", "s", 0, "other"));
  EXPECT_THROW(Step(oplang::Extend{"t", "s", 0, "other", kAckTimeout + 1}), std::invalid_argument);
  EXPECT_EQ(Step(oplang::Extend{"t", "s", 0, "other", 0}).error, ErrorCode::kInvalidArgument);
  EXPECT_EQ(Step(oplang::Extend{"t", "nope", 0, "other", kAckTimeout}).error,
            ErrorCode::kUnknownSubscription);
}

// R7, R11: a nacked message is offered again at once, attempt 2; only its holder may nack.
TEST_F(RedisTargetTest, R11NackedMessageIsOfferedAgainAtOnce) {
  Create("t");
  Subscribe("t", "s");
  Publish("t", "a");
  Publish("t", "b");
  ASSERT_EQ(Poll("t", "s", 1).size(), 1u);
  EXPECT_FALSE(Nack("t", "s", 0, "someone-else"));
  EXPECT_TRUE(Nack("t", "s", 0));
  EXPECT_FALSE(Nack("t", "s", 0));  // given back: no longer held
  EXPECT_FALSE(Ack("t", "s", 0));
  // Returned first, then the new one (R5).
  const std::vector<Received> want = {{0, "a", 2, kAckTimeout}, {1, "b", 1, kAckTimeout}};
  EXPECT_EQ(Poll("t", "s"), want);
}

// R5: returned messages come back lowest offset first, whatever order they were nacked in.
TEST_F(RedisTargetTest, R5ReturnedMessagesComeBackLowestOffsetFirst) {
  Create("t");
  Subscribe("t", "s");
  for (const char* p : {"a", "b", "c"}) Publish("t", p);
  ASSERT_EQ(Poll("t", "s", 3).size(), 3u);
  EXPECT_TRUE(Nack("t", "s", 2));
  EXPECT_TRUE(Nack("t", "s", 0));
  const std::vector<Received> got = Poll("t", "s", 3);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].offset, 0u);
  EXPECT_EQ(got[1].offset, 2u);
}

// R5: only messages with every filter header equal are offered, also after expiry.
TEST_F(RedisTargetTest, R5HeaderFilterNeverReturnsNonMatchingMessages) {
  Create("t");
  Subscribe("t", "s", 0, {{"color", "red"}});
  Publish("t", "r0", {{"color", "red"}});
  Publish("t", "b1", {{"color", "blue"}});
  Publish("t", "n2");
  Publish("t", "r3", {{"color", "red"}, {"size", "xl"}});
  Publish("t", "c4", {{"Color", "red"}});
  const std::vector<Received> got = Poll("t", "s", 2);  // reads past the filtered ones
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].offset, 0u);
  EXPECT_EQ(got[1].offset, 3u);
  EXPECT_TRUE(Poll("t", "s").empty());
  Advance(kAckTimeout + 10);
  Expire();
  const std::vector<Received> again = Poll("t", "s");
  ASSERT_EQ(again.size(), 2u);
  EXPECT_EQ(again[0].offset, 0u);
  EXPECT_EQ(again[0].attempt, 2);
  EXPECT_EQ(again[1].offset, 3u);
}

// R7: with max_deliveries 2, the second nack dead-letters the message at once, atomically
// (XACK + XADD to the dead-letter stream in one script).
TEST_F(RedisTargetTest, R7MaxDeliveriesDeadLettersAtTheSecondNack) {
  Create("t");
  Subscribe("t", "s", 2);
  Publish("t", "a", {{"k", "v"}});
  ASSERT_EQ(Poll("t", "s").size(), 1u);
  EXPECT_TRUE(Nack("t", "s", 0));
  const std::vector<Received> second = Poll("t", "s");
  ASSERT_EQ(second.size(), 1u);
  EXPECT_EQ(second[0].attempt, 2);
  Advance(2);
  EXPECT_TRUE(Nack("t", "s", 0));
  const std::vector<model::DeadLetter> want = {
      {"t", "s", 0, "a", 2, "nacked", target_->now(), {{"k", "v"}}, ""}};
  EXPECT_EQ(DeadLetters("t", "s"), want);
  EXPECT_TRUE(Poll("t", "s").empty());
  Raw raw(server_->port());
  EXPECT_EQ(raw.Integer({"XLEN", "test:t:dlq:s"}), 1);
}

// R7, R11: the same with two expiries: dead at the second expire, and the next message
// comes next.
TEST_F(RedisTargetTest, R7MaxDeliveriesDeadLettersAtTheSecondExpiry) {
  Create("t");
  Subscribe("t", "s", 2);
  Publish("t", "a");
  Publish("t", "b");
  ASSERT_EQ(Poll("t", "s", 1).size(), 1u);
  Advance(kAckTimeout + 10);
  Expire();
  const std::vector<Received> second = Poll("t", "s", 1);
  ASSERT_EQ(second.size(), 1u);
  EXPECT_EQ(second[0].offset, 0u);
  EXPECT_EQ(second[0].attempt, 2);
  Advance(kAckTimeout + 10);
  const std::vector<model::Expired> expired = {{"t", "s", 0, true}};
  EXPECT_EQ(Expire(), expired);
  const std::vector<Received> third = Poll("t", "s");
  ASSERT_EQ(third.size(), 1u);
  EXPECT_EQ(third[0].offset, 1u);
  EXPECT_EQ(third[0].attempt, 1);
  EXPECT_FALSE(Ack("t", "s", 0));  // dead, no longer held
  const std::vector<model::DeadLetter> dead = DeadLetters("t", "s");
  ASSERT_EQ(dead.size(), 1u);
  EXPECT_EQ(dead[0].offset, 0u);
  EXPECT_EQ(dead[0].payload, "a");
  EXPECT_EQ(dead[0].attempts, 2);
  EXPECT_EQ(dead[0].reason, "ack deadline expired");
  EXPECT_EQ(dead[0].died_at, target_->now());
  EXPECT_TRUE(Ack("t", "s", 1));
}

// R7: a poll after the deadline with no expire in between still never offers a message
// past its deliveries: the poll script dead-letters it first.
TEST_F(RedisTargetTest, R7APollPastTheDeadlineDeadLettersWhatHasNoDeliveriesLeft) {
  Create("t");
  Subscribe("t", "s", 1);
  Publish("t", "a");
  ASSERT_EQ(Poll("t", "s").size(), 1u);
  Advance(kAckTimeout + 10);
  EXPECT_TRUE(Poll("t", "s").empty());
  ASSERT_EQ(DeadLetters("t", "s").size(), 1u);
}

// R23: term dead-letters at once, whatever the deliveries; only the holder may term.
TEST_F(RedisTargetTest, R23TermDeadLettersAtOnce) {
  Create("t");
  Subscribe("t", "s");
  Publish("t", "a");
  ASSERT_EQ(Poll("t", "s").size(), 1u);
  EXPECT_FALSE(Term("t", "s", 0, "other"));
  EXPECT_TRUE(Term("t", "s", 0));
  EXPECT_FALSE(Term("t", "s", 0));
  const std::vector<model::DeadLetter> want = {{"t", "s", 0, "a", 1, "terminated", 0, {}, ""}};
  EXPECT_EQ(DeadLetters("t", "s"), want);
  Advance(kAckTimeout + 10);
  Expire();
  EXPECT_TRUE(Poll("t", "s").empty());
}

// R1, R14: topics; a call refused with a typed error changes nothing.
TEST_F(RedisTargetTest, R14TopicErrorsChangeNothing) {
  EXPECT_EQ(ErrorOf(oplang::CreateTopic{""}), ErrorCode::kInvalidArgument);
  Create("t");
  EXPECT_EQ(Publish("t", "x"), 0u);
  EXPECT_EQ(ErrorOf(oplang::CreateTopic{"t"}), ErrorCode::kDuplicateTopic);
  EXPECT_EQ(ErrorOf(oplang::DeleteTopic{"nope"}), ErrorCode::kUnknownTopic);
  EXPECT_EQ(ErrorOf(oplang::Publish{"nope", "a", {}, ""}), ErrorCode::kUnknownTopic);
  Subscribe("t", "s");
  EXPECT_EQ(ErrorOf(oplang::DeleteTopic{"t"}), ErrorCode::kTopicInUse);
  EXPECT_EQ(Publish("t", "y"), 1u);  // the refused calls changed nothing
  ASSERT_EQ(Poll("t", "s").size(), 2u);
  EXPECT_TRUE(Value<oplang::BoolResult>(oplang::Unsubscribe{"t", "s"}).value);
  Value<oplang::Done>(oplang::DeleteTopic{"t"});
  EXPECT_EQ(ErrorOf(oplang::Publish{"t", "a", {}, ""}), ErrorCode::kUnknownTopic);
  // A topic made again starts empty, at offset 0; names with ':' do not meet other keys.
  Create("t");
  EXPECT_EQ(Publish("t", "x"), 0u);
  Create("t:dlq:s");
  Create("a b%3A*");
  EXPECT_EQ(Publish("t:dlq:s", "x"), 0u);
  EXPECT_EQ(Publish("a b%3A*", "y"), 0u);
  EXPECT_EQ(Publish("t", "z"), 1u);
}

// R11, R14: subscriptions and their options; bad input is a typed error and changes nothing.
TEST_F(RedisTargetTest, R14SubscriptionErrorsChangeNothing) {
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

  // Start at the end: only what is published after the subscribe (R4).
  EXPECT_EQ(Publish("t", "after"), 1u);
  EXPECT_EQ(ErrorOf(oplang::Poll{"nope", "s", "m", 1}), ErrorCode::kUnknownTopic);
  EXPECT_EQ(ErrorOf(oplang::Poll{"t", "nope", "m", 1}), ErrorCode::kUnknownSubscription);
  EXPECT_EQ(ErrorOf(oplang::Poll{"t", "s", "m", 0}), ErrorCode::kInvalidArgument);
  EXPECT_EQ(ErrorOf(oplang::Poll{"t", "s", "", 1}), ErrorCode::kInvalidArgument);
  const std::vector<Received> got = Poll("t", "s");
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].offset, 1u);

  EXPECT_EQ(ErrorOf(oplang::Ack{"t", "nope", 1, "m"}), ErrorCode::kUnknownSubscription);
  EXPECT_EQ(ErrorOf(oplang::Nack{"nope", "s", 1, "m"}), ErrorCode::kUnknownTopic);
  EXPECT_EQ(ErrorOf(oplang::Term{"t", "nope", 1, "m"}), ErrorCode::kUnknownSubscription);
  EXPECT_EQ(ErrorOf(oplang::GetDeadLetters{"t", "nope"}), ErrorCode::kUnknownSubscription);
  EXPECT_EQ(ErrorOf(oplang::Advance{-1}), ErrorCode::kInvalidArgument);
  EXPECT_FALSE(Ack("t", "s", 7));  // never published
  EXPECT_TRUE(Ack("t", "s", 1));   // the refused calls changed nothing

  EXPECT_FALSE(Value<oplang::BoolResult>(oplang::Unsubscribe{"t", "nope"}).value);
  EXPECT_EQ(ErrorOf(oplang::Unsubscribe{"nope", "s"}), ErrorCode::kUnknownTopic);
  EXPECT_TRUE(Value<oplang::BoolResult>(oplang::Unsubscribe{"t", "s"}).value);
  EXPECT_EQ(ErrorOf(oplang::Poll{"t", "s", "m", 1}), ErrorCode::kUnknownSubscription);
}

// R3: a topic that keeps its newest 2 messages is a stream every XADD trims to MAXLEN 2
// exactly; a subscription from the beginning never sees the rest.
TEST_F(RedisTargetTest, R3MaxlenKeepsTheNewestMessagesAndAPollSkipsTheRest) {
  Value<oplang::Done>(oplang::CreateTopic{"t", 2, 0});
  for (const char* p : {"a", "b", "c", "d"}) Publish("t", p);
  Raw raw(server_->port());
  EXPECT_EQ(raw.Integer({"XLEN", "test:t"}), 2);
  Subscribe("t", "s");
  const std::vector<Received> got = Poll("t", "s");
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].offset, 2u);
  EXPECT_EQ(got[0].payload, "c");
  EXPECT_EQ(got[1].offset, 3u);
  Publish("t", "e");  // trims c, which is held
  EXPECT_EQ(raw.Integer({"XLEN", "test:t"}), 2);
}

// R3: trimming leaves the pending list alone, so the holder's ack of a message trimmed away
// still settles it, and it never comes back.
TEST_F(RedisTargetTest, R3AHeldMessageTrimmedAwayIsStillSettledByItsAck) {
  Value<oplang::Done>(oplang::CreateTopic{"t", 1, 0});
  Subscribe("t", "s");
  Publish("t", "a");
  ASSERT_EQ(Poll("t", "s").size(), 1u);
  Publish("t", "b");  // a is gone from the stream, still pending
  EXPECT_TRUE(Ack("t", "s", 0));
  Advance(kAckTimeout + 10);
  Expire();
  const std::vector<Received> got = Poll("t", "s");
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].offset, 1u);
}

// The profile's trimmed_held_keeps_only_its_offset, as Redis 7.0 shows it: a held message
// trimmed away dies without its body (the stream has only its id left), an extend forgets
// it (XCLAIM drops a pending entry whose body is gone), and so does the next poll of the
// group, by any member (XAUTOCLAIM drops such entries before it looks at idle times): its
// holder's ack is then refused. The model without the switch answers otherwise each time.
TEST_F(RedisTargetTest, R3ATrimmedHeldMessageDiesWithoutItsBodyAndAPollOrExtendForgetsIt) {
  Value<oplang::Done>(oplang::CreateTopic{"t", 1, 0});
  Subscribe("t", "s", 1);
  Publish("t", "a", {{"k", "v"}});
  ASSERT_EQ(Poll("t", "s").size(), 1u);
  Publish("t", "b");               // trims a, held
  EXPECT_TRUE(Nack("t", "s", 0));  // its last delivery failed: dead
  const std::vector<model::DeadLetter> dead = DeadLetters("t", "s");
  ASSERT_EQ(dead.size(), 1u);
  EXPECT_EQ(dead[0].offset, 0u);
  EXPECT_EQ(dead[0].attempts, 1);
  EXPECT_EQ(dead[0].reason, "nacked");
  EXPECT_EQ(dead[0].payload, "");  // the model without the switch says "a", {k: v}
  EXPECT_TRUE(dead[0].headers.empty());

  ASSERT_EQ(Poll("t", "s").size(), 1u);  // b
  Publish("t", "c");                     // trims b, held
  EXPECT_TRUE(Value<oplang::BoolResult>(oplang::Extend{"t", "s", 1, "m", kAckTimeout}).value);
  EXPECT_FALSE(Ack("t", "s", 1));  // the model without the switch: true, still held

  ASSERT_EQ(Poll("t", "s").size(), 1u);  // c
  Publish("t", "d");                     // trims c, held
  const std::vector<Received> next = Poll("t", "s", 10, "other");
  ASSERT_EQ(next.size(), 1u);  // d; c is gone from the pending list
  EXPECT_EQ(next[0].offset, 3u);
  EXPECT_FALSE(Ack("t", "s", 2));  // the model without the switch: true
  Raw raw(server_->port());
  EXPECT_EQ(raw.Integer({"XLEN", "test:t:dlq:s"}), 1);
}

// The same through the kit: judged strictly the script violates R7 (a dead letter without
// its body); under the redis profile it holds and the switch is what it needed.
TEST_F(RedisTargetTest, TheKitCreditsTrimmedHeldKeepsOnlyItsOffset) {
  oplang::SubscribePull sub;
  sub.topic = "t";
  sub.name = "s";
  sub.ack_timeout = kAckTimeout;
  sub.max_deliveries = 1;
  const oplang::Script script = {oplang::CreateTopic{"t", 1, 0},    sub,
                                 oplang::Publish{"t", "a", {}, ""}, oplang::Poll{"t", "s", "m", 1},
                                 oplang::Publish{"t", "b", {}, ""}, oplang::Term{"t", "s", 0, "m"},
                                 oplang::GetDeadLetters{"t", "s"}};
  const Verdict strictly =
      check(*target_, script, redis_profile().without(Switch::kTrimmedHeldKeepsOnlyItsOffset));
  ASSERT_TRUE(strictly.violation);
  EXPECT_EQ(strictly.violation->rule, "R7");
  RedisTarget again(server_->url(), "again", kUnitMs);
  const Verdict profiled = check(again, script, redis_profile());
  EXPECT_FALSE(profiled.violation);
  // (Every compared answer needs answers_name_no_reason: XACK says no reason.)
  EXPECT_EQ(profiled.needed, (std::vector<Switch>{Switch::kTrimmedHeldKeepsOnlyItsOffset,
                                                  Switch::kAnswersNameNoReason}));
}

// R12 under seek_moves_only_the_cursor: XGROUP SETID back to offset 1 keeps the pending
// list: the returned offset 2 comes back first (attempt 2), then the cursor reaches 1 and 2
// again, each handed out anew at attempt 1; offset 0 stays held by its member. Out of range
// and unknown names are refused.
TEST_F(RedisTargetTest, R12SeekMovesOnlyTheCursor) {
  Create("t");
  Subscribe("t", "s");
  for (const char* p : {"a", "b", "c"}) Publish("t", p);
  ASSERT_EQ(Poll("t", "s", 3, "w1").size(), 3u);
  EXPECT_TRUE(Nack("t", "s", 2, "w1"));
  Value<oplang::Done>(oplang::Seek{"t", "s", 1});
  const std::vector<Received> again = Poll("t", "s", 4, "w2");
  ASSERT_EQ(again.size(), 3u);
  EXPECT_EQ(again[0].offset, 2u);
  EXPECT_EQ(again[0].attempt, 2);
  EXPECT_EQ(again[1].offset, 1u);
  EXPECT_EQ(again[1].attempt, 1);
  EXPECT_EQ(again[2].offset, 2u);
  EXPECT_EQ(again[2].attempt, 1);
  EXPECT_TRUE(Ack("t", "s", 0, "w1"));
  EXPECT_FALSE(Ack("t", "s", 1, "w1"));
  EXPECT_TRUE(Ack("t", "s", 1, "w2"));
  EXPECT_EQ(ErrorOf(oplang::Seek{"t", "s", 4}), ErrorCode::kOffsetOutOfRange);
  EXPECT_EQ(ErrorOf(oplang::Seek{"t", "nope", 0}), ErrorCode::kUnknownSubscription);
  EXPECT_EQ(ErrorOf(oplang::Seek{"nope", "s", 0}), ErrorCode::kUnknownTopic);
  Value<oplang::Done>(oplang::Seek{"t", "s", 3});
  EXPECT_TRUE(Poll("t", "s", 4, "w2").empty());
}

// R28: a seek by time moves the group before the first entry whose id (the server's clock,
// in ms) is at or after the model time's wall-clock instant, and answers that entry's
// offset: eleven entries 5 model ms apart, each found at its own time; 0 finds the first,
// now past the last the end; a time after now is refused.
TEST_F(RedisTargetTest, R28SeekToTimeFindsEachEntryAtItsOwnTime) {
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
  EXPECT_EQ(Value<oplang::OffsetResult>(oplang::SeekToTime{"t", "s", 55}).offset, 11u);
  EXPECT_TRUE(Poll("t", "s").empty());
  EXPECT_EQ(Value<oplang::OffsetResult>(oplang::SeekToTime{"t", "s", 45}).offset, 9u);
  const std::vector<Received> again = Poll("t", "s");
  ASSERT_EQ(again.size(), 2u);
  EXPECT_EQ(again[0].offset, 9u);
  EXPECT_EQ(ErrorOf(oplang::SeekToTime{"t", "s", 56}), ErrorCode::kInvalidArgument);
  EXPECT_EQ(ErrorOf(oplang::SeekToTime{"t", "nope", 0}), ErrorCode::kUnknownSubscription);
}

// The same through the kit: judged without the switch the script is a violation; under the
// redis profile it holds and the switch is what it needed.
TEST_F(RedisTargetTest, TheKitCreditsSeekMovesOnlyTheCursor) {
  oplang::SubscribePull sub;
  sub.topic = "t";
  sub.name = "s";
  sub.ack_timeout = kAckTimeout;
  sub.start.kind = model::Start::Kind::kBeginning;
  // A seek past the held offset 0: its holder's ack still settles it.
  const oplang::Script script = {
      oplang::CreateTopic{"t"},          sub,
      oplang::Publish{"t", "a", {}, ""}, oplang::Publish{"t", "b", {}, ""},
      oplang::Poll{"t", "s", "w1", 1},   oplang::Seek{"t", "s", 1},
      oplang::Poll{"t", "s", "w2", 2},   oplang::Ack{"t", "s", 0, "w1"}};
  const Verdict strictly =
      check(*target_, script, redis_profile().without(Switch::kSeekMovesOnlyTheCursor));
  EXPECT_TRUE(strictly.violation);
  RedisTarget again(server_->url(), "again", kUnitMs);
  const Verdict profiled = check(again, script, redis_profile());
  EXPECT_FALSE(profiled.violation);
  EXPECT_EQ(profiled.needed,
            (std::vector<Switch>{Switch::kSeekMovesOnlyTheCursor, Switch::kAnswersNameNoReason}));
}

// R8 by the adapter's drain over consumer-group reads: topics, then their push
// subscriptions, in creation order, each until the server has no entry for it or its
// handler fails; a failure comes back at the next drain (attempt 2), and at max deliveries
// it is dead with the handler's reason. The script is also judged against the model.
TEST_F(RedisTargetTest, R8DrainServesEachPushSubscriptionInCreationOrderUntilAFailure) {
  const oplang::Script script = {
      oplang::CreateTopic{"t"},
      oplang::CreateTopic{"u"},
      push("u", "x", {}),
      push("t", "y", {model::Verdict::kConfirm, model::Verdict::kReject, model::Verdict::kThrowStd},
           2),
      push("t", "a", {}),
      oplang::Publish{"t", "m0", {}, ""},
      oplang::Publish{"t", "m1", {}, ""},
      oplang::Publish{"u", "n0", {}, ""},
      oplang::Drain{},
      oplang::Drain{},
      oplang::GetDeadLetters{"t", "y"},
      oplang::Drain{},
  };
  std::vector<oplang::Outcome> outs;
  for (const oplang::Op& op : script) {
    outs.push_back(Step(op));
    ASSERT_FALSE(outs.back().error) << oplang::print(op) << " -> " << oplang::print(outs.back());
  }
  EXPECT_EQ(offers(outs[8]),
            (std::vector<std::string>{"t/y m0#1", "t/y m1#1", "t/a m0#1", "t/a m1#1", "u/x n0#1"}));
  EXPECT_EQ(std::get<oplang::CountResult>(outs[8].value).count, 4u);
  EXPECT_EQ(offers(outs[9]), (std::vector<std::string>{"t/y m1#2"}));
  const auto& dead = std::get<std::vector<model::DeadLetter>>(outs[10].value);
  ASSERT_EQ(dead.size(), 1u);
  EXPECT_EQ(dead[0].offset, 1u);
  EXPECT_EQ(dead[0].attempts, 2);
  EXPECT_EQ(dead[0].reason, "exception: boom");
  EXPECT_TRUE(outs[11].calls.empty());
  RedisTarget again(server_->url(), "again", kUnitMs);
  const Verdict judged = check(again, script, redis_profile());
  EXPECT_FALSE(judged.violation) << judged.violation->rule;
}

// R11, R14 between the kinds (push_steps.h).
TEST_F(RedisTargetTest, R14PushAndPullNamesAreKeptApart) {
  expect_push_and_pull_names_kept_apart(*target_, kAckTimeout);
}

// R12 on push under seek_moves_only_the_cursor: SETID keeps the pending list, so a message a
// failed handler gave back before a seek past it is still offered at the next drain, at its
// next attempt; the strict model forgets it, so only the switch explains the engine.
TEST_F(RedisTargetTest, TheKitCreditsSeekMovesOnlyTheCursorOnPush) {
  const oplang::Script script = {oplang::CreateTopic{"t"},
                                 push("t", "h", {model::Verdict::kReject}),
                                 oplang::Publish{"t", "a", {}, ""},
                                 oplang::Publish{"t", "b", {}, ""},
                                 oplang::Drain{},
                                 oplang::Seek{"t", "h", 1},
                                 oplang::Drain{}};
  const Verdict strictly =
      check(*target_, script, redis_profile().without(Switch::kSeekMovesOnlyTheCursor));
  EXPECT_TRUE(strictly.violation);
  RedisTarget again(server_->url(), "again", kUnitMs);
  const Verdict profiled = check(again, script, redis_profile());
  EXPECT_FALSE(profiled.violation) << profiled.violation->rule;
  EXPECT_EQ(profiled.needed, (std::vector<Switch>{Switch::kSeekMovesOnlyTheCursor}));
}

TEST_F(RedisTargetTest, OpsOutsideTheSubsetAreRefused) {
  EXPECT_TRUE(target_->serves(oplang::CreateTopic{"t", 5, 0}));  // MAXLEN
  EXPECT_THROW(Step(oplang::CreateTopic{"t", 0, 100}), std::invalid_argument);
  EXPECT_THROW(Step(oplang::CreateTopic{"t", 5, 100}), std::invalid_argument);
  oplang::Subscribe grouped;
  grouped.topic = "t";
  grouped.name = "h";
  grouped.group = "g";  // R10: Redis has no round robin
  EXPECT_THROW(Step(grouped), std::invalid_argument);
  EXPECT_EQ(target_->name(), "redis");
}

// Parallel runs: a worker is a second connection on the same consumer groups; a message one
// worker holds is not handed to another.
TEST_F(RedisTargetTest, R11WorkersShareTheGroupAndNeverHoldOneMessageTwice) {
  Create("t");
  Subscribe("t", "s");
  for (const char* p : {"a", "b", "c"}) Publish("t", p);
  std::unique_ptr<Target> w1 = target_->worker();
  std::unique_ptr<Target> w2 = target_->worker();
  const oplang::Outcome first = w1->step(oplang::Poll{"t", "s", "m1", 2});
  const oplang::Outcome second = w2->step(oplang::Poll{"t", "s", "m2", 2});
  const auto* a = std::get_if<std::vector<Received>>(&first.value);
  const auto* b = std::get_if<std::vector<Received>>(&second.value);
  ASSERT_TRUE(a != nullptr && b != nullptr);
  ASSERT_EQ(a->size(), 2u);
  ASSERT_EQ(b->size(), 1u);
  EXPECT_EQ((*b)[0].offset, 2u);
  EXPECT_EQ(std::get<oplang::BoolResult>(w2->step(oplang::Ack{"t", "s", 0, "m2"}).value).value,
            false);
  EXPECT_EQ(std::get<oplang::BoolResult>(w1->step(oplang::Ack{"t", "s", 0, "m1"}).value).value,
            true);
  EXPECT_THROW(w1->step(oplang::Publish{"t", "x", {}, ""}), std::invalid_argument);
}

// The fixture: with appendonly and fsync always, a kill -9 loses nothing acknowledged, and
// the restarted server (same port, same directory) serves the same stream.
TEST(RedisServerFixture, Kill9AndRestartKeepAcknowledgedWritesWithAppendfsyncAlways) {
  RedisServer server(redis_options(RedisServerOptions::Fsync::kAlways));
  const int port = server.port();
  {
    RedisTarget target(server.url(), "crash", kUnitMs);
    ASSERT_FALSE(target.step(oplang::CreateTopic{"t"}).error);
    for (int i = 0; i < 5; ++i) {
      ASSERT_FALSE(target.step(oplang::Publish{"t", "m" + std::to_string(i), {}, ""}).error);
    }
    server.kill9();
    EXPECT_FALSE(server.alive());
    EXPECT_THROW(target.step(oplang::Publish{"t", "lost", {}, ""}), TargetFailure);
  }
  server.restart();
  EXPECT_TRUE(server.alive());
  EXPECT_EQ(server.port(), port);
  Raw raw(server.port());
  EXPECT_EQ(raw.Integer({"XLEN", "crash:t"}), 5);
  // A clean restart keeps it too.
  server.restart();
  Raw again(server.port());
  EXPECT_EQ(again.Integer({"XLEN", "crash:t"}), 5);
}

// A damaged AOF (a length prefix changed in its third XADD) is refused at the restart; the
// fixture's repair_restart runs Redis's own redis-check-aof --fix, which cuts the AOF where
// it stopped making sense, and the server serves what came before.
TEST(RedisServerFixture, ADamagedAofIsRefusedUntilRedisCheckAofRepairsIt) {
  RedisServer server(redis_options(RedisServerOptions::Fsync::kAlways));
  {
    Raw raw(server.port());
    for (int i = 0; i < 5; ++i) raw.Integer({"XADD", "k", "*", "f", "v" + std::to_string(i)});
    ASSERT_EQ(raw.Integer({"XLEN", "k"}), 5);
  }
  server.kill9();
  std::string aof;
  for (const auto& e : std::filesystem::directory_iterator(server.dir() + "/appendonlydir")) {
    if (e.path().string().ends_with(".incr.aof")) aof = e.path().string();
  }
  ASSERT_FALSE(aof.empty());
  std::string bytes;
  {
    std::ifstream in(aof, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  std::size_t at = 0;
  for (int n = 0; n < 3; ++n) at = bytes.find("$4\r\nXADD", n == 0 ? 0 : at + 1);
  ASSERT_NE(at, std::string::npos);
  bytes[at + 1] = '9';
  std::ofstream(aof, std::ios::binary | std::ios::trunc) << bytes;

  EXPECT_THROW(server.restart(), TargetFailure) << "a damaged AOF loaded without a word";
  const std::string said = server.repair_restart();
  EXPECT_NE(said.find("redis-check-aof --fix"), std::string::npos) << said;
  Raw raw(server.port());
  EXPECT_EQ(raw.Integer({"XLEN", "k"}), 2) << "the repair kept what came before the damage";
}

// Without an AOF a restart starts empty: the fixture's restart is a real one.
TEST(RedisServerFixture, RestartWithoutAppendonlyStartsEmpty) {
  RedisServer server;
  {
    Raw raw(server.port());
    ASSERT_GT(raw.Integer({"XLEN", "nothing"}), -1);
  }
  RedisTarget target(server.url(), "mem", kUnitMs);
  ASSERT_FALSE(target.step(oplang::CreateTopic{"t"}).error);
  ASSERT_FALSE(target.step(oplang::Publish{"t", "m", {}, ""}).error);
  server.restart();
  Raw raw(server.port());
  EXPECT_EQ(raw.Integer({"XLEN", "mem:t"}), 0);
}

// What the fixture asks for is what the server runs with: loopback only, no snapshots, the
// AOF and its fsync policy as asked, its data in the fixture's directory.
TEST(RedisServerFixture, TheServerRunsWithTheOptionsAskedFor) {
  RedisServer plain;
  Raw a(plain.port());
  EXPECT_EQ(a.Config("bind"), "127.0.0.1");
  EXPECT_EQ(a.Config("save"), "");
  EXPECT_EQ(a.Config("appendonly"), "no");
  EXPECT_EQ(a.Config("protected-mode"), "yes");
  EXPECT_EQ(std::filesystem::canonical(a.Config("dir")), std::filesystem::canonical(plain.dir()));
  RedisServer everysec(redis_options(RedisServerOptions::Fsync::kEverySec));
  Raw b(everysec.port());
  EXPECT_EQ(b.Config("appendonly"), "yes");
  EXPECT_EQ(b.Config("appendfsync"), "everysec");
  RedisServer always(redis_options(RedisServerOptions::Fsync::kAlways));
  Raw c(always.port());
  EXPECT_EQ(c.Config("appendfsync"), "always");
}

// The directory goes with the fixture.
TEST(RedisServerFixture, TheDirectoryIsRemovedAtTheEnd) {
  std::string dir;
  {
    RedisServer server(redis_options(RedisServerOptions::Fsync::kEverySec));
    dir = server.dir();
    EXPECT_TRUE(std::filesystem::exists(dir));
  }
  EXPECT_FALSE(std::filesystem::exists(dir));
}

// A tool killed by SIGKILL runs no destructor: the server it started must still go (its
// watchdog, conformance/src/local_process.cpp), or every killed run leaks a redis-server.
TEST(RedisServerFixture, AServerDiesWithTheToolThatStartedItEvenOnSigkill) {
  int pipe_fds[2];
  ASSERT_EQ(::pipe(pipe_fds), 0);
  const pid_t tool = ::fork();
  ASSERT_GE(tool, 0);
  // What the "tool" says: its server's port and temporary directory.
  struct Started {
    int port = 0;
    char dir[512] = {};
  };
  if (tool == 0) {  // the "tool": starts a server, says where, waits to be killed
    Started started;
    try {
      static RedisServer* server = new RedisServer();  // never destroyed: SIGKILL comes first
      started.port = server->port();
      std::snprintf(started.dir, sizeof started.dir, "%s", server->dir().c_str());
    } catch (...) {
    }
    ssize_t ignored = ::write(pipe_fds[1], &started, sizeof started);
    (void)ignored;
    for (;;) ::pause();
  }
  ::close(pipe_fds[1]);
  Started started;
  ASSERT_EQ(::read(pipe_fds[0], &started, sizeof started), static_cast<ssize_t>(sizeof started));
  ::close(pipe_fds[0]);
  const int port = started.port;
  ASSERT_GT(port, 0) << "the child could not start a redis-server";
  ASSERT_TRUE(accepts_connection(port));
  ASSERT_TRUE(std::filesystem::exists(started.dir));
  ::kill(tool, SIGKILL);
  int status = 0;
  ::waitpid(tool, &status, 0);
  bool gone = false;
  for (int i = 0; i < 200 && !gone; ++i) {  // the watchdog looks once a second: ~10 s at most
    gone = !accepts_connection(port);
    if (!gone) ::usleep(50 * 1000);
  }
  EXPECT_TRUE(gone) << "redis-server on port " << port << " outlived the tool that started it";
  // Then the watchdog removes the server's directory (once no member of its group is left:
  // at most ~10 s more where the killed server is a zombie nobody reaps).
  bool removed = false;
  for (int i = 0; i < 300 && !removed; ++i) {
    removed = !std::filesystem::exists(started.dir);
    if (!removed) ::usleep(50 * 1000);
  }
  EXPECT_TRUE(removed) << started.dir << " outlived the tool that made it";
}

// One line naming the package, never a hang.
TEST(RedisServerFixture, AMissingBinaryIsOneLineNamingThePackage) {
  ::setenv("REDIS_SERVER_BIN", "/nonexistent/redis-server", 1);
  try {
    RedisServer server;
    ::unsetenv("REDIS_SERVER_BIN");
    FAIL() << "a server started from a binary that does not exist";
  } catch (const TargetFailure& e) {
    ::unsetenv("REDIS_SERVER_BIN");
    const std::string what = e.what();
    EXPECT_NE(what.find("apt-get install -y redis-server"), std::string::npos) << what;
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
  }
}

TEST(RedisServerFixture, APortInUseIsOneLineNamingThePort) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(::listen(fd, 1), 0);
  ASSERT_EQ(::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  const int port = ntohs(addr.sin_port);
  try {
    RedisServer server(redis_options(std::nullopt, port));
    FAIL() << "a server started on a port in use";
  } catch (const TargetFailure& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("127.0.0.1:" + std::to_string(port) + " is in use"), std::string::npos)
        << what;
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
  }
  ::close(fd);
}

// A server that dies under a run is an engine failure, never an outcome the kit judges.
TEST(RedisServerFixture, AServerThatDiesIsAnEngineFailureNotAnOutcome) {
  RedisServer server;
  RedisTarget target(server.url(), "faults", kUnitMs);
  ASSERT_FALSE(target.step(oplang::CreateTopic{"t"}).error);
  server.kill9();
  EXPECT_THROW(target.step(oplang::Publish{"t", "lost", {}, ""}), TargetFailure);
}

// The tool end to end against a deployment of the user's own (--url): it starts no server,
// judges under the redis profile, runs parallel programs, and leaves no key behind.
TEST(RedisConformanceUrl, PointedAtADeploymentItStartsNoServerAndLeavesNoKey) {
  RedisServer server;
  const std::filesystem::path dir = std::filesystem::temp_directory_path() /
                                    ("aloc-redis-url-test-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string out = (dir / "out.txt").string();
  const std::string report = (dir / "report.md").string();
  const std::string command = std::string(CONFORMANCE_TOOL) + " --target redis --url " +
                              server.url() + " --seconds 3 --parallel 2 --out " + dir.string() +
                              " --report " + report + " >" + out + " 2>&1";
  const int status = std::system(command.c_str());
  std::ifstream out_file(out);
  const std::string output((std::istreambuf_iterator<char>(out_file)),
                           std::istreambuf_iterator<char>());
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << command << "\n" << output;
  EXPECT_EQ(output.find("redis-server started"), std::string::npos) << output;
  std::ifstream report_file(report);
  const std::string table((std::istreambuf_iterator<char>(report_file)),
                          std::istreambuf_iterator<char>());
  EXPECT_NE(table.find("under profile 'redis'"), std::string::npos) << table;
  EXPECT_NE(table.find("| L | parallel pull workers"), std::string::npos) << table;
  Raw raw(server.port());
  EXPECT_EQ(raw.Integer({"DBSIZE"}), 0);
  std::filesystem::remove_all(dir);
  EXPECT_TRUE(server.alive()) << server.log_tail(20);
}

}  // namespace
}  // namespace conformance
