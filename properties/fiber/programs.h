// The shapes the fiber properties and fuzz/schedule_fuzzer.cpp generate, and their
// translation into operation-language programs (oplang/program.h). These structs are
// generator-side only (RapidCheck shrinks them well, the fuzzer's byte format decodes to
// them); what runs, prints and replays is the oplang::Program that program() returns, played
// by run_program (program_runner.h). Library `fiber_programs`.
#pragma once

#include <vector>

#include "oplang/program.h"

namespace fiberprop {

/// One step of a pull worker.
struct WorkerOp {
  enum Kind { kPoll, kAckOldest, kNackOldest, kAckAll, kExpire, kSleep };
  Kind kind;
  int arg;  // poll: max messages; sleep: tens of ms
};

/// Concurrent pull workers on one subscription: publisher fibers' message counts and worker
/// fibers' op lists. program():
///   broker sync
///   create_topic t
///   subscribe_pull t p timeout=30 max=3 start=begin
///   fiber pub0              (one per publisher: `publish t m` as often as it publishes)
///   fiber w0                (one per worker, member w0: poll t p w0 max=N, ack t p oldest w0,
///                            nack t p oldest w0, ack t p all w0, expire, advance 10*N)
struct PullScript {
  std::vector<int> publishers;
  std::vector<std::vector<WorkerOp>> workers;
  [[nodiscard]] oplang::Program program() const;
};

/// What a push handler does on one call.
enum class Behavior { kOk, kFail, kThrow, kStall, kStallLong, kUnsubscribeSelf };

/// Concurrent push: subscriptions s0, s1, ... on a Lane or Pool(2) dispatcher, publisher
/// fibers, and optionally a fiber that unsubscribes s1. Handler behaviours cycle by call
/// count; program() unrolls each cycle into the handler's script (steps, then confirm
/// forever) far enough for every call the run can make (messages x max_deliveries):
///   broker lane | broker pool [timeout=50]
///   create_topic t
///   subscribe t s0 max=3 start=begin script=[confirm,reject,throw,stall(20),stall(80),unsubscribe]
///   fiber pub0 ... publish t m
///   fiber unsub:  yield N, then unsubscribe t s1
struct PushScript {
  bool pool = false;
  bool pool_timeout = false;  // pool: handler timeout 50ms (stall 80 overruns it)
  std::vector<int> publishers;
  std::vector<std::vector<Behavior>> handlers;  // per subscription, cyclic by call count
  int unsubscribe_after = -1;                   // -1: no unsubscriber fiber; else yields before it
  [[nodiscard]] oplang::Program program() const;
};

}  // namespace fiberprop
