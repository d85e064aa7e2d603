// Concurrent pull workers (poll / ack / nack / expire) and publishers on one subscription,
// interleaved by a generated fiber schedule, checked against the at-least-once contract.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <chrono>
#include <cstdio>

#include "common.h"
#include "generators.h"
#include "oplang/text.h"
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

// Issue 13, finding 6 (R3): a poll reading the redelivery head while a publish drops it by
// retention lost the message without counting it as skipped. The window is between the
// poll's catch-up and its read; of these schedules, some put the publish there (the poll
// then hands out offset 1 first), and every one must account for offset 0.
TEST(FiberPull, R3ARedeliveryDroppedWhileAPollReadsItIsCountedAsSkipped) {
  const oplang::Program program = oplang::parse_program(R"(broker sync
create_topic t messages=2
subscribe_pull t p timeout=30 max=3 start=begin
publish t m
publish t m
poll t p w0 max=1
nack t p 0 w0
fiber pub
  publish t m
fiber w0
  poll t p w0 max=1
)");
  int in_window = 0;
  for (std::uint64_t seed = 1; seed <= 300; ++seed) {
    const fiber::Schedule schedule = fiber::Schedule::random(seed);
    const ProgramRun run = run_program(program, schedule);
    ASSERT_EQ(run.failures, "") << failure_report(run, program);
    // The publish ran inside the poll (its ticks nested in the poll's).
    const auto poll = ticks_of(run, "w0      poll"), publish = ticks_of(run, "pub     publish");
    if (poll.first < publish.first && publish.second < poll.second) ++in_window;
  }
  std::printf("schedules with the publish inside the poll's window: %d of 300\n", in_window);
  EXPECT_GT(in_window, 0) << "no schedule reached the window: the test no longer tests it";
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
