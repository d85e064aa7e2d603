// Push subscriptions on Lane and Pool dispatchers running as fibers: concurrent publishers,
// failing / throwing / stalling handlers, unsubscribe from another fiber and from inside
// the handler, checked after the run went idle.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <chrono>
#include <cstdio>

#include "common.h"
#include "program_runner.h"
#include "programs.h"

namespace fiberprop {
namespace {

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

// This property found PoolCore::run_timer growing `workers` while walking it (a handler
// overrunning handler_timeout crashed the process); fixed, and kept as the regression
// test PoolHandlerOverrunIsAFailureNotACrash below.
constexpr bool kPoolOverrunCrashes = false;

RC_GTEST_PROP(FiberPush, LaneAndPoolKeepTheContract, ()) {
  PushScript script = *gen_script();
  if (kPoolOverrunCrashes) script.pool_timeout = false;
  const fiber::Schedule schedule = pick_schedule(*gen_schedule());
  const oplang::Program program = script.program();
  const ProgramRun run = run_program(program, schedule);
  if (!run.ok()) RC_FAIL(failure_text(run, program));
}

TEST(FiberPushThroughput, SchedulesPerSecond) {
  using B = Behavior;
  for (bool pool : {false, true}) {
    PushScript script{pool,
                      !kPoolOverrunCrashes,
                      {3, 2},
                      {{B::kOk, B::kFail, B::kOk}, {B::kOk, B::kStallLong, B::kUnsubscribeSelf}},
                      3};
    const oplang::Program program = script.program();
    const auto start = std::chrono::steady_clock::now();
    constexpr int kRuns = 200;
    std::size_t points = 0;
    for (int seed = 1; seed <= kRuns; ++seed) {
      const ProgramRun run = run_program(program, fiber::Schedule::random(seed));
      ASSERT_EQ(run.failures, "") << failure_text(run, program);
      points += run.run.steps;
    }
    const double secs =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf("push %s: %.0f schedules/s (%zu scheduling points per run)\n",
                pool ? "pool" : "lane", kRuns / secs, points / kRuns);
  }
}

// Crashed (SIGSEGV in PoolCore::run_timer) on the broker as of d34f759.
TEST(FiberPush, PoolHandlerOverrunIsAFailureNotACrash) {
  const oplang::Program program =
      PushScript{true, true, {1}, {{Behavior::kStallLong}, {Behavior::kOk}}, -1}.program();
  const ProgramRun run = run_program(program, fiber::Schedule::walk({}));
  EXPECT_EQ(run.failures, "") << failure_text(run, program);
}

}  // namespace
}  // namespace fiberprop
