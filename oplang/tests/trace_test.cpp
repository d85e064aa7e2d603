// The trace printer shared by spec-trace and the spec site's playground.
#include "oplang/trace.h"

#include <gtest/gtest.h>

#include <stdexcept>

#include "oplang/text.h"

namespace oplang {
namespace {

TEST(TraceTest, EachStepThenItsOutcomeIndentedThenTheStepCount) {
  EXPECT_EQ(model_trace(parse("create_topic t\n"
                              "subscribe t s script=[reject]\n"
                              "publish t a\n"
                              "drain\n"
                              "publish nope a\n")),
            "[1] create_topic t\n    ok\n"
            "[2] subscribe t s script=[reject]\n    ok\n"
            "[3] publish t a\n    offset 0\n"
            "[4] drain\n    confirmed 0\n      call t/s 0 a attempt=1\n"
            "[5] publish nope a\n    error unknown_topic\n"
            "model: 5 steps\n");
}

TEST(TraceTest, AnEmptyScriptIsZeroSteps) { EXPECT_EQ(model_trace({}), "model: 0 steps\n"); }

// A runner that lets a non-model exception escape: the trace says so instead of dying.
struct Throwing {
  Outcome step(const Op&) { throw std::logic_error("boom"); }
};

TEST(TraceTest, AnEscapingExceptionIsShownAsText) {
  Throwing runner;
  EXPECT_EQ(show(run_step(runner, Drain{})), "exception escaped: boom");
  EXPECT_EQ(step_heading(7, Drain{}), "[7] drain");
}

}  // namespace
}  // namespace oplang
