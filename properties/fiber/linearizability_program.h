// Parallel pull programs as Erlang QuickCheck's parallel state machines make them: a
// sequential prefix, then 2-3 concurrent branches; their generator, and their run on the
// real broker (broker_fiber) under a fiber schedule, recording a ParallelHistory.
#pragma once

#include <rapidcheck.h>

#include <string>
#include <vector>

#include "fiber/run.h"
#include "fiber/schedule.h"
#include "linearizability.h"

namespace fiberprop {

/// A generated parallel program.
struct ParallelProgram {
  std::vector<PullOp> prefix;                 // create_topic, subscribe_pull..., publish...
  std::vector<std::vector<PullOp>> branches;  // run concurrently, one fiber each
  /// The program as text, one line per op.
  [[nodiscard]] std::string show() const;
};

/// Sizes of generated programs.
struct ProgramShape {
  int max_subscriptions = 1;
  int min_branches = 2, max_branches = 3;
  int min_ops = 2, max_ops = 5;  // per branch
};

/// Programs of `shape`: 0-4 prefix publishes; branch ops publish / poll / ack / nack / extend
/// / expire with `now` in 0, 5, ..., 30 against ack timeouts of 10 or 20, so acks land
/// before, at and after deadlines. Shrinks ops, branch lengths and the prefix.
rc::Gen<ParallelProgram> gen_parallel_program(const ProgramShape& shape);

/// Consumer group programs (R32): a topic of 2 partitions, a group joined in the prefix,
/// and branches that are members: joining, leaving, polling the group and answering
/// partitions' offsets with the generation they last saw, with publishes and expiries.
rc::Gen<ParallelProgram> gen_group_program(const ProgramShape& shape);

/// One run of a program: what the scheduler did and what the calls returned.
struct ParallelRun {
  fiber::RunResult run;
  ParallelHistory history;
};

/// Runs the prefix, then each branch as a fiber on a fresh broker, under `schedule`; every
/// call is stamped with logical invoke / return ticks and its canonical result text.
ParallelRun run_parallel(const ParallelProgram& program, const fiber::Schedule& schedule);

}  // namespace fiberprop
