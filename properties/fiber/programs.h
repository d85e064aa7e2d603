// The concurrent programs of the fiber properties, as plain data plus the runner that plays
// one under a fiber schedule on broker_fiber, records its history and judges it with the
// checkers of history.h. Shared by properties/fiber (RapidCheck generates the programs) and
// fuzz/schedule_fuzzer.cpp (libFuzzer bytes decode to them); library `fiber_programs`.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "fiber/run.h"
#include "fiber/schedule.h"

namespace fiberprop {

/// One step of a pull worker.
struct WorkerOp {
  enum Kind { kPoll, kAckOldest, kNackOldest, kAckAll, kExpire, kSleep };
  Kind kind;
  int arg;  // poll: max messages; sleep: tens of ms
};

/// A concurrent pull program on one subscription (ack timeout 30ms, max_deliveries 3):
/// publisher fibers' message counts and worker fibers' op lists.
struct PullScript {
  std::vector<int> publishers;
  std::vector<std::vector<WorkerOp>> workers;
  std::string show() const;
};

/// What a push handler does on one call.
enum class Behavior { kOk, kFail, kThrow, kStall, kStallLong, kUnsubscribeSelf };

/// A concurrent push program: subscriptions s0, s1... (max_deliveries 3) on a Lane or Pool
/// dispatcher, publisher fibers, and optionally a fiber that unsubscribes s1.
struct PushScript {
  bool pool = false;
  bool pool_timeout = false;  // pool: handler_timeout 50ms (stall-long overruns it)
  std::vector<int> publishers;
  std::vector<std::vector<Behavior>> handlers;  // per subscription, cyclic by call count
  int unsubscribe_after = -1;                   // -1: no unsubscriber fiber; else yields before it
  std::string show() const;
};

/// Runs `script` under `schedule`; returns the run and the failures found ("" = none), each
/// line "<jepsen-name>: details", or "run-failed: ..." when the run deadlocked or looped.
std::pair<fiber::RunResult, std::string> run_pull(const PullScript& script,
                                                  const fiber::Schedule& schedule);
std::pair<fiber::RunResult, std::string> run_push(const PushScript& script,
                                                  const fiber::Schedule& schedule);

}  // namespace fiberprop
