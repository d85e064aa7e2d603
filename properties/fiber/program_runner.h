// The one runner of concurrent operation-language programs (oplang/program.h): plays a
// program on the real broker (broker_fiber) under a fiber schedule, records its History
// (history.h) and judges it with the checkers there. Used by every fiber property, by
// fuzz/schedule_fuzzer.cpp and by fiber-replay; library `fiber_programs`.
//
// How a program runs. One body fiber builds the broker the `broker` line describes, runs the
// setup ops in order, starts one fiber per `fiber` block (in order) and joins them. Each op is
// the broker call of its name; `now` is the fiber runtime's virtual time, `advance MS` sleeps
// the calling fiber MS of virtual time, `yield N` makes N scheduling points. With
// `clock=manual` the broker's clock is a manual one whose every read is a scheduling point:
// `now` is its time and `advance MS` moves it (back too) without sleeping. ack / nack /
// extend with `oldest` or `all` name messages from the member's hand: what poll gave that
// member (per topic and subscription) and it has not acked or nacked since, oldest first
// (it may have expired meanwhile: then the broker refuses). Handler steps run as scripted
// (`stall(MS)` sleeps the handler). A broker::Error is an answer, recorded in the history.
// After the fibers: push subscriptions are left to settle (wait_idle, or drain on the
// synchronous dispatcher, until nothing is in flight or backlogged), then every checked
// pull subscription is drained (expire far in the future, poll and ack until nothing
// comes back).
//
// What is checked. Always: the run completes (no deadlock, no livelock, no exception escaped a
// fiber), no call throws anything but broker::Error, and every message a handler, poll or
// dead letter shows is the one published at its offset (wrong-content: payload, key,
// headers). Checked topics (created in the setup
// without retention, never deleted): publish offsets unique and dense from 0. Checked
// subscriptions (created once, in the setup, start=begin, no filter, no group, on a checked
// topic; never seeked or subscribed again; pull ones never unsubscribed) get the history
// checkers: push - lost, nonmonotonic, duplicated-beyond-redelivery, double-held,
// delivery-after-unsubscribe, redrive-order, counters, stuck; pull - lost, unexpected,
// nonmonotonic, poll-skip, duplicated-beyond-redelivery, double-held, acked-came-back, counters. A
// typed error from a call that names a checked topic or subscription is a failure too
// (unexpected-error). Other subscriptions only have to complete. Every program's poll_waits
// are judged by waits.h (early-return, stuck), under `auto_expire` its checked pull
// subscriptions' holds too (late-expiry), and under `clock=manual` offset_for_time at every
// publish time read back (seek-by-time).
#pragma once

#include <string>
#include <vector>

#include "conformance/timeline_page.h"
#include "fiber/run.h"
#include "fiber/schedule.h"
#include "oplang/program.h"

namespace fiberprop {

/// One run of a program and its verdict.
struct ProgramRun {
  fiber::RunResult run;
  std::string failures;  // "" when every check passed; else "<anomaly>: details" lines
  std::string history;   // every call and handler call by logical tick, one per line
  /// The same calls as bars for timeline_html (row: the fiber; times: logical ticks); the
  /// anomaly is every call that names the offset the first failure line names (or, in a
  /// run that did not complete, every call that never returned).
  std::vector<conformance::TimedStep> timeline;
  std::string checked;  // one line: which checks applied to which topics and subscriptions
  [[nodiscard]] bool ok() const { return failures.empty(); }
};

/// Plays `program` under `schedule` and judges it (see above).
ProgramRun run_program(const oplang::Program& program, const fiber::Schedule& schedule);
/// Plays several programs in one run, each on its own broker, their fibers interleaved by
/// one schedule (brokers in one process must not disturb each other); judges each, and
/// prefixes every anomaly and history with "broker N: ".
ProgramRun run_programs(const std::vector<oplang::Program>& programs,
                        const fiber::Schedule& schedule);

/// The command that replays `program` under `schedule`, self-contained (a here-document):
///   replay: <build>/properties_fiber/fiber-replay --schedule '...' - <<'EOF'
///   ...program text...
///   EOF
std::string replay_command(const oplang::Program& program, const fiber::Schedule& schedule);
std::string replay_command(const std::vector<oplang::Program>& programs,
                           const fiber::Schedule& schedule);

/// A failure report: the anomaly lines, the program (under a line `program:`, indented two
/// spaces), the run's outcome and schedule, the replay command, and `timeline: PAGE`, the
/// run drawn as an HTML page (conformance/timeline_page.h) written next to fiber-replay, in
/// `timelines/`, or into $FIBER_TIMELINE_DIR (left out if it cannot be written).
std::string failure_report(const ProgramRun& run, const oplang::Program& program);
std::string failure_report(const ProgramRun& run, const std::vector<oplang::Program>& programs);

}  // namespace fiberprop
