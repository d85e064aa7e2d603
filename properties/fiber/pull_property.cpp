// Concurrent pull workers (poll / ack / nack / expire) and publishers on one subscription,
// interleaved by a generated fiber schedule, checked against the at-least-once contract.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <chrono>
#include <cstdio>

#include "common.h"
#include "generators.h"
#include "program_runner.h"
#include "programs.h"

namespace fiberprop {
namespace {

RC_GTEST_PROP(FiberPull, ConcurrentWorkersKeepTheContract, ()) {
  const PullScript script = *gen_pull_script(*rc::gen::arbitrary<bool>());  // half swarm
  const fiber::Schedule schedule = pick_schedule(*gen_schedule());
  const oplang::Program program = script.program();
  const ProgramRun run = run_program(program, schedule);
  if (!run.ok()) RC_FAIL(failure_text(run, program));
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
  const oplang::Program program = script.program();
  const auto start = std::chrono::steady_clock::now();
  constexpr int kRuns = 300;
  std::size_t points = 0;
  for (int seed = 1; seed <= kRuns; ++seed) {
    const ProgramRun run = run_program(program, fiber::Schedule::random(seed));
    ASSERT_EQ(run.failures, "") << failure_text(run, program);
    points += run.run.steps;
  }
  const double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("pull workers: %.0f schedules/s (%zu scheduling points per run)\n", kRuns / secs,
              points / kRuns);
}

}  // namespace
}  // namespace fiberprop
