// Push subscriptions on Lane and Pool dispatchers running as fibers: concurrent publishers,
// failing / throwing / stalling handlers, unsubscribe from another fiber and from inside
// the handler, checked after the run went idle.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <memory>
#include <optional>
#include <sstream>

#include "broker/broker.h"
#include "common.h"
#include "history.h"
#include "sync/sync.h"

namespace fiberprop {
namespace {

using broker::Offset;
using std::chrono::milliseconds;

/// What a handler does on one call.
enum class Behavior { kOk, kFail, kThrow, kStall, kStallLong, kUnsubscribeSelf };

/// A generated push program.
struct PushScript {
  bool pool = false;
  bool pool_timeout = false;  // pool: handler_timeout 50ms (stall-long overruns it)
  std::vector<int> publishers;
  std::vector<std::vector<Behavior>> handlers;  // per subscription, cyclic by call count
  int unsubscribe_after = -1;                   // -1: no unsubscriber fiber; else yields before it
  std::string show() const {
    static const char* kNames[] = {"ok",         "fail",       "throw",
                                   "stall-20ms", "stall-80ms", "unsubscribe-self"};
    std::ostringstream out;
    out << "  dispatcher: " << (pool ? "pool(2)" : "lane")
        << (pool && pool_timeout ? " handler_timeout=50ms" : "") << "\n";
    for (std::size_t p = 0; p < publishers.size(); ++p)
      out << "  publisher " << p << ": publish x" << publishers[p] << "\n";
    for (std::size_t s = 0; s < handlers.size(); ++s) {
      out << "  s" << s << " handler calls:";
      for (Behavior b : handlers[s]) out << " " << kNames[static_cast<int>(b)];
      out << " (cyclic)\n";
    }
    if (unsubscribe_after >= 0)
      out << "  unsubscriber: " << unsubscribe_after << " yields, then unsubscribe(s1)\n";
    return out.str();
  }
};

rc::Gen<PushScript> gen_script() {
  auto behavior = rc::gen::weightedElement<Behavior>({{6, Behavior::kOk},
                                                      {2, Behavior::kFail},
                                                      {1, Behavior::kThrow},
                                                      {1, Behavior::kStall},
                                                      {1, Behavior::kStallLong},
                                                      {1, Behavior::kUnsubscribeSelf}});
  auto handler =
      rc::gen::resize(4, rc::gen::nonEmpty(rc::gen::container<std::vector<Behavior>>(behavior)));
  return rc::gen::build<PushScript>(
      rc::gen::set(&PushScript::pool), rc::gen::set(&PushScript::pool_timeout),
      rc::gen::set(&PushScript::publishers,
                   rc::gen::resize(2, rc::gen::nonEmpty(rc::gen::container<std::vector<int>>(
                                          rc::gen::inRange(1, 4))))),
      rc::gen::set(&PushScript::handlers,
                   rc::gen::container<std::vector<std::vector<Behavior>>>(2, handler)),
      rc::gen::set(&PushScript::unsubscribe_after, rc::gen::inRange(-1, 8)));
}

constexpr const char* kTopic = "t";

std::string sub_name(int s) { return "s" + std::to_string(s); }

void note_unsubscribed(History& h, int s) {
  const std::uint64_t t = h.tick();
  h.unsubscribed_at.emplace(s, t);  // keeps the first return
}

// The handler of subscription s: records entry and exit, behaves as scripted.
broker::Handler make_handler(broker::Broker& b, std::shared_ptr<History> h,
                             const std::vector<Behavior>& script, int s) {
  auto calls = std::make_shared<std::size_t>(0);
  return [&b, h, &script, s, calls](const broker::Delivery& d) {
    const std::size_t me = h->handlers.size();
    h->handlers.push_back(
        {s, d.message.offset, d.attempt, h->tick(), 0, broker::sync::steady_now().count(), false});
    const Behavior behavior = script[(*calls)++ % script.size()];
    bool result = true;
    switch (behavior) {
      case Behavior::kOk:
        break;
      case Behavior::kFail:
        result = false;
        break;
      case Behavior::kThrow:
        h->handlers[me].exit = h->tick();
        throw std::runtime_error("scripted");
      case Behavior::kStall:
        fiber::sleep_for(milliseconds(20));
        break;
      case Behavior::kStallLong:
        fiber::sleep_for(milliseconds(80));
        break;
      case Behavior::kUnsubscribeSelf:
        b.unsubscribe(kTopic, sub_name(s));
        note_unsubscribed(*h, s);
        break;
    }
    h->handlers[me].exit = h->tick();
    h->handlers[me].returned_true = result;
    return result;
  };
}

// Stats of subscription s, or nullopt once it was unsubscribed (possibly a moment ago, by
// a handler that has not recorded it yet).
std::optional<broker::SubscriptionStats> stats_if_alive(broker::Broker& b, const History& h,
                                                        int s) {
  if (h.unsubscribed_at.count(s)) return std::nullopt;
  try {
    return b.stats(kTopic, sub_name(s));
  } catch (const broker::UnknownSubscription&) {
    return std::nullopt;
  }
}

// This property found PoolCore::run_timer growing `workers` while walking it (a handler
// overrunning handler_timeout crashed the process); fixed, and kept as the regression
// test PoolHandlerOverrunIsAFailureNotACrash below.
constexpr bool kPoolOverrunCrashes = false;

std::pair<fiber::RunResult, std::string> run_push(const PushScript& script,
                                                  const fiber::Schedule& schedule) {
  auto h = std::make_shared<History>();
  auto alive = std::make_shared<std::map<int, FinalState>>();
  auto stuck = std::make_shared<bool>(false);
  const milliseconds timeout =
      script.pool && script.pool_timeout ? milliseconds(50) : milliseconds(0);
  fiber::RunResult run = fiber::run_fibers(
      {[h, alive, stuck, script, timeout] {
        broker::BrokerOptions options;
        options.dispatcher.kind = script.pool ? broker::DispatcherOptions::Kind::kPool
                                              : broker::DispatcherOptions::Kind::kLane;
        options.dispatcher.handler_timeout = timeout;
        broker::Broker b(options);
        b.create_topic(kTopic);
        for (int s = 0; s < static_cast<int>(script.handlers.size()); ++s) {
          broker::PushOptions push;
          push.max_deliveries = 3;
          push.start = broker::StartPosition::beginning();
          b.subscribe(kTopic, sub_name(s), make_handler(b, h, script.handlers[s], s), push);
        }
        std::vector<broker::sync::Thread> threads;
        for (int n : script.publishers) {
          threads.emplace_back([&b, h, n] {
            for (int i = 0; i < n; ++i) h->published.push_back(b.publish(kTopic, "m"));
          });
        }
        if (script.unsubscribe_after >= 0) {
          threads.emplace_back([&b, h, &script] {
            for (int i = 0; i < script.unsubscribe_after; ++i) fiber::yield("unsubscriber");
            b.unsubscribe(kTopic, sub_name(1));
            note_unsubscribed(*h, 1);
          });
        }
        for (auto& t : threads) t.join();
        // Idle can mean "backing off": wait until every live subscription is settled.
        bool settled = false;
        for (int round = 0; round < 50 && !settled; ++round) {
          b.wait_idle(milliseconds(1000));
          settled = true;
          for (int s = 0; s < static_cast<int>(script.handlers.size()); ++s) {
            const auto st = stats_if_alive(b, *h, s);
            settled = settled && (!st || (st->backlog == 0 && st->in_flight == 0));
          }
          if (!settled) fiber::sleep_for(milliseconds(10));
        }
        *stuck = !settled;
        for (int s = 0; s < static_cast<int>(script.handlers.size()); ++s) {
          const auto st = stats_if_alive(b, *h, s);
          if (!st) continue;
          FinalState& f = (*alive)[s];
          f.stats = *st;
          for (const auto& d : b.dead_letters(kTopic, sub_name(s)))
            f.dead.insert(d.message->offset);
        }
      }},
      schedule);
  if (!run.ok()) return {run, "run-failed: " + std::string(fiber::to_string(run.outcome)) + "\n"};
  std::string failures = check_offsets(*h) + check_push(*h, *alive, timeout.count());
  if (*stuck) failures += "stuck: live subscriptions never settled (backlog or in-flight left)\n";
  return {run, failures};
}

RC_GTEST_PROP(FiberPush, LaneAndPoolKeepTheContract, ()) {
  PushScript script = *gen_script();
  if (kPoolOverrunCrashes) script.pool_timeout = false;
  const fiber::Schedule schedule = pick_schedule(*gen_schedule());
  auto [run, failures] = run_push(script, schedule);
  if (!failures.empty()) RC_FAIL(failure_text(failures, script.show(), run));
}

TEST(FiberPushThroughput, SchedulesPerSecond) {
  using B = Behavior;
  for (bool pool : {false, true}) {
    PushScript script{pool,
                      !kPoolOverrunCrashes,
                      {3, 2},
                      {{B::kOk, B::kFail, B::kOk}, {B::kOk, B::kStallLong, B::kUnsubscribeSelf}},
                      3};
    const auto start = std::chrono::steady_clock::now();
    constexpr int kRuns = 200;
    std::size_t points = 0;
    for (int seed = 1; seed <= kRuns; ++seed) {
      auto [run, failures] = run_push(script, fiber::Schedule::random(seed));
      ASSERT_EQ(failures, "") << failure_text(failures, script.show(), run);
      points += run.steps;
    }
    const double secs =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf("push %s: %.0f schedules/s (%zu scheduling points per run)\n",
                pool ? "pool" : "lane", kRuns / secs, points / kRuns);
  }
}

// Crashed (SIGSEGV in PoolCore::run_timer) on the broker as of d34f759.
TEST(FiberPush, PoolHandlerOverrunIsAFailureNotACrash) {
  PushScript script{true, true, {1}, {{Behavior::kStallLong}, {Behavior::kOk}}, -1};
  auto [run, failures] = run_push(script, fiber::Schedule::walk({}));
  EXPECT_EQ(failures, "") << failure_text(failures, script.show(), run);
}

}  // namespace
}  // namespace fiberprop
