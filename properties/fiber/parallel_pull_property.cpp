// R11 under parallel state-machine testing (Erlang QuickCheck style): a sequential prefix,
// then 2-3 concurrent branches of pull calls on the real broker (broker_fiber) under a
// generated fiber schedule; the recorded history must be linearizable against the model.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "common.h"
#include "linearizability.h"
#include "linearizability_program.h"

namespace fiberprop {
namespace {

using SteadyClock = std::chrono::steady_clock;

// One subscription: expire() locks subscriptions one at a time, so with two it is not
// atomic (see R11ExpireIsAtomicPerSubscriptionNotAcrossThem) and histories need not linearize.
constexpr ProgramShape kShape{1, 2, 3, 2, 5};

double seconds_since(SteadyClock::time_point start) {
  return std::chrono::duration<double>(SteadyClock::now() - start).count();
}

// "" when the run completed and its history linearizes; else the failure report.
std::string judge(const ParallelProgram& program, const ParallelRun& r) {
  if (!r.run.ok())
    return failure_text("run-failed: " + std::string(fiber::to_string(r.run.outcome)) + "\n",
                        program.show(), r.run);
  const LinearizabilityResult lin = check_linearizable(r.history);
  if (lin.ok) return "";
  return failure_text("non-linearizable:\n" + describe(r.history, lin), program.show(), r.run);
}

RC_GTEST_PROP(ParallelPull, R11HistoriesAreLinearizableAgainstTheModel, ()) {
  const ParallelProgram program = *gen_parallel_program(kShape);
  const fiber::Schedule schedule = pick_schedule(*gen_schedule());
  const std::string failure = judge(program, run_parallel(program, schedule));
  if (!failure.empty()) RC_FAIL(failure);
}

// R32: members joining, leaving, polling their partitions and answering with the generation
// they last saw, concurrently: the history must be linearizable against the model's
// groups (one holder per message across generations, fencing, the committed position).
RC_GTEST_PROP(ParallelPull, R32GroupHistoriesAreLinearizableAgainstTheModel, ()) {
  const ParallelProgram program = *gen_group_program(kShape);
  const fiber::Schedule schedule = pick_schedule(*gen_schedule());
  const ParallelRun run = run_parallel(program, schedule);
  // What the branches reached (printed by RapidCheck): the states fencing is about.
  bool got = false, accepted = false, refused = false, rebalanced = false;
  for (const Call& c : run.history.calls) {
    if (c.op.kind == PullOp::Kind::kPollGroup && c.result.size() > 2 && c.result[0] == '[') {
      got = true;
    }
    if (c.op.kind == PullOp::Kind::kJoin || c.op.kind == PullOp::Kind::kLeave) rebalanced = true;
    if (c.op.kind == PullOp::Kind::kAck || c.op.kind == PullOp::Kind::kNack) {
      (c.result == "true" ? accepted : refused) = true;
    }
  }
  RC_CLASSIFY(got, "poll_group got messages");
  RC_CLASSIFY(rebalanced, "a rebalance among the branches");
  RC_CLASSIFY(accepted, "an answer accepted");
  RC_CLASSIFY(refused, "an answer refused");
  const std::string failure = judge(program, run);
  if (!failure.empty()) RC_FAIL(failure);
}

// Characterizes R11 as built: expire() takes one subscription's lock at a time, so with two
// subscriptions a concurrent poller can slip between them and the history is not
// linearizable against the model's all-at-once expire. SPEC.md does not promise more, so
// the property above keeps to one subscription; this test finds and prints such a history.
TEST(ParallelPull, R11ExpireIsAtomicPerSubscriptionNotAcrossThem) {
  using K = PullOp::Kind;
  ParallelProgram program;
  program.prefix = {{K::kCreateTopic},
                    {K::kSubscribePull, 0, 0, 0, 0, 10, 0},
                    {K::kSubscribePull, 1, 0, 0, 0, 10, 0},
                    {K::kPublish}};
  program.branches = {{{K::kExpire, 0, 0, 0, 10}},
                      {{K::kPoll, 0, 0, 0, 0, 1}, {K::kPoll, 1, 0, 0, 0, 1}}};
  for (std::uint64_t seed = 1; seed <= 50000; ++seed) {
    const ParallelRun r = run_parallel(program, fiber::Schedule::random(seed));
    ASSERT_TRUE(r.run.ok()) << r.run.describe();
    const LinearizabilityResult lin = check_linearizable(r.history);
    if (!lin.ok) {
      std::printf("found after %llu schedules (%s):\n%s", static_cast<unsigned long long>(seed),
                  fiber::to_string(r.run.schedule).c_str(), describe(r.history, lin).c_str());
      return;
    }
  }
  ADD_FAILURE() << "no non-linearizable history in 50000 schedules: has expire() become atomic "
                   "across subscriptions? Then widen kShape to two subscriptions.";
}

// R32: a rebalance is one step for every answer. Member 0 answers the messages of its two
// partitions while member 1 joins (an eager rebalance that moves both): no schedule may let
// the first answer see the partitions moved and the second not yet. CI found such a history
// in the property above (ack false, then ack true) when a rebalance moved the partitions one
// lock at a time; here a fixed program runs many schedules, and counts those in which both
// answers overlap the join (the window the property needs luck to reach).
TEST(ParallelPull, R32ARebalanceIsOneStepForEveryAnswer) {
  using K = PullOp::Kind;
  ParallelProgram program;
  const PullOp join9{K::kJoin, 0, 9, 0, 0, 10, 0, 0};
  PullOp on_a{K::kPublish};
  on_a.key = 1;  // partition 0
  PullOp on_d{K::kPublish};
  on_d.key = 2;  // partition 1
  program.prefix = {{K::kCreateTopic, 0, 0, 0, 0, 2}, join9, {K::kLeave, 0, 9}, on_a, on_d};
  PullOp ack0{K::kAck, 0, 0, 0, 0, 0, 0};
  ack0.partition = 0;
  PullOp ack1 = ack0;
  ack1.partition = 1;
  program.branches = {
      {{K::kJoin, 0, 0, 0, 0, 10, 0, 0}, {K::kPollGroup, 0, 0, 0, 0, 2, 0}, ack0, ack1},
      {{K::kJoin, 0, 1, 0, 0, 10, 0, 0}}};
  int window = 0;
  for (std::uint64_t seed = 1; seed <= 3000; ++seed) {
    // Half random walks, half PCT (depth 3: the bug needs the join preempted between the
    // partitions, and the answers preempted around it).
    const fiber::Schedule schedule =
        seed % 2 ? fiber::Schedule::random(seed) : fiber::Schedule::pct(seed, 3, 150);
    const ParallelRun r = run_parallel(program, schedule);
    ASSERT_TRUE(r.run.ok()) << r.run.describe();
    const LinearizabilityResult lin = check_linearizable(r.history);
    ASSERT_TRUE(lin.ok) << "schedule " << fiber::to_string(r.run.schedule) << ":\n"
                        << describe(r.history, lin);
    const Call* join = nullptr;
    std::vector<const Call*> acks;
    for (const Call& c : r.history.calls) {
      if (c.branch == 1) join = &c;
      if (c.op.kind == K::kAck) acks.push_back(&c);
    }
    // Both answers overlap the join (the first returns after it began, the second begins
    // before it returned): the rebalance may fall between them.
    if (join != nullptr && acks.size() == 2 && join->invoke < acks[0]->ret &&
        acks[1]->invoke < join->ret) {
      ++window;
    }
  }
  std::printf("schedules with both answers overlapping the join: %d of 3000\n", window);
  EXPECT_GT(window, 0) << "no schedule reached the window: the test no longer tests it";
}

// Schedules per second (run + check) and histories checked per second (check alone) for
// programs of the property's shape. Printed; a smoke bound only.
TEST(ParallelPullThroughput, SchedulesAndHistoriesPerSecond) {
  const rc::Gen<ParallelProgram> gen = gen_parallel_program(kShape);
  constexpr int kRuns = 400;
  double run_secs = 0, check_secs = 0, worst_check = 0;
  std::size_t states = 0, calls = 0;
  for (int seed = 1; seed <= kRuns; ++seed) {
    const ParallelProgram program = gen(rc::Random(seed), 100).value();
    auto start = SteadyClock::now();
    const ParallelRun r = run_parallel(program, fiber::Schedule::random(seed));
    run_secs += seconds_since(start);
    ASSERT_TRUE(r.run.ok()) << r.run.describe();
    start = SteadyClock::now();
    const LinearizabilityResult lin = check_linearizable(r.history);
    const double took = seconds_since(start);
    check_secs += took;
    worst_check = std::max(worst_check, took);
    ASSERT_TRUE(lin.ok) << describe(r.history, lin) << program.show();
    states += lin.states;
    calls += r.history.calls.size();
  }
  std::printf(
      "parallel pull: %.0f schedules/s (run + check), %.0f histories checked/s (check only); "
      "%.1f branch calls and %.1f search states per history, worst check %.3f ms\n",
      kRuns / (run_secs + check_secs), kRuns / check_secs, double(calls) / kRuns,
      double(states) / kRuns, worst_check * 1e3);
}

// Check time by branch length (3 branches): for the broker's own (linearizable) histories,
// and for the same histories with one result corrupted, which no order explains, so the
// search must exhaust every order: the worst case, memoized and plain.
TEST(ParallelPullThroughput, CheckTimeByBranchLength) {
  for (int ops = 2; ops <= 10; ++ops) {
    const rc::Gen<ParallelProgram> gen = gen_parallel_program({1, 3, 3, ops, ops});
    constexpr int kRuns = 40;
    double ok_total = 0, bad_total = 0, bad_worst = 0, plain_total = 0, plain_worst = 0;
    for (int seed = 1; seed <= kRuns; ++seed) {
      const ParallelProgram program = gen(rc::Random(seed * 7919), 100).value();
      ParallelRun r = run_parallel(program, fiber::Schedule::random(seed));
      ASSERT_TRUE(r.run.ok()) << r.run.describe();
      auto start = SteadyClock::now();
      const LinearizabilityResult lin = check_linearizable(r.history);
      ok_total += seconds_since(start) * 1e3;
      ASSERT_TRUE(lin.ok) << describe(r.history, lin);
      r.history.calls.back().result = "corrupted";
      for (bool memo : {true, false}) {
        if (!memo && ops > 5) continue;
        start = SteadyClock::now();
        ASSERT_FALSE(check_linearizable(r.history, memo).ok);
        const double took = seconds_since(start) * 1e3;
        (memo ? bad_total : plain_total) += took;
        double& worst = memo ? bad_worst : plain_worst;
        worst = std::max(worst, took);
      }
    }
    std::printf(
        "3 branches x %d ops: linearizable mean %.3f ms; corrupted: memoized mean %.3f ms "
        "worst %.3f ms, plain mean %.3f ms worst %.3f ms\n",
        ops, ok_total / kRuns, bad_total / kRuns, bad_worst, plain_total / kRuns, plain_worst);
  }
}

}  // namespace
}  // namespace fiberprop
