// Any mix of public calls from concurrent callers completes: no deadlock, no livelock, no
// crash, and nothing thrown but the typed broker::Error (README "Thread safety": one lock
// order everywhere, no lock held while a handler runs; SPEC R14: errors are typed). On the
// fiber back-end every lock is a scheduling point, so a lock-order inversion between two
// calls shows up as a reported deadlock under some schedule.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "broker/broker.h"
#include "common.h"
#include "sync/sync.h"

namespace fiberprop {
namespace {

using std::chrono::milliseconds;

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
    kCount
  };
  Kind kind;
  int arg;
};

/// Concurrent callers of one broker (topic t; push s0, s1, group g of m0, m1, pull p0, p1;
/// all exist at the start, and callers remove and add them again).
struct ApiScript {
  bool lane = false;  // else the synchronous dispatcher (drain is a call like the others)
  std::vector<std::vector<ApiOp>> callers;

  std::string show() const {
    static const char* kNames[] = {"publish", "subscribe", "join-group",    "unsubscribe",
                                   "seek",    "stats",     "subscriptions", "subscribe-pull",
                                   "poll",    "ack",       "expire",        "dead-letters",
                                   "topics",  "drain"};
    std::ostringstream out;
    out << "  dispatcher: " << (lane ? "lane" : "synchronous") << "\n";
    for (std::size_t c = 0; c < callers.size(); ++c) {
      out << "  caller " << c << ":";
      for (const ApiOp& op : callers[c]) out << " " << kNames[op.kind] << "(" << op.arg << ")";
      out << "\n";
    }
    return out.str();
  }
};

// Calls that take both a topic's and a subscription's locks are drawn twice as often.
const std::initializer_list<std::pair<std::size_t, ApiOp::Kind>> kKindWeights = {
    {1, ApiOp::kPublish},       {2, ApiOp::kSubscribe},     {2, ApiOp::kJoinGroup},
    {2, ApiOp::kUnsubscribe},   {2, ApiOp::kSeek},          {1, ApiOp::kStats},
    {2, ApiOp::kSubscriptions}, {2, ApiOp::kSubscribePull}, {1, ApiOp::kPoll},
    {1, ApiOp::kAck},           {1, ApiOp::kExpire},        {1, ApiOp::kDeadLetters},
    {1, ApiOp::kTopics},        {1, ApiOp::kDrain}};

rc::Gen<ApiScript> gen_script() {
  auto op = rc::gen::build<ApiOp>(
      rc::gen::set(&ApiOp::kind, rc::gen::weightedElement<ApiOp::Kind>(kKindWeights)),
      rc::gen::set(&ApiOp::arg, rc::gen::inRange(0, 6)));
  auto caller = rc::gen::resize(6, rc::gen::nonEmpty(rc::gen::container<std::vector<ApiOp>>(op)));
  return rc::gen::build<ApiScript>(
      rc::gen::set(&ApiScript::lane),
      rc::gen::set(&ApiScript::callers, rc::gen::mapcat(rc::gen::inRange(2, 4), [caller](int n) {
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

void call(broker::Broker& b, const ApiOp& op, int caller) {
  const std::string who = "c" + std::to_string(caller);
  const broker::Time now = broker::at(broker::sync::steady_now());
  broker::PushOptions group;
  group.group = "g";
  switch (op.kind) {
    case ApiOp::kPublish:
      b.publish(kTopic, "m");
      break;
    case ApiOp::kSubscribe:
      b.subscribe(kTopic, push_name(op.arg % 2), [](const broker::Delivery&) { return true; });
      break;
    case ApiOp::kJoinGroup:
      b.subscribe(
          kTopic, member_name(op.arg % 2), [](const broker::Delivery&) { return true; }, group);
      break;
    case ApiOp::kUnsubscribe:
      b.unsubscribe(kTopic, any_name(op.arg));
      break;
    case ApiOp::kSeek: {
      const broker::Offset to = caller % 2 ? b.end_offset(kTopic) : b.oldest_offset(kTopic);
      b.seek(kTopic, any_name(op.arg), to);
      break;
    }
    case ApiOp::kStats:
      static_cast<void>(b.stats(kTopic, any_name(op.arg)));
      break;
    case ApiOp::kSubscriptions:
      static_cast<void>(b.subscriptions(kTopic));
      break;
    case ApiOp::kSubscribePull: {
      broker::PullOptions pull;
      pull.ack_timeout = milliseconds(30);
      b.subscribe_pull(kTopic, pull_name(op.arg % 2), pull);
      break;
    }
    case ApiOp::kPoll:
      b.poll(kTopic, pull_name(op.arg % 2), who, 2, now);
      break;
    case ApiOp::kAck: {
      for (const auto& r : b.poll(kTopic, pull_name(op.arg % 2), who, 1, now))
        b.ack(r.receipt, broker::at(broker::sync::steady_now()));
      break;
    }
    case ApiOp::kExpire:
      b.expire(now + milliseconds(100));
      break;
    case ApiOp::kDeadLetters:
      static_cast<void>(b.dead_letters(kTopic, any_name(op.arg)));
      break;
    case ApiOp::kTopics:
      static_cast<void>(b.topics());
      break;
    case ApiOp::kDrain:
      b.drain();
      break;
    case ApiOp::kCount:
      break;
  }
}

// Runs the script; returns the run and "" or what went wrong besides the outcome.
std::pair<fiber::RunResult, std::string> run_api(const ApiScript& script,
                                                 const fiber::Schedule& schedule) {
  auto untyped = std::make_shared<std::string>();
  fiber::RunResult run = fiber::run_fibers(
      {[script, untyped] {
        broker::Broker b(script.lane ? broker::BrokerOptions::lane()
                                     : broker::BrokerOptions::synchronous());
        b.create_topic(kTopic);
        b.publish(kTopic, "m");
        for (int i = 0; i < 2; ++i) {
          call(b, {ApiOp::kSubscribe, i}, 0);
          call(b, {ApiOp::kJoinGroup, i}, 0);
          call(b, {ApiOp::kSubscribePull, i}, 0);
        }
        std::vector<broker::sync::Thread> threads;
        for (std::size_t c = 0; c < script.callers.size(); ++c) {
          threads.emplace_back([&b, &script, c, untyped] {
            for (const ApiOp& op : script.callers[c]) {
              try {
                call(b, op, static_cast<int>(c));
              } catch (const broker::Error&) {  // typed errors are answers, not failures
              } catch (const std::exception& e) {
                *untyped += "untyped-error: caller " + std::to_string(c) + ": " + e.what() + "\n";
              }
            }
          });
        }
        for (auto& t : threads) t.join();
        b.wait_idle(milliseconds(1000));
      }},
      schedule);
  if (!run.ok()) return {run, "run-failed: " + std::string(fiber::to_string(run.outcome)) + "\n"};
  return {run, *untyped};
}

RC_GTEST_PROP(FiberApi, ConcurrentCallsOfAnyKindNeverDeadlock, ()) {
  const ApiScript script = *gen_script();
  const fiber::Schedule schedule = pick_schedule(*gen_schedule());
  auto [run, failures] = run_api(script, schedule);
  if (!failures.empty()) RC_FAIL(failure_text(failures, script.show(), run));
}

}  // namespace
}  // namespace fiberprop
