// The fault workload: one client publishes unique values while 1-3 consumers poll, ack,
// nack and let messages time out, and the server is killed (SIGKILL) or stopped cleanly and
// started again on the same directory at times drawn from a seed. After the faults, a final
// drain (past every ack deadline, poll everything, ack it), then the history is judged by
// value (conformance/fault_history.h).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "conformance/fault_history.h"
#include "conformance/target.h"

namespace conformance {

/// What the workload may do to the engine's server; all run on the fault thread while the
/// client keeps calling. kill9: SIGKILL, no warning. stop: a clean shutdown (it stays down).
/// restart: stop it cleanly if it runs, start it again on the same port and directory, wait
/// until it serves; throws TargetFailure if it does not come back within its bound. A clean
/// restart is stop, then restart: the history marks the moment the server was down.
struct FaultControl {
  std::function<void()> kill9;
  std::function<void()> stop;
  std::function<void()> restart;
};

/// One fault of a schedule: at `at_ms` since the run began, `kill9` (then down for
/// `down_ms` before the restart) or a clean restart.
struct Fault {
  std::int64_t at_ms = 0;
  bool kill9 = true;
  std::int64_t down_ms = 0;
};

/// A fault run's settings. kinds: "kill9", "restart" or "both".
struct FaultOptions {
  std::uint64_t seed = 1;
  double seconds = 30;
  std::string kinds = "both";
  int consumers = 0;  // 0: 1-3, drawn from the seed
  std::int64_t ack_timeout_ms = 1000;
  // The drain ends after this many rounds in a row, an ack timeout apart, found nothing (a
  // cluster electing leaders needs more than a single server).
  int drain_quiet_rounds = 2;
  // Where progress lines go (one every ~5 s); none if empty.
  std::function<void(const std::string&)> progress;
};

/// The faults of a run, drawn from seed alone: one every 1.5-4 s, the first after 1 s, none
/// in the last second. Throws std::invalid_argument for unknown kinds.
std::vector<Fault> fault_schedule(const FaultOptions& options);

/// What a run did and what the checker found.
struct FaultReport {
  std::vector<Fault> faults;
  std::vector<FaultEvent> history;
  std::map<std::string, std::vector<std::string>> anomalies;  // anomaly_names() -> values
  std::size_t published = 0, ok = 0, failed = 0, indeterminate = 0;
  std::size_t delivered = 0, acks_accepted = 0, call_errors = 0;
  int consumers = 0;
};

/// Runs the workload on `target` (a fresh one: it creates topic "faults" and subscription
/// "s"; unit: 1 real ms a model ms), with `control` for the faults. The client reconnects
/// through the target; an engine that serves no call for 30 s at a stretch, or a restart
/// that fails, ends the run with TargetFailure. Checks `stop` between calls (an interrupt):
/// if it turns true the run ends early, unjudged, with TargetFailure.
FaultReport run_faults(Target& target, const FaultControl& control, const FaultOptions& options,
                       const std::function<bool()>& stop);

}  // namespace conformance
