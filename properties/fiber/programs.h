// The shapes the fiber properties and fuzz/schedule_fuzzer.cpp generate, and their
// translation into operation-language programs (oplang/program.h). These structs are
// generator-side only (RapidCheck shrinks them well, the fuzzer's byte format decodes to
// them); what runs, prints and replays is the oplang::Program that program() returns, played
// by run_program (program_runner.h). Library `fiber_programs`.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "oplang/program.h"

namespace fiberprop {

/// One step of a pull worker.
struct WorkerOp {
  // (schedule_fuzzer decodes the first six by index: new kinds go at the end)
  enum Kind {
    kPoll,
    kAckOldest,
    kNackOldest,
    kAckAll,
    kExpire,
    kSleep,
    kPollWait,
    kTermOldest,
    kExtendOldest
  };
  Kind kind;
  int arg;  // poll, poll_wait: max messages; sleep: tens of ms; extend: extension_ms(arg)
};

/// An extend's extension for WorkerOp arg 1-4: 1, 5, 20 or 60 ms (shorter and longer than
/// the ack timeouts the generators use).
std::int64_t extension_ms(int arg);

/// Concurrent pull workers on one subscription: publisher fibers' message counts and worker
/// fibers' op lists, optionally on a topic that keeps only `retention` messages, and
/// optionally a fiber that subscribes `q` (start=end) while the publishers run. program():
///   broker sync
///   create_topic t [messages=N]
///   subscribe_pull t p timeout=30 max=3 start=begin [inflight=N]
///   publish t m             (setup_messages times)
///   fiber pub0              (one per publisher: [advance GAP] publish t m, as often as it
///                            publishes)
///   fiber w0                (one per worker, member w0: poll t p w0 max=N, ack t p oldest w0,
///                            nack t p oldest w0, ack t p all w0, expire, advance 10*N,
///                            poll_wait t p w0 max=N timeout=20, term t p oldest w0)
///   fiber late              (yield N, subscribe_pull t q start=end, poll t q late max=2)
struct PullScript {
  std::vector<int> publishers;
  std::vector<std::vector<WorkerOp>> workers;
  std::size_t retention = 0;      // retention_messages of t (0: none)
  int setup_messages = 0;         // published by the setup, before the fibers start
  int publish_gap = 0;            // ms each publisher waits before each publish
  int late_after = -1;            // -1: no late subscriber; else yields before it subscribes
  std::size_t max_in_flight = 0;  // p's bound (R22), 0: none
  [[nodiscard]] oplang::Program program() const;
};

/// What a push handler does on one call.
// kStallFail: stalls as kStall, then rejects (publishers run meanwhile: on a retained topic
// the message it fails may be dropped while it is held, R3).
enum class Behavior { kOk, kFail, kThrow, kStall, kStallLong, kUnsubscribeSelf, kStallFail };

/// Concurrent push: subscriptions s0, s1, ... on a Lane or Pool(threads) dispatcher, messages
/// published by the setup and by publisher fibers, and optionally a fiber that unsubscribes
/// s1. Handler behaviours cycle by call count; program() unrolls each cycle into the
/// handler's script (steps, then confirm forever) far enough for every call the run can make
/// (messages x max_deliveries):
///   broker lane|pool [threads=N] [timeout=50] [backoff=MS] [shutdown]
///   create_topic t [messages=N]
///   subscribe t s0 max=3|1 start=begin script=[confirm,reject,stall(20),stall(80),...]
///   publish t m             (setup_messages times)
///   fiber pub0              ([advance GAP] publish t m, as often as it publishes)
///   fiber unsub             (yield N, then unsubscribe t s1)
///   fiber late              (yield N, then subscribe t late max=3 script=s0's: start=end)
///   fiber seeker            (yield N, then seek t s0 0)
///   fiber joiner            (s0 is in group g; yield N, then subscribe t j0 ... group=g)
///   fiber pauser            (yield N, pause t s0, yield M, resume t s0: R26)
///   fiber redriver          (advance the back-off, yield N, then redrive t s0: R25)
struct PushScript {
  bool pool = false;
  bool pool_timeout = false;  // pool: handler timeout 50ms (stall 80 overruns it)
  std::vector<int> publishers;
  std::vector<std::vector<Behavior>> handlers;  // per subscription, cyclic by call count
  int unsubscribe_after = -1;                   // -1: no unsubscriber fiber; else yields before it
  std::size_t threads = 2;                      // pool threads
  std::int64_t backoff = 5;                     // retry_backoff in ms
  int setup_messages = 0;                       // published by the setup, after subscribing
  int publish_gap = 0;                          // ms each publisher waits before each publish
  bool shutdown = false;                        // destroy the broker after the fibers (R16)
  int late_after = -1;        // -1: none; else a fiber yields this often, then subscribes `late`
  int seek_after = -1;        // -1: none; else a fiber yields this often, then seeks s0 to 0
  int join_after = -1;        // -1: none; else s0 is in group g and a fiber joins it as j0
  std::size_t retention = 0;  // retention_messages of t (0: none)
  int pause_after = -1;       // -1: none; else a fiber yields this often, then pauses s0,
  int pause_for = 0;          // yields this often, then resumes it (R26; not with join_after)
  int redrive_after = -1;     // -1: none; else s0's first message dies after the back-off
                              // and a fiber waits it out, yields this often, redrives s0 (R25)
  std::vector<std::int64_t> waits{};  // every subscription's R24 back-off list (empty: none)
  int max_deliveries = 3;             // every subscription's (R23; 1: a failure dead-letters)
  [[nodiscard]] oplang::Program program() const;
};

/// The timed rules of pull subscriptions on virtual time (SPEC R11's poll_wait, R17; judged
/// by waits.h): automatic expiry of what workers on p hold and do not answer (extends move
/// their deadlines, shorter or longer), and poll_wait on a side subscription q whose option
/// keeps messages from it while a fiber seeks, resumes or unsubscribes it. program():
///   broker sync auto_expire=PERIOD
///   create_topic t
///   subscribe_pull t p timeout=ACK max=3 start=begin
///   subscribe_pull t q timeout=ACK max=3 start=begin [filter=[h=a] | ordered | inflight=1]
///   [pause t q]                          (side kPaused)
///   fiber pub0   ([advance GAP] publish t m headers=[h=a|b] key=k0|k1, alternating)
///   fiber w0     (as PullScript's workers, and extend t p oldest w0 ext=E)
///   fiber q0     (poll_wait t q q0 max=1 timeout=WAIT, ack t q all q0; `waits` times)
///   fiber mover  ([advance AFTER] seek t q 0 | resume t q | unsubscribe t q)
struct TimedPullScript {
  enum class Side { kPlain, kFilter, kOrdered, kBounded, kPaused };
  enum class Move { kNone, kSeek, kResume, kUnsubscribe };
  std::vector<int> publishers;
  int publish_gap = 0;
  std::int64_t period = 50;       // auto_expire's
  std::int64_t ack_timeout = 30;  // p's and q's
  std::vector<std::vector<WorkerOp>> workers;
  Side side = Side::kPlain;
  int side_waiters = 1;  // fibers q0, q1 (two: one holds a key or the bound, one waits)
  int waits = 2;         // poll_waits per side waiter
  std::int64_t wait_ms = 20;
  Move move = Move::kNone;
  int move_after = 0;  // ms of virtual time before the move
  [[nodiscard]] oplang::Program program() const;
};

/// A durable broker and one power cut (SPEC R19, R20; judged by durability.h): publisher
/// fibers and pull workers on p, and a fiber that cuts the power after `cut_after` ms of
/// virtual time, under one pair of sync policies. program():
///   broker sync durable [publish_sync=P] [commit_sync=P]
///   create_topic t
///   subscribe_pull t p timeout=30 max=3 start=begin
///   fiber pub0              ([advance GAP] publish t "m0\xe9K", K = 0, 1, ...)
///   fiber w0                (as PullScript's workers)
///   fiber cut               ([advance MS] crash seed=S)
struct DurableScript {
  oplang::SyncPolicy publish_sync{};
  oplang::SyncPolicy commit_sync{};
  std::vector<int> publishers;
  int publish_gap = 0;
  std::vector<std::vector<WorkerOp>> workers;
  int cut_after = 0;
  std::uint64_t seed = 0;  // the cut's: which unsynced bytes and entries survive
  [[nodiscard]] oplang::Program program() const;
};

}  // namespace fiberprop
