// Runs ops of the operation language against a real broker::Broker.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "broker/broker.h"
#include "oplang/ops.h"
#include "oplang/outcome.h"
#include "oplang/script.h"
#include "simfs/sim_file_system.h"

namespace harness {

/// The model's name for a broker error code (same spelling, see model/errors.h).
model::ErrorCode to_model(broker::ErrorCode code);

/// A durable runner's storage: a simulated disk (simfs) and the broker's storage options.
/// Small segments and journal make rolls, segment retention and compaction happen in
/// short scripts.
struct DurableSetup {
  /// Empty: a fresh simulated disk. Otherwise the real file system at this directory (kept
  /// and reopened as it is: a process killed with SIGKILL is the crash; `crash` is refused).
  std::string directory{};
  broker::FsyncPolicy publish_sync = broker::FsyncPolicy::always();
  broker::FsyncPolicy commit_sync = broker::FsyncPolicy::always();
  std::uint64_t segment_bytes = 256;
  std::uint64_t journal_compact_bytes = 1024;
  bool repair = false;  // StorageOptions::repair (R21)
  /// The simulated disk to use (null: a fresh one; ignored with a directory), so a test can
  /// damage what a runner left and open it again itself.
  std::shared_ptr<broker::sim::SimFileSystem> disk{};
};

/// Executes ops one at a time on a fresh broker with the synchronous dispatcher and a
/// ManualClock at 0 that `advance` moves (poll_wait polls at it; its timeout is real time).
/// Push handlers are real lambdas that run their Script (model/script.h): they really throw
/// and really call back into the broker; an idempotent subscribe wraps its lambda in
/// broker::idempotent(), and an offer the wrapper answers without calling the lambda is
/// recorded as a call with the effect "idempotent -> repeat".
/// Not thread-safe: one step at a time (handlers run inside drain on the caller's thread).
class BrokerRunner {
 public:
  /// An in-memory broker (restart and crash are refused with std::logic_error).
  BrokerRunner();
  /// A durable broker on a fresh simulated disk (or setup.directory): `restart` closes and
  /// reopens it, `crash` cuts the power first (SimFileSystem::crash with the op's seed;
  /// std::logic_error on a real directory), and with damage (`crash truncate|corrupt`,
  /// R21) damages a segment at rest before the reopen and answers with a CutResult (see
  /// reopen_damaged), `fault` arms the simulated disk (R33; forgotten
  /// at the next reopen if it has not fired). A reopen that throws a broker::Error is that
  /// op's outcome; later steps then throw std::logic_error. The constructor throws
  /// broker::Error if the directory cannot be opened.
  explicit BrokerRunner(DurableSetup setup);
  ~BrokerRunner();
  BrokerRunner(const BrokerRunner&) = delete;
  BrokerRunner& operator=(const BrokerRunner&) = delete;

  /// Runs one op; the Outcome carries its result or error and the handler calls it made.
  /// Exceptions other than broker::Error escape (they are findings, not outcomes).
  oplang::Outcome step(const oplang::Op& op);
  /// Runs a poll, ack or nack as step does, touching only the broker (thread-safe) and the
  /// clock (atomic): several threads may call it at once, never alongside step. Throws
  /// std::invalid_argument for any other op.
  oplang::Outcome step_pull(const oplang::Op& op);
  /// The broker under test.
  [[nodiscard]] broker::Broker& broker() { return *broker_; }
  /// The simulated disk of a durable runner (null otherwise, and on a real directory).
  [[nodiscard]] broker::sim::SimFileSystem* disk() { return disk_.get(); }
  /// How many handler calls the last step made while the simulated disk was alive (before
  /// an armed crash fired): the calls the process really made before it died.
  [[nodiscard]] std::size_t calls_before_death() const { return calls_alive_; }

 private:
  // One subscribed handler's script and position.
  struct Handler {
    std::string topic;
    std::string name;
    model::Script script;
    std::size_t next_step = 0;
  };
  struct Apply;

  bool handle(Handler& handler, const broker::Delivery& delivery);
  void record_repeat(const Handler& handler, const broker::Delivery& delivery);
  std::string run_effect(const model::Step& step, const Handler& handler);
  std::unique_ptr<broker::Broker> open();
  void reopen(const oplang::Op& op);
  /// R21: a power cut (and a reopen and clean close, which read every log's end), damage at
  /// rest the seed picks, and the reopen (with repair after CorruptLog); says what it cut.
  oplang::CutResult reopen_damaged(const oplang::Crash& crash);

  std::shared_ptr<broker::ManualClock> clock_;
  std::optional<DurableSetup> setup_;
  std::shared_ptr<broker::sim::SimFileSystem> disk_;
  std::vector<model::HandlerCall> calls_;
  std::size_t calls_alive_ = 0;             // of calls_, made before the disk died
  std::unique_ptr<broker::Broker> broker_;  // destroyed after the publishers, with its handlers
  // Publish ops via_publisher go through these, one per topic name, made at the first and
  // kept (a topic deleted and created again under the name is the Publisher's to find).
  std::map<std::string, broker::Publisher> publishers_;  // destroyed before broker_
};

/// Whether a script restarts or crashes its broker, or faults its disk (then it needs a
/// durable runner).
bool needs_storage(const oplang::Script& script);
/// A fresh runner for script: durable (DurableSetup{}) if it needs storage, else in memory.
std::unique_ptr<BrokerRunner> runner_for(const oplang::Script& script);

/// Runs a whole script on a fresh broker.
std::vector<oplang::Outcome> run_broker(const oplang::Script& script);
/// Runs a whole script on a fresh durable broker (restart and crash allowed).
std::vector<oplang::Outcome> run_broker(const oplang::Script& script, const DurableSetup& setup);

}  // namespace harness
