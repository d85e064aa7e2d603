// The concurrent programs of the fiber properties (programs.h): moved here from
// pull_property.cpp and push_property.cpp so that fuzz/schedule_fuzzer.cpp runs the same
// programs and checks.
#include "programs.h"

#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <stdexcept>

#include "broker/broker.h"
#include "history.h"
#include "sync/sync.h"

namespace fiberprop {

using broker::Offset;
using std::chrono::milliseconds;

std::string PullScript::show() const {
  static const char* kNames[] = {"poll", "ack-oldest", "nack-oldest", "ack-all", "expire", "sleep"};
  std::ostringstream out;
  for (std::size_t p = 0; p < publishers.size(); ++p)
    out << "  publisher " << p << ": publish x" << publishers[p] << "\n";
  for (std::size_t w = 0; w < workers.size(); ++w) {
    out << "  worker " << w << ":";
    for (const WorkerOp& op : workers[w]) {
      out << " " << kNames[op.kind];
      if (op.kind == WorkerOp::kPoll) out << "(" << op.arg << ")";
      if (op.kind == WorkerOp::kSleep) out << "(" << op.arg * 10 << "ms)";
    }
    out << "\n";
  }
  return out.str();
}

std::string PushScript::show() const {
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

namespace {

constexpr const char* kTopic = "t";
constexpr const char* kSub = "p";
constexpr int kFinalWorker = 99;

// Runs one worker's ops against the broker, recording every call.
void run_worker(broker::Broker& b, History& h, int w, const std::vector<WorkerOp>& ops) {
  const std::string member = "w" + std::to_string(w);
  std::deque<Offset> mine;
  auto settle = [&](PullCall::Kind kind, Offset o) {
    PullCall c(kind, w, h.tick());
    c.offset = o;
    const broker::Time now = broker::at(broker::sync::steady_now());
    c.accepted = kind == PullCall::Kind::kAck
                     ? b.ack(broker::Receipt{kTopic, kSub, member, o}, now)
                     : b.nack(broker::Receipt{kTopic, kSub, member, o}, now);
    c.ret = h.tick();
    h.pull.push_back(c);
  };
  for (const WorkerOp& op : ops) {
    switch (op.kind) {
      case WorkerOp::kPoll: {
        PullCall c(PullCall::Kind::kPoll, w, h.tick());
        auto got = b.poll(kTopic, kSub, member, op.arg, broker::at(broker::sync::steady_now()));
        c.ret = h.tick();
        for (const auto& r : got) {
          c.got.push_back({r.message->offset, r.attempt});
          mine.push_back(r.message->offset);
        }
        h.pull.push_back(c);
        break;
      }
      case WorkerOp::kAckOldest:
      case WorkerOp::kNackOldest:
        if (mine.empty()) break;
        settle(op.kind == WorkerOp::kAckOldest ? PullCall::Kind::kAck : PullCall::Kind::kNack,
               mine.front());
        mine.pop_front();
        break;
      case WorkerOp::kAckAll:
        for (Offset o : mine) settle(PullCall::Kind::kAck, o);
        mine.clear();
        break;
      case WorkerOp::kExpire: {
        PullCall c(PullCall::Kind::kExpire, w, h.tick());
        for (const broker::Expired& e : b.expire(broker::at(broker::sync::steady_now())))
          c.expired.push_back(e.offset);
        c.ret = h.tick();
        h.pull.push_back(c);
        break;
      }
      case WorkerOp::kSleep:
        fiber::sleep_for(milliseconds(op.arg * 10));
        break;
    }
  }
}

// After the workers: expire everything and ack what is left, until nothing comes back.
void final_drain(broker::Broker& b, History& h) {
  const broker::Time later = broker::at(broker::sync::steady_now()) + std::chrono::hours(10);
  for (int round = 0; round < 100; ++round) {
    PullCall ex(PullCall::Kind::kExpire, kFinalWorker, h.tick());
    for (const broker::Expired& e : b.expire(later)) ex.expired.push_back(e.offset);
    ex.ret = h.tick();
    h.pull.push_back(ex);
    PullCall c(PullCall::Kind::kPoll, kFinalWorker, h.tick());
    auto got = b.poll(kTopic, kSub, "final", 100, later);
    c.ret = h.tick();
    for (const auto& r : got) c.got.push_back({r.message->offset, r.attempt});
    h.pull.push_back(c);
    if (got.empty() && ex.expired.empty()) return;
    for (const auto& r : got) {
      PullCall a(PullCall::Kind::kAck, kFinalWorker, h.tick());
      a.offset = r.message->offset;
      a.accepted = b.ack(r.receipt, later);
      a.ret = h.tick();
      h.pull.push_back(a);
    }
  }
}

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
        {s, d.message->offset, d.attempt, h->tick(), 0, broker::sync::steady_now().count(), false});
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

}  // namespace

// One run of `script` under `schedule`; returns the run and the failures found ("" = none).
std::pair<fiber::RunResult, std::string> run_pull(const PullScript& script,
                                                  const fiber::Schedule& schedule) {
  auto h = std::make_shared<History>();
  auto end = std::make_shared<FinalState>();
  fiber::RunResult run =
      fiber::run_fibers({[h, end, script] {
                          broker::Broker b;
                          b.create_topic(kTopic);
                          broker::PullOptions options;
                          options.ack_timeout = milliseconds(30);
                          options.max_deliveries = 3;
                          options.start = broker::StartPosition::beginning();
                          b.subscribe_pull(kTopic, kSub, options);
                          std::vector<broker::sync::Thread> threads;
                          for (int n : script.publishers) {
                            threads.emplace_back([&b, h, n] {
                              for (int i = 0; i < n; ++i)
                                h->published.push_back(b.publish(kTopic, "m"));
                            });
                          }
                          for (std::size_t w = 0; w < script.workers.size(); ++w) {
                            threads.emplace_back([&b, h, w, &script] {
                              run_worker(b, *h, static_cast<int>(w), script.workers[w]);
                            });
                          }
                          for (auto& t : threads) t.join();
                          final_drain(b, *h);
                          end->stats = b.stats(kTopic, kSub);
                          for (const auto& d : b.dead_letters(kTopic, kSub))
                            end->dead.insert(d.message->offset);
                        }},
                        schedule);
  if (!run.ok()) return {run, "run-failed: " + std::string(fiber::to_string(run.outcome)) + "\n"};
  return {run, check_offsets(*h) + check_pull(*h, *end)};
}

std::pair<fiber::RunResult, std::string> run_push(const PushScript& script,
                                                  const fiber::Schedule& schedule) {
  auto h = std::make_shared<History>();
  auto alive = std::make_shared<std::map<int, FinalState>>();
  auto stuck = std::make_shared<bool>(false);
  const milliseconds timeout =
      script.pool && script.pool_timeout ? milliseconds(50) : milliseconds(0);
  fiber::RunResult run = fiber::run_fibers(
      {[h, alive, stuck, script, timeout] {
        broker::Broker b(script.pool ? broker::BrokerOptions::pool(2).with_handler_timeout(timeout)
                                     : broker::BrokerOptions::lane());
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

}  // namespace fiberprop
