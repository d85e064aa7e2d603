// The fault workload: one client publishes unique values while 1-3 consumers poll, ack,
// nack and let messages time out (resting in about one second of three, so faults also find
// a backlog never handed out), and the server is killed (SIGKILL) or stopped cleanly and
// started again on the same directory at times drawn from a seed. After the faults, a final
// drain (past every ack deadline, poll everything, ack it), then the history is judged by
// value (conformance/fault_history.h).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
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
/// pause / resume: SIGSTOP / SIGCONT (the process keeps its memory and its sockets).
/// lose_unsynced: a power cut: SIGKILL, then the writes its files had not synced are
/// dropped (conformance/lazy_fs.h); it stays down until restart. damage: SIGKILL, then
/// damage at rest drawn from `where` (conformance/damage.h), returning what it did; it
/// stays down until restart. fail_disk: the data directory's file system fails every write
/// and fsync with EIO or ENOSPC, or only every fsync with EIO, as drawn from `where`
/// (conformance/lazy_fs.h), while the server runs on, returning which; heal_disk: it takes
/// writes again. An empty function: the
/// kind is not offered for this engine.
struct FaultControl {
  std::function<void()> kill9;
  std::function<void()> stop;
  std::function<void()> restart;
  std::function<void()> pause;
  std::function<void()> resume;
  std::function<void()> lose_unsynced;
  std::function<std::string(std::uint64_t where)> damage;
  std::function<std::string(std::uint64_t where)> fail_disk;
  std::function<void()> heal_disk;
  /// repair: after a damage whose restart the engine refused (TargetFailure), the engine's
  /// own repair and a start, returning what the repair said it cut; empty: a refusal ends
  /// the run as an engine failure.
  std::function<std::string()> repair;
  /// partition: cuts links between the nodes and the client, chosen from `where`, returning
  /// which; heal: heals every cut. The processes run on.
  std::function<std::string(std::uint64_t where)> partition;
  std::function<void()> heal;
  /// remove_member: a membership change: takes a node out of the stream's peers, chosen
  /// from `where`, returning which and the engine's answer; add_member: adds it back and
  /// waits until it caught up. The processes run on.
  std::function<std::string(std::uint64_t where)> remove_member;
  std::function<void()> add_member;
  /// Called once the topic and subscription exist, before the first publish (may be empty):
  /// where power cuts come, the disks write back what the setup wrote, as a kernel does in
  /// time (the stream was made long ago; what a cut may lose is the traffic).
  std::function<void()> after_setup;
};

/// One fault of a schedule: at `at_ms` since the run began, its kind, and for a kill -9 or
/// a power cut how long the server stays down before its restart, for a pause how long it
/// stays paused.
struct Fault {
  enum class Kind {
    kKill9,
    kRestart,
    kPause,
    kLoseUnsynced,
    kDamage,
    kPartition,
    kMembership,
    kDiskError
  };
  std::int64_t at_ms = 0;
  Kind kind = Kind::kKill9;
  std::int64_t down_ms = 0;  // kDiskError: how long the disk fails
  std::uint64_t where = 0;  // kDamage, kPartition, kMembership, kDiskError: the draw that places it
};

/// A kind's name on the command line: kill9, restart, pause, lose-unsynced, damage,
/// partition, membership, disk-error.
std::string fault_kind_name(Fault::Kind kind);
/// The kinds a --fault value names: a comma-separated list of kind names, or "both" (kill9
/// and restart), in the order given. Throws std::invalid_argument (naming the kinds there are)
/// for an unknown or repeated name, or an empty list.
std::vector<Fault::Kind> fault_kinds(const std::string& kinds);

/// A schedule as one line: "AT:KIND[:MS[:WHERE]],..." in time order (MS: down or paused,
/// for every kind but restart; WHERE: a damage's, partition's or membership change's draw), "none"
/// for no fault. What a run prints and
/// --schedule reads.
std::string schedule_text(const std::vector<Fault>& schedule);
/// The schedule a schedule_text() line stands for. Throws std::invalid_argument (naming
/// the bad item) for a malformed item, an unknown kind, times out of order or past
/// `seconds`.
std::vector<Fault> parse_schedule(const std::string& text, double seconds);

/// A fault run's settings. kinds: as fault_kinds() reads it.
struct FaultOptions {
  std::uint64_t seed = 1;
  double seconds = 30;
  std::string kinds = "both";
  // These faults instead of the ones drawn from the seed (a replay, or a shrunk schedule).
  std::optional<std::vector<Fault>> schedule;
  int consumers = 0;  // 0: 1-3, drawn from the seed
  std::int64_t ack_timeout_ms = 1000;
  // The drain ends after this many rounds in a row, an ack timeout apart, found nothing (a
  // cluster electing leaders needs more than a single server).
  int drain_quiet_rounds = 2;
  // The subscription asks that each hand-out's attempt be saved before it is made (R34), and
  // the checker then judges delivery counts across restarts too (attempts-went-back).
  // JetStream and Redis take no such option: their consumer state always holds the counts.
  bool durable_attempts = true;
  // Where progress lines go (one every ~5 s); none if empty.
  std::function<void(const std::string&)> progress;
};

/// The faults of a run, drawn from seed alone: one every 1.5-4 s, the first after 1 s, none
/// in the last second, each of a kind drawn from the kinds (down 0-800 ms after a kill -9, a
/// power cut or damage, paused 200-2500 ms, partitioned or out of the stream's peers 1-5 s, a
/// disk failing 200-2000 ms, then healed and its server killed and started again). Throws
/// std::invalid_argument for unknown kinds.
std::vector<Fault> fault_schedule(const FaultOptions& options);

/// What a run did and what the checker found.
struct FaultReport {
  std::vector<Fault> faults;
  // How long each fault of `faults` that ran took, in ms: from its start until the server
  // served again (a pause: until it was resumed).
  std::vector<std::int64_t> took_ms;
  // What each damage, partition or membership change did, by its index in `faults`.
  std::map<std::size_t, std::string> damaged;
  std::vector<FaultEvent> history;
  std::map<std::string, std::vector<std::string>> anomalies;  // anomaly_names() -> values
  std::size_t published = 0, ok = 0, failed = 0, indeterminate = 0;
  std::size_t delivered = 0, acks_accepted = 0, call_errors = 0;
  // What the engine said when it last failed a call or refused a poll.
  std::string last_call_error;
  // Hand-outs whose count attempts-went-back judged against one made before the server was
  // last down (check_fault_history's judged_across_restarts).
  std::size_t counted_after_restart = 0;
  // The final drain: its rounds, and whether it ended quiet (false: cut off at its bound,
  // the engine still failing polls or still handing out; `lost` may then be values it
  // never served again).
  std::size_t drain_rounds = 0;
  bool drain_quiet = false;
  int consumers = 0;
};

/// Runs the workload on `target` (a fresh one: it creates topic "faults" and subscription
/// "s"; unit: 1 real ms a model ms), with `control` for the faults (throws
/// std::invalid_argument, before anything runs, if a kind of the schedule has no control). The
/// client reconnects through the target; an engine that serves no call for 30 s at a stretch, or a
/// restart that fails (after a damage: that control.repair fails too, or there is none), ends the
/// run with TargetFailure. Checks `stop` between calls (an interrupt): if it turns true the run
/// ends early, unjudged, with TargetFailure.
FaultReport run_faults(Target& target, const FaultControl& control, const FaultOptions& options,
                       const std::function<bool()>& stop);

}  // namespace conformance
