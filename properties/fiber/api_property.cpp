// Any mix of public calls from concurrent callers completes: no deadlock, no livelock, no
// crash, and nothing thrown but the typed broker::Error (docs/thread-safety.md: one lock
// order everywhere, no lock held while a handler runs; SPEC R14: errors are typed). On the
// fiber back-end every lock is a scheduling point, so a lock-order inversion between two
// calls shows up as a reported deadlock under some schedule.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <string>
#include <vector>

#include "common.h"
#include "oplang/program.h"
#include "program_runner.h"

namespace fiberprop {
namespace {

/// One public call; `arg` picks the name or the variant.
struct ApiOp {
  enum Kind {
    kPublish,
    kSubscribe,
    kJoinGroup,
    kUnsubscribe,
    kSeek,
    kStats,
    kSubscriptions,
    kSubscribePull,
    kPoll,
    kAck,
    kExpire,
    kDeadLetters,
    kTopics,
    kDrain,
    kPollWait,
    kWaitIdle,
    kWaitDelivered,
    kOffsets,
    kJoinConsumerGroup,  // R32, push: join_group with a handler
    kLeaveConsumerGroup,
    kCount
  };
  Kind kind;
  int arg;
};

/// Concurrent callers of one broker (topic t; push s0, s1, group g of m0, m1, pull p0, p1,
/// a push consumer group cg of k, c0 and c1; all exist at the start, and callers remove and
/// add them again, except k, which keeps the consumer group's partition owned). Generator-side
/// only: program() is what runs, prints and replays.
struct ApiScript {
  bool lane = false;  // else the synchronous dispatcher (drain is a call like the others)
  std::vector<std::vector<ApiOp>> callers;
  [[nodiscard]] oplang::Program program() const;
};

// Calls that take both a topic's and a subscription's locks are drawn twice as often.
const std::initializer_list<std::pair<std::size_t, ApiOp::Kind>> kKindWeights = {
    {1, ApiOp::kPublish},
    {2, ApiOp::kSubscribe},
    {2, ApiOp::kJoinGroup},
    {2, ApiOp::kUnsubscribe},
    {2, ApiOp::kSeek},
    {1, ApiOp::kStats},
    {2, ApiOp::kSubscriptions},
    {2, ApiOp::kSubscribePull},
    {1, ApiOp::kPoll},
    {1, ApiOp::kAck},
    {1, ApiOp::kExpire},
    {1, ApiOp::kDeadLetters},
    {1, ApiOp::kTopics},
    {1, ApiOp::kDrain},
    {1, ApiOp::kPollWait},
    {1, ApiOp::kWaitIdle},
    {1, ApiOp::kWaitDelivered},
    {1, ApiOp::kOffsets},
    {2, ApiOp::kJoinConsumerGroup},
    {2, ApiOp::kLeaveConsumerGroup}};

rc::Gen<ApiScript> gen_script() {
  auto op = rc::gen::build<ApiOp>(
      rc::gen::set(&ApiOp::kind, rc::gen::weightedElement<ApiOp::Kind>(kKindWeights)),
      rc::gen::set(&ApiOp::arg, props::uniform_in(0, 6)));
  auto caller = rc::gen::resize(6, rc::gen::nonEmpty(rc::gen::container<std::vector<ApiOp>>(op)));
  return rc::gen::build<ApiScript>(
      rc::gen::set(&ApiScript::lane),
      rc::gen::set(&ApiScript::callers, rc::gen::mapcat(props::uniform_in(2, 4), [caller](int n) {
        return rc::gen::container<std::vector<std::vector<ApiOp>>>(n, caller);
      })));
}

const char* const kTopic = "t";

std::string push_name(int arg) { return "s" + std::to_string(arg); }
std::string member_name(int arg) { return "m" + std::to_string(arg); }
std::string pull_name(int arg) { return "p" + std::to_string(arg); }
// arg 0..5 names a push subscription, a group member or a pull subscription: few names, so
// callers often meet on one subscription, where its locks are contended.
std::string any_name(int arg) {
  switch (arg / 2) {
    case 0:
      return push_name(arg % 2);
    case 1:
      return member_name(arg % 2);
    default:
      return pull_name(arg % 2);
  }
}

// One public call as operation-language ops (ack: poll one, then ack what the caller holds).
// Seek goes to 0 (even callers) or 1 (odd ones): both always in range, since the setup
// publishes one message and nothing is ever dropped.
void append(oplang::Script& out, const ApiOp& op, int caller) {
  const std::string who = "c" + std::to_string(caller);
  switch (op.kind) {
    case ApiOp::kPublish:
      out.push_back(oplang::Publish{kTopic, "m", {}, {}});
      break;
    case ApiOp::kSubscribe: {
      oplang::Subscribe s;
      s.topic = kTopic;
      s.name = push_name(op.arg % 2);
      out.push_back(s);
      break;
    }
    case ApiOp::kJoinGroup: {
      oplang::Subscribe s;
      s.topic = kTopic;
      s.name = member_name(op.arg % 2);
      s.group = "g";
      out.push_back(s);
      break;
    }
    case ApiOp::kUnsubscribe:
      out.push_back(oplang::Unsubscribe{kTopic, any_name(op.arg)});
      break;
    case ApiOp::kSeek:
      out.push_back(oplang::Seek{kTopic, any_name(op.arg), caller % 2 ? 1u : 0u});
      break;
    case ApiOp::kStats:
      out.push_back(oplang::GetStats{kTopic, any_name(op.arg)});
      break;
    case ApiOp::kSubscriptions:
      out.push_back(oplang::Subscriptions{kTopic});
      break;
    case ApiOp::kSubscribePull: {
      oplang::SubscribePull s;
      s.topic = kTopic;
      s.name = pull_name(op.arg % 2);
      s.ack_timeout = 30;
      out.push_back(s);
      break;
    }
    case ApiOp::kPoll:
      out.push_back(oplang::Poll{kTopic, pull_name(op.arg % 2), who, 2});
      break;
    case ApiOp::kAck:
      out.push_back(oplang::Poll{kTopic, pull_name(op.arg % 2), who, 1});
      out.push_back(oplang::Ack{kTopic, pull_name(op.arg % 2), 0, who, oplang::Which::kAll});
      break;
    case ApiOp::kExpire:
      out.push_back(oplang::Expire{});
      break;
    case ApiOp::kDeadLetters:
      out.push_back(oplang::GetDeadLetters{kTopic, any_name(op.arg)});
      break;
    case ApiOp::kTopics:
      out.push_back(oplang::Topics{});
      break;
    case ApiOp::kDrain:
      out.push_back(oplang::Drain{});
      break;
    case ApiOp::kPollWait:
      out.push_back(oplang::PollWait{kTopic, pull_name(op.arg % 2), who, 2, 10});
      break;
    case ApiOp::kWaitIdle:
      out.push_back(oplang::WaitIdle{20});
      break;
    case ApiOp::kWaitDelivered:
      out.push_back(oplang::WaitDelivered{20});
      break;
    case ApiOp::kOffsets:
      out.push_back(oplang::OldestOffset{kTopic});
      out.push_back(oplang::EndOffset{kTopic});
      break;
    case ApiOp::kJoinConsumerGroup: {
      oplang::JoinGroupPush j;
      j.topic = kTopic;
      j.group = "cg";
      j.member = op.arg < 0 ? "k" : "c" + std::to_string(op.arg % 2);
      out.push_back(j);
      break;
    }
    case ApiOp::kLeaveConsumerGroup:
      out.push_back(oplang::LeaveGroup{kTopic, "cg", "c" + std::to_string(op.arg % 2)});
      break;
    case ApiOp::kCount:
      break;
  }
}

oplang::Program ApiScript::program() const {
  oplang::Program p;
  p.broker.dispatcher =
      lane ? oplang::BrokerSpec::Dispatcher::kLane : oplang::BrokerSpec::Dispatcher::kSynchronous;
  p.setup.push_back(oplang::CreateTopic{kTopic, 0, 0});
  p.setup.push_back(oplang::Publish{kTopic, "m", {}, {}});
  for (int i = 0; i < 2; ++i) {
    append(p.setup, {ApiOp::kSubscribe, i}, 0);
    append(p.setup, {ApiOp::kJoinGroup, i}, 0);
    append(p.setup, {ApiOp::kSubscribePull, i}, 0);
    append(p.setup, {ApiOp::kJoinConsumerGroup, i}, 0);
  }
  append(p.setup, {ApiOp::kJoinConsumerGroup, -1}, 0);  // k
  for (std::size_t c = 0; c < callers.size(); ++c) {
    oplang::Fiber& f = p.fibers.emplace_back(oplang::Fiber{"c" + std::to_string(c), {}});
    for (const ApiOp& op : callers[c]) append(f.ops, op, static_cast<int>(c));
  }
  return p;
}

// Typed errors are answers here (callers remove what others use); what fails the property is
// a run that does not complete or a call that throws anything else (run_program's checks).
RC_GTEST_PROP(FiberApi, ConcurrentCallsOfAnyKindNeverDeadlock, ()) {
  const oplang::Program program = (*gen_script()).program();
  const fiber::Schedule schedule = pick_schedule(*gen_schedule());
  const ProgramRun run = run_program(program, schedule);
  if (!run.ok()) RC_FAIL(failure_text(run, program));
}

}  // namespace
}  // namespace fiberprop
