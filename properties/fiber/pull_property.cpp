// Concurrent pull workers (poll / ack / nack / expire) and publishers on one subscription,
// interleaved by a generated fiber schedule, checked against the at-least-once contract.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <deque>
#include <memory>
#include <sstream>

#include "broker/broker.h"
#include "common.h"
#include "history.h"
#include "sync/sync.h"

namespace fiberprop {
namespace {

using broker::Offset;
using std::chrono::milliseconds;

/// One step of a pull worker.
struct WorkerOp {
  enum Kind { kPoll, kAckOldest, kNackOldest, kAckAll, kExpire, kSleep };
  Kind kind;
  int arg;  // poll: max messages; sleep: tens of ms
};

/// A generated concurrent program: publishers' message counts and workers' op lists.
struct PullScript {
  std::vector<int> publishers;
  std::vector<std::vector<WorkerOp>> workers;
  std::string show() const {
    static const char* kNames[] = {"poll",    "ack-oldest", "nack-oldest",
                                   "ack-all", "expire",     "sleep"};
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
};

rc::Gen<PullScript> gen_script() {
  auto op = rc::gen::map(rc::gen::pair(rc::gen::inRange(0, 6), rc::gen::inRange(1, 4)),
                         [](std::pair<int, int> p) {
                           return WorkerOp{WorkerOp::Kind(p.first), p.second};
                         });
  return rc::gen::map(
      rc::gen::pair(
          rc::gen::resize(
              2, rc::gen::nonEmpty(rc::gen::container<std::vector<int>>(rc::gen::inRange(1, 5)))),
          rc::gen::resize(
              3, rc::gen::nonEmpty(
                     rc::gen::container<std::vector<std::vector<WorkerOp>>>(rc::gen::resize(
                         6, rc::gen::nonEmpty(rc::gen::container<std::vector<WorkerOp>>(op))))))),
      [](const auto& p) {
        return PullScript{p.first, p.second};
      });
}

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
    const milliseconds now = broker::sync::steady_now();
    c.accepted = kind == PullCall::Kind::kAck ? b.ack(kTopic, kSub, o, member, now)
                                              : b.nack(kTopic, kSub, o, member, now);
    c.ret = h.tick();
    h.pull.push_back(c);
  };
  for (const WorkerOp& op : ops) {
    switch (op.kind) {
      case WorkerOp::kPoll: {
        PullCall c(PullCall::Kind::kPoll, w, h.tick());
        auto got = b.poll(kTopic, kSub, member, broker::sync::steady_now(), op.arg);
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
        for (const broker::Expired& e : b.expire(broker::sync::steady_now()))
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
  const milliseconds later = broker::sync::steady_now() + std::chrono::hours(10);
  for (int round = 0; round < 100; ++round) {
    PullCall ex(PullCall::Kind::kExpire, kFinalWorker, h.tick());
    for (const broker::Expired& e : b.expire(later)) ex.expired.push_back(e.offset);
    ex.ret = h.tick();
    h.pull.push_back(ex);
    PullCall c(PullCall::Kind::kPoll, kFinalWorker, h.tick());
    auto got = b.poll(kTopic, kSub, "final", later, 100);
    c.ret = h.tick();
    for (const auto& r : got) c.got.push_back({r.message->offset, r.attempt});
    h.pull.push_back(c);
    if (got.empty() && ex.expired.empty()) return;
    for (const auto& r : got) {
      PullCall a(PullCall::Kind::kAck, kFinalWorker, h.tick());
      a.offset = r.message->offset;
      a.accepted = b.ack(kTopic, kSub, a.offset, "final", later);
      a.ret = h.tick();
      h.pull.push_back(a);
    }
  }
}

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

RC_GTEST_PROP(FiberPull, ConcurrentWorkersKeepTheContract, ()) {
  const PullScript script = *gen_script();
  const fiber::Schedule schedule = pick_schedule(*gen_schedule());
  auto [run, failures] = run_pull(script, schedule);
  if (!failures.empty()) RC_FAIL(failure_text(failures, script.show(), run));
}

// Schedules per second for a typical script (printed; a smoke bound only).
TEST(FiberPullThroughput, SchedulesPerSecond) {
  PullScript script{{3, 2},
                    {{{WorkerOp::kPoll, 2},
                      {WorkerOp::kAckOldest, 1},
                      {WorkerOp::kNackOldest, 1},
                      {WorkerOp::kPoll, 3},
                      {WorkerOp::kAckAll, 1}},
                     {{WorkerOp::kPoll, 1},
                      {WorkerOp::kSleep, 4},
                      {WorkerOp::kExpire, 1},
                      {WorkerOp::kPoll, 2},
                      {WorkerOp::kAckAll, 1}},
                     {{WorkerOp::kExpire, 1}, {WorkerOp::kPoll, 3}, {WorkerOp::kAckOldest, 1}}}};
  const auto start = std::chrono::steady_clock::now();
  constexpr int kRuns = 300;
  std::size_t points = 0;
  for (int seed = 1; seed <= kRuns; ++seed) {
    auto [run, failures] = run_pull(script, fiber::Schedule::random(seed));
    ASSERT_EQ(failures, "") << failure_text(failures, script.show(), run);
    points += run.steps;
  }
  const double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("pull workers: %.0f schedules/s (%zu scheduling points per run)\n", kRuns / secs,
              points / kRuns);
}

}  // namespace
}  // namespace fiberprop
