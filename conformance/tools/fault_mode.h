// `conformance --faults`: the fault workload (conformance/faults.h) against a server the
// tool starts, kills and restarts (or, with --url, a deployment the user's own commands kill
// and restart), ending with the anomaly table.
#pragma once

#include <csignal>
#include <cstdint>
#include <set>
#include <string>

/// The options of a fault run, as the command line gave them.
struct FaultArgs {
  std::string target;  // "inproc", "redis", "jetstream" or "jetstream-cluster"
  double seconds = 30;
  std::uint64_t seed = 1;
  std::string kinds = "both";  // conformance::fault_kinds()
  std::string schedule;        // --schedule: these faults (schedule_text) instead of the drawn ones
  bool shrink = false;         // --shrink: after a failing run, shrink its schedule
  int shrink_runs = 10;        // --shrink-runs: at most this many runs to shrink
  std::string appendfsync = "always";  // redis and inproc: always, everysec
  bool strict = false;                 // exit 1 when an anomaly (not in `allow`) is seen
  std::set<std::string> allow;         // --allow: anomalies --strict lets pass (the engine's own)
  std::string out = "build/conformance";
  // A deployment of the user's own (--url): no server is started; the tool runs these shell
  // commands instead of killing and restarting one (restart: required; kill: for kill9).
  std::string url;
  std::string kill_command;
  std::string restart_command;
};

/// Runs one fault run and prints its table on stdout (progress on stderr). Returns the exit
/// status: 0 the run was judged (anomalies are findings, listed in the table), 1 with
/// --strict and an anomaly not in --allow, 3 the engine failed (did not start, did not come back),
/// 130 interrupted. Throws nothing but std::bad_alloc.
int run_fault_mode(const FaultArgs& args, const volatile std::sig_atomic_t& interrupted);
