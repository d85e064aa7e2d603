// Concurrent programs of the operation language: the broker they run on (its dispatcher
// and knobs), ops that run in order first, then fibers that run their ops concurrently,
// interleaved by a fiber schedule. properties/fiber's run_program plays them on the real
// broker (fiber back-end) and judges the history; fiber-replay runs one from its text.
// Text form: oplang/text.h (print / parse_program; parse_program(print(p)) == p).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "oplang/ops.h"

namespace oplang {

/// When a durable program's broker syncs (broker::FsyncPolicy, SPEC R19): `always`,
/// `every(MS)` (a flusher, on the fiber runtime's virtual time) or `none`.
struct SyncPolicy {
  enum class Kind { kAlways, kEvery, kNone };
  Kind kind = Kind::kAlways;
  Millis every = 0;  // kEvery only, > 0
  bool operator==(const SyncPolicy&) const = default;
};

/// `broker sync|lane|pool [threads=N] [timeout=MS] [backoff=MS] [shutdown] [durable
/// [publish_sync=P] [commit_sync=P]]`: the broker a program runs on. threads and timeout
/// (handler timeout, 0 = none) are the pool's; backoff (the wait before re-offering after a
/// second failure in a row) is lane's and pool's. shutdown (lane, pool): once the fibers are
/// done the broker is destroyed at once, with its dispatcher mid-work (R16), instead of
/// being left to deliver everything. durable: the broker keeps its topics on a simulated
/// disk with these policies (P: always, none or every(MS)); a `crash` op in a fiber cuts
/// the power there, and after the run the broker is reopened on what the disk kept.
struct BrokerSpec {
  enum class Dispatcher { kSynchronous, kLane, kPool };
  Dispatcher dispatcher = Dispatcher::kSynchronous;
  std::size_t threads = 2;
  Millis timeout = 0;
  Millis backoff = 5;
  bool shutdown = false;
  Millis auto_expire = 0;     // R17: the timer's period (0: no automatic expiry)
  bool manual_clock = false;  // R28: `clock=manual`: `advance` moves the broker's clock
  bool durable = false;
  SyncPolicy publish_sync{};
  SyncPolicy commit_sync{};
  bool operator==(const BrokerSpec&) const = default;
};

/// `fiber NAME` and its indented ops: one concurrent caller, its ops in order.
struct Fiber {
  std::string name;
  Script ops;
  bool operator==(const Fiber&) const = default;
};

/// A concurrent program: `setup` runs first, in order; then every fiber starts (in order)
/// and they run as the schedule interleaves them.
struct Program {
  BrokerSpec broker;
  Script setup;
  std::vector<Fiber> fibers;
  bool operator==(const Program&) const = default;
};

}  // namespace oplang
