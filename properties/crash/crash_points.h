// Crash points (R19, R20): a script runs on a durable broker over the simulated disk, the
// disk dies at one write or sync, and the broker opened on what survived must be one the
// model allows. Under FsyncPolicy::always that is, observation by observation, the model
// restarted before or after the call that was running (or, inside a drain, after some of
// its offers): nothing that returned is lost, and nothing appears that was not written.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "harness/broker_runner.h"
#include "oplang/ops.h"

namespace props::crash {

/// One case: what runs, where the disk dies (or fails), which torn tails a reboot keeps.
struct CrashCase {
  /// At the point the disk dies (a power cut), or the call fails with EIO or ENOSPC and the
  /// script goes on (R33), then the broker is restarted cleanly.
  enum class Fault { kCrash, kEio, kEnospc };
  oplang::Script script;    // from an empty broker
  std::uint64_t point = 0;  // counted from the first crash point after the broker opened
  std::uint64_t seed = 0;   // SimFileSystem::crash's seed (torn tails, garbage bytes)
  bool always = true;       // publish_sync and commit_sync: always, or none
  Fault fault = Fault::kCrash;
};

/// What a case found.
struct Verdict {
  bool crashed = false;  // false: the script passed fewer points than `point`
  std::size_t op = 0;    // the op the disk died in
  std::string failure;   // empty: the recovered broker is allowed
};

/// Runs the case and judges the recovered broker. An error case (R33, `always` only): the
/// call that meets the error throws IoError (or returns what the model says, if it did not
/// wait for the failed write), every call after it throws IoError, and after a clean restart
/// the probe (every topic, log, subscription and dead letter) finds a state the failed call
/// may have left (harness::ModelStates). Never throws for a broker fault: a
/// failure is described in Verdict::failure (with the replay text, see replay_text).
Verdict run_case(const CrashCase& c);

/// How many crash points the script passes on a broker that does not crash.
std::uint64_t count_points(const oplang::Script& script, bool always);
/// How many of those points are stores through a mapping (which cannot fail).
std::uint64_t count_store_points(const oplang::Script& script, bool always);
/// For each op, the number of crash points passed by the end of it.
std::vector<std::uint64_t> points_per_op(const oplang::Script& script, bool always);

/// The case as a replayable file: a `# crash point=N seed=S policy=always|none` line (for
/// an error case `# error point=N error=eio|enospc policy=always`), then the script. parse_case
/// reads it back (nullopt and a message on a malformed file).
std::string replay_text(const CrashCase& c);
std::optional<CrashCase> parse_case(const std::string& text, std::string& error);

/// The command line that replays a case written to `file`.
std::string replay_command(const std::string& file);

}  // namespace props::crash
