// conformance: the model-based suite against an engine (SPEC "Conformance").
//   conformance --target inproc|jetstream|redis [--url nats://HOST:PORT|redis://HOST:PORT]
//               [--seconds N] [--seed S] [--unit MS] [--parallel N] [--profile NAME]
//               [--report FILE] [--out DIR] [--first]
//   conformance --target T --replay FILE.script|FILE.program
//   conformance --target exec [--profile NAME] [options] -- CMD ARGS...
//     (any program speaking the target protocol, conformance/target_protocol.h)
//   conformance --target inproc|redis|jetstream|jetstream-cluster --faults [--seconds N]
//               [--seed S] [--fault KIND,...] [--appendfsync always|everysec]
//               [--strict [--allow NAME,...]]
//     (inproc --faults: the durable broker served by broker_server, killed and restarted;
//     --appendfsync everysec is its FsyncPolicy::every(1 s), always its default)
//     the fault workload (fault_mode.h): exit 0 with the anomaly table whatever it shows
//     (an anomaly is a finding about the engine), 1 with --strict and an anomaly not in
//     --allow, 3 the engine failed, 130 interrupted.
// Generates scripts of the common subset, runs each on a fresh target next to the model
// under the target's profile, and ends with a table: each rule, and whether it holds,
// diverges as the profile says, or is violated (with the shrunk script and the command
// that replays it). Every Nth script (--parallel, default 3; 0: none) is a parallel program
// instead: concurrent workers on the engine, the history judged by the linearizability
// checker (conformance/parallel.h), the table's row L, and by the queue checkers, row H. A
// disagreement is printed as it happened, and reported as a violation only once a re-run
// failed again. Flags, defaults and exit codes: kHelp below (--help).
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <variant>
#include <vector>

#include "conformance/exec_target.h"
#include "conformance/fault_history.h"
#include "conformance/faults.h"
#include "conformance/generator.h"
#include "conformance/inproc_target.h"
#include "conformance/jetstream_target.h"
#include "conformance/leftovers.h"
#include "conformance/nats_server.h"
#include "conformance/parallel.h"
#include "conformance/profile.h"
#include "conformance/rabbitmq_server.h"
#ifdef CONFORMANCE_HAS_REDIS
#include "conformance/redis_server.h"
#include "conformance/redis_target.h"
#endif
#include "conformance/runner.h"
#include "conformance/timeline.h"
#include "conformance/unserved.h"
#include "fault_mode.h"
#include "oplang/text.h"

namespace {

using conformance::Profile;

// Set by the first SIGINT or SIGTERM: no new target is made after it, so the run stops at
// the script (or shrink candidate) in progress, and main returns, which stops the servers
// it started and removes their directories. A second signal kills at once.
volatile std::sig_atomic_t g_interrupted = 0;
extern "C" void on_interrupt(int) { g_interrupted = 1; }
/// Thrown by the target factory once interrupted.
struct Interrupted {};

void catch_interrupts() {
  struct sigaction sa {};
  sa.sa_handler = on_interrupt;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESETHAND;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}

int interrupted() {
  std::cerr << "conformance: interrupted; stopping the servers it started\n";
  return 130;
}

struct Args {
  std::string target = "inproc";
  std::string url;
  double seconds = 20;
  std::uint64_t seed = 1;
  long unit_ms = 20;
  long parallel = 3;  // every Nth seed runs a parallel program (0: none)
  std::string report;
  std::string out = "build/conformance";
  std::string replay;
  std::string profile;  // "": the target's own
  bool first = false;   // stop after the first violation (and its shrink)
  bool faults = false;  // the fault workload instead of the model-based suite
  bool strict = false;  // --faults: exit 1 on any anomaly
  std::string fault_kinds = "both";
  std::string schedule;  // --faults: an explicit schedule (schedule_text)
  bool shrink = false;   // --faults: shrink a failing run's schedule
  int shrink_runs = 10;
  std::string appendfsync = "always";
  std::set<std::string> allow;  // --faults --strict: anomalies that do not fail the run
  std::string kill_command;     // --faults --url: how the user's deployment is killed
  std::string restart_command;  // --faults --url: how it is restarted
  bool seconds_given = false;
  std::vector<std::string> command;  // --target exec: the program and its arguments
  long reply_ms = 10000;             // --target exec: the time limit of a reply
};

// Every flag, its default, and every exit code (--help prints it to stdout).
const char* const kHelp =
    "usage: conformance --target inproc|jetstream|redis [options]      the model-based suite\n"
    "       conformance --target T [--url URL] --replay FILE.script|FILE.program\n"
    "       conformance --target exec [--profile NAME] [options] -- CMD ARGS...\n"
    "       conformance --target inproc|redis|redis-sentinel|jetstream|jetstream-cluster --faults\n"
    "                   [options]\n"
    "       conformance --target jetstream|redis --url URL --faults --restart-command C\n"
    "                   [--kill-command C] [options]\n"
    "\n"
    "The suite generates scripts of the common subset, runs each on a fresh target next to\n"
    "the model under the engine's profile, and ends with a row for every SPEC rule.\n"
    "\n"
    "  --target NAME      inproc (this broker, default), jetstream (nats-server), redis\n"
    "                     (redis-server), rabbitmq (rabbitmq-server's quorum queues through\n"
    "                     the Python adapter conformance/adapters/rabbitmq), exec (a\n"
    "                     program after --); with --faults also\n"
    "                     jetstream-cluster (three nats-server nodes) and redis-sentinel (a\n"
    "                     primary, two replicas, three redis-sentinel)\n"
    "  -- CMD ARGS...     --target exec: the program to run as the target, one child per\n"
    "                     script; it speaks the target protocol on stdin and stdout\n"
    "                     (docs/target-protocol.md); its stderr is quoted on failure\n"
    "  --reply-ms MS      --target exec: a reply later than this (plus an advance's real\n"
    "                     time) is the engine's failure (default 10000)\n"
    "  --url URL          an engine already running (nats://HOST:PORT, redis://HOST:PORT,\n"
    "                     amqp://USER:PASSWORD@HOST:PORT/VHOST):\n"
    "                     none is started; streams or keys of earlier runs of this tool that\n"
    "                     were killed (prefix aloc<pid>_, pid no longer running) are removed\n"
    "                     first; with --faults, the commands below kill and restart it.\n"
    "                     Default: the tool starts its own server on a free port\n"
    "  --seconds N        how long to generate (default 20; --faults: 60)\n"
    "  --seed S           the first seed (default 1); seed S, S+1, ... one script each\n"
    "  --unit MS          real ms per model ms on a real engine (default 20)\n"
    "  --parallel N       every Nth seed is a parallel program, rows L and H (default 3; 0:\n"
    "                     none)\n"
    "  --profile NAME     judge under another profile: strict, jetstream, redis, rabbitmq\n"
    "                     (default: the target's own; exec: strict)\n"
    "  --report FILE      also write the table to FILE (default: none)\n"
    "  --out DIR          shrunk scripts, programs and timelines (default build/conformance)\n"
    "  --first            stop after the first violation and its shrink\n"
    "  --replay FILE      run one script (.script) or parallel program (.program), step by step\n"
    "  --faults           the fault workload: the tool kills and restarts the server under a\n"
    "                     stream of publishes and polls, and judges the history\n"
    "  --fault KINDS      --faults: a comma-separated list of kill9, restart, pause (SIGSTOP,\n"
    "                     then SIGCONT), lose-unsynced (a power cut: kill -9, then the\n"
    "                     writes not yet fsynced are dropped; needs /dev/fuse and root),\n"
    "                     damage (kill -9, then a bit flipped or a file cut in its data),\n"
    "                     partition (jetstream-cluster, redis-sentinel: nodes in network\n"
    "                     namespaces, links cut for 1-5 s; needs root), membership\n"
    "                     (jetstream-cluster: a node removed from the stream's peers for\n"
    "                     1-5 s, then added back) and disk-error (every write and fsync\n"
    "                     of its data fails with EIO or ENOSPC, or only every fsync with\n"
    "                     EIO, for 0.2-2 s, then the disk\n"
    "                     heals and the server is killed and started again; not on\n"
    "                     redis-sentinel or --url; needs /dev/fuse and root), or both\n"
    "                     (kill9,restart; the default)\n"
    "  --schedule S       --faults: run these faults instead of drawing them:\n"
    "                     AT:KIND[:MS[:WHERE]] items, comma-separated (as a run prints\n"
    "                     it), or none\n"
    "  --shrink           --faults: after an anomaly not in --allow, run again with faults\n"
    "                     dropped and shortened while one of the anomalies stays; prints\n"
    "                     the smallest schedule and its replay line\n"
    "  --shrink-runs N    --shrink: at most N more runs (default 10)\n"
    "  --appendfsync P    --faults on redis and inproc: always (default) or everysec\n"
    "  --strict           --faults: exit 1 on any anomaly not in --allow\n"
    "  --allow A,B        --faults --strict: anomalies that do not fail the run\n"
    "  --kill-command C   --faults --url: a shell command that kills the deployment (a\n"
    "                     kill -9 fault; needed unless --fault restart)\n"
    "  --restart-command C  --faults --url: a shell command that (re)starts it; the tool\n"
    "                     then waits up to 30 s until it serves (required with --url)\n"
    "  --help, -h         this text\n"
    "\n"
    "Exit codes:\n"
    "  0    every rule holds, or diverges only as the profile says (--faults: the anomaly\n"
    "       table, whatever it shows, unless --strict)\n"
    "  1    a violation that failed again when re-run (--faults --strict: an anomaly)\n"
    "  2    bad usage\n"
    "  3    the engine failed (it died, or did not start): never reported as a violation\n"
    "  4    no violation, but a disagreement that did not fail again on any re-run: not\n"
    "       judged; its script is kept as DIR/TARGET-SEED.unreproduced.script\n"
    "  130  interrupted (SIGINT, SIGTERM): the servers the tool started are stopped\n";

// a, as one word of a POSIX shell command line.
std::string shell_quoted(const std::string& a) {
  const bool plain = !a.empty() && std::all_of(a.begin(), a.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) ||
           std::string("-_./=:,+@%").find(c) != std::string::npos;
  });
  if (plain) return a;
  std::string out = "'";
  for (char c : a) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

int usage(const std::string& why) {
  std::cerr << "conformance: " << why << "\n" << kHelp;
  return 2;
}

std::optional<Args> parse(int argc, char** argv, std::string& error) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag == "--") {
      a.command.assign(argv + i + 1, argv + argc);
      break;
    }
    if (flag == "--help" || flag == "-h") {
      error = "help";
      return std::nullopt;
    }
    if (flag == "--first") {
      a.first = true;
      continue;
    }
    if (flag == "--faults" || flag == "--strict" || flag == "--shrink") {
      (flag == "--faults" ? a.faults : flag == "--strict" ? a.strict : a.shrink) = true;
      continue;
    }
    if (i + 1 >= argc) {
      error = flag + " needs a value";
      return std::nullopt;
    }
    const std::string value = argv[++i];
    try {
      if (flag == "--target") {
        a.target = value;
      } else if (flag == "--url") {
        a.url = value;
      } else if (flag == "--seconds") {
        a.seconds = std::stod(value);
        a.seconds_given = true;
      } else if (flag == "--allow") {
        for (std::size_t from = 0; from <= value.size();) {
          const std::size_t comma = std::min(value.find(',', from), value.size());
          a.allow.insert(value.substr(from, comma - from));
          from = comma + 1;
        }
      } else if (flag == "--fault") {
        a.fault_kinds = value;
      } else if (flag == "--schedule") {
        a.schedule = value;
      } else if (flag == "--shrink-runs") {
        a.shrink_runs = std::stoi(value);
      } else if (flag == "--appendfsync") {
        a.appendfsync = value;
      } else if (flag == "--kill-command") {
        a.kill_command = value;
      } else if (flag == "--restart-command") {
        a.restart_command = value;
      } else if (flag == "--seed") {
        a.seed = std::stoull(value);
      } else if (flag == "--unit") {
        a.unit_ms = std::stol(value);
      } else if (flag == "--parallel") {
        a.parallel = std::stol(value);
      } else if (flag == "--report") {
        a.report = value;
      } else if (flag == "--out") {
        a.out = value;
      } else if (flag == "--replay") {
        a.replay = value;
      } else if (flag == "--profile") {
        a.profile = value;
      } else if (flag == "--reply-ms") {
        a.reply_ms = std::stol(value);
      } else {
        error = "unknown option " + flag;
        return std::nullopt;
      }
    } catch (const std::exception&) {
      error = "bad value for " + flag + ": " + value;
      return std::nullopt;
    }
  }
  if (a.target == "exec") {
    if (a.command.empty()) {
      error = "--target exec needs the program after --: --target exec -- CMD ARGS...";
      return std::nullopt;
    }
    if (a.faults || !a.url.empty()) {
      error =
          "--target exec runs the model-based suite (no --faults, no --url: the program "
          "reaches its engine itself)";
      return std::nullopt;
    }
  } else if (a.target == "rabbitmq") {
    if (a.faults) {
      error = "--target rabbitmq runs the model-based suite (no --faults yet)";
      return std::nullopt;
    }
    if (!a.url.empty() && !a.url.starts_with("amqp://")) {
      error = "--url for rabbitmq is amqp://USER:PASSWORD@HOST:PORT/VHOST, not " + a.url;
      return std::nullopt;
    }
  }
  if (a.reply_ms <= 0) {
    error = "--reply-ms must be positive";
    return std::nullopt;
  }
  if (a.target != "exec" && !a.command.empty()) {
    error = "a program after -- goes with --target exec";
    return std::nullopt;
  }
#ifdef CONFORMANCE_HAS_REDIS
  if (a.target != "inproc" && a.target != "jetstream" && a.target != "redis" &&
      a.target != "exec" && a.target != "rabbitmq" &&
      !(a.faults && (a.target == "jetstream-cluster" || a.target == "redis-sentinel"))) {
    error = "unknown target '" + a.target +
            "' (inproc, jetstream, redis, rabbitmq, exec; with --faults also "
            "jetstream-cluster and redis-sentinel)";
    return std::nullopt;
  }
#else
  if (a.target == "redis") {
    error = "this build has no redis target (apt-get install -y libhiredis-dev, reconfigure)";
    return std::nullopt;
  }
  if (a.target != "inproc" && a.target != "jetstream" && a.target != "exec" &&
      a.target != "rabbitmq" && !(a.faults && a.target == "jetstream-cluster")) {
    error = "unknown target '" + a.target +
            "' (inproc, jetstream, rabbitmq, exec; with --faults also "
            "jetstream-cluster)";
    return std::nullopt;
  }
#endif
  if ((!a.kill_command.empty() || !a.restart_command.empty()) && (!a.faults || a.url.empty())) {
    error = "--kill-command and --restart-command go with --faults --url";
    return std::nullopt;
  }
  if (a.target == "redis" && !a.url.empty() && !a.url.starts_with("redis://") &&
      !a.url.starts_with("redis-sentinel://")) {
    error =
        "--url for redis is redis://HOST:PORT or redis-sentinel://HOST:PORT,.../NAME, not " + a.url;
    return std::nullopt;
  }
  if (a.faults) {
    if (a.target != "inproc" && a.target != "redis" && a.target != "jetstream" &&
        a.target != "jetstream-cluster" && a.target != "redis-sentinel") {
      error =
          "--faults runs on inproc, redis, redis-sentinel, jetstream or jetstream-cluster (the "
          "tool starts, kills and restarts them)";
      return std::nullopt;
    }
    if (!a.replay.empty()) {
      error = "--faults runs a workload: no --replay";
      return std::nullopt;
    }
    if (a.shrink_runs < 1) {
      error = "--shrink-runs is at least 1";
      return std::nullopt;
    }
    if (!a.schedule.empty()) {
      try {
        (void)conformance::parse_schedule(a.schedule, a.seconds_given ? a.seconds : 60);
      } catch (const std::invalid_argument& e) {
        error = std::string("--schedule: ") + e.what();
        return std::nullopt;
      }
    }
    if (!a.url.empty()) {
      if (a.target != "jetstream" && a.target != "redis") {
        error = "--faults --url runs on jetstream or redis";
        return std::nullopt;
      }
      if (a.restart_command.empty()) {
        error = "--faults --url needs --restart-command (how to restart the deployment)";
        return std::nullopt;
      }
      if (a.kill_command.empty() && a.fault_kinds != "restart") {
        error = "--faults --url with kill -9 faults needs --kill-command (or --fault restart)";
        return std::nullopt;
      }
    }
    try {
      const std::vector<conformance::Fault::Kind> kinds = conformance::fault_kinds(a.fault_kinds);
      const bool process_only =
          std::all_of(kinds.begin(), kinds.end(), [](conformance::Fault::Kind k) {
            return k == conformance::Fault::Kind::kKill9 || k == conformance::Fault::Kind::kRestart;
          });
      if (!a.url.empty() && !process_only) {
        error =
            "--faults --url offers kill9 and restart only (the tool does not run the "
            "deployment's processes or file system)";
        return std::nullopt;
      }
    } catch (const std::invalid_argument& e) {
      error = std::string("--fault: ") + e.what();
      return std::nullopt;
    }
    if (a.appendfsync != "always" && a.appendfsync != "everysec") {
      error = "--appendfsync is always or everysec";
      return std::nullopt;
    }
    for (const std::string& name : a.allow) {
      if (std::find(conformance::anomaly_names().begin(), conformance::anomaly_names().end(),
                    name) == conformance::anomaly_names().end()) {
        error =
            "--allow names anomalies (lost, lost-unacked, unexpected, duplicated, acked-came-back, "
            "floor-came-back, nonmonotonic, poll-skip), not " +
            name;
        return std::nullopt;
      }
    }
  }
  if (!a.profile.empty()) {
    try {
      (void)conformance::profile_named(a.profile);
    } catch (const std::invalid_argument& e) {
      error = e.what();
      return std::nullopt;
    }
  }
  if (a.seconds <= 0 || a.unit_ms <= 0 || a.parallel < 0) {
    error = "--seconds and --unit must be positive, --parallel not negative";
    return std::nullopt;
  }
  return a;
}

/// One rule's line in the table.
struct Row {
  std::size_t checked = 0;
  std::map<std::string, std::size_t> diverged;  // switch name -> scripts that needed it
  std::size_t violated = 0;
  std::string example;                           // the first violation's replay command
  std::size_t not_reproduced = 0;                // disagreements no re-run showed again
  std::string unreproduced;                      // the first of them, as a file
  std::map<std::string, std::size_t> anomalies;  // row H: anomaly name -> programs showing it
};

/// The target protocol's feature (target_protocol.h) a rule's scripts need, "" if none.
std::string exec_feature(const std::string& rule) {
  static const std::map<std::string, std::string> features = {
      {"R3", "retention_by_messages"}, {"R12", "seek"}, {"R22", "max_in_flight"},
      {"R24", "nack_delay"},           {"R27", "lag"},  {"R28", "seek_to_time"}};
  const auto it = features.find(rule);
  return it == features.end() ? "" : it->second;
}

/// Rule names sort by number ("R2" before "R11").
struct ByNumber {
  bool operator()(const std::string& a, const std::string& b) const {
    return std::stoi(a.substr(1)) < std::stoi(b.substr(1));
  }
};

const std::map<std::string, std::string, ByNumber> kRuleNames = {
    {"R1", "topics: create, delete"},
    {"R2", "publish: absolute offsets"},
    {"R3", "retention: the newest N kept, the rest skipped"},
    {"R4", "start of a subscription"},
    {"R5", "next message: order, header filter"},
    {"R6", "offers: attempt counts"},
    {"R7", "failure: max deliveries, dead letters"},
    {"R8", "synchronous drain (push)"},
    {"R9", "unsubscribe"},
    {"R11", "pull: poll, ack, nack, extend, deadlines, expiry"},
    {"R12", "seek"},
    {"R14", "errors: bad input changes nothing"},
    {"R22", "flow control: max_in_flight"},
    {"R23", "terminate: term dead-letters at once"},
    {"R24", "retry later: nack delay"},
    {"R27", "lag"},
    {"R28", "seek by time"},
};

}  // namespace

int main(int argc, char** argv) {
  std::string error;
  const std::optional<Args> parsed = parse(argc, argv, error);
  if (!parsed && error == "help") {
    std::cout << kHelp;
    return 0;
  }
  if (!parsed) return usage(error);
  const Args& args = *parsed;
  catch_interrupts();
  if (args.faults) {
    FaultArgs fa;
    fa.target = args.target;
    fa.seconds = args.seconds_given ? args.seconds : 60;
    fa.seed = args.seed;
    fa.kinds = args.fault_kinds;
    fa.schedule = args.schedule;
    fa.shrink = args.shrink;
    fa.shrink_runs = args.shrink_runs;
    fa.appendfsync = args.appendfsync;
    fa.strict = args.strict;
    fa.allow = args.allow;
    fa.out = args.out;
    fa.url = args.url;
    fa.kill_command = args.kill_command;
    fa.restart_command = args.restart_command;
    return run_fault_mode(fa, g_interrupted);
  }
  // --profile judges the engine under another profile (strict: what each switch covers).
  // An exec target is judged strictly unless told otherwise: the kit knows nothing of it.
  const Profile profile = conformance::profile_named(!args.profile.empty()   ? args.profile
                                                     : args.target == "exec" ? "strict"
                                                                             : args.target);
  // rabbitmq is its Python adapter run as an exec target, on a rabbitmq-server the tool
  // starts (or --url).
  std::vector<std::string> command = args.command;
  std::unique_ptr<conformance::RabbitMqServer> rabbitmq;
  if (args.target == "rabbitmq") {
    std::string amqp = args.url;
    if (amqp.empty()) {
      try {
        rabbitmq = std::make_unique<conformance::RabbitMqServer>();
      } catch (const conformance::TargetFailure& e) {
        std::cerr << "conformance: the engine did not start: " << e.what() << "\n";
        return 3;
      }
      amqp = rabbitmq->url();
      std::cerr << "conformance: rabbitmq-server started at " << amqp << "\n";
    }
    command = conformance::rabbitmq_adapter_command(amqp);
  }
  // An exec target says in its hello what it serves and whose clock it keeps.
  std::optional<conformance::Hello> hello;
  if (!command.empty()) {
    try {
      hello = conformance::ExecTarget(command, std::chrono::milliseconds(args.reply_ms)).hello();
    } catch (const conformance::TargetFailure& e) {
      std::cerr << "conformance: the engine did not start: " << e.what() << "\n";
      return 3;
    }
    std::cerr << "conformance: exec target '" << hello->name << "' (protocol " << hello->version
              << ", "
              << (hello->unit_ms == 0 ? "the model's clock"
                                      : std::to_string(hello->unit_ms) + " real ms per model ms")
              << ")\n";
  }
  // What stems, titles and replay files call the engine.
  const std::string label = args.target == "exec" ? "exec-" + hello->name : args.target;
  conformance::GenOptions gen;
  // The margin: every call stays at least this far from every ack deadline. On JetStream a
  // model millisecond is `unit` real ones; 5 units (100 ms at the default 20) is far more
  // than a call's round trip on loopback (about 1 ms) plus the server's expiry timer
  // granularity, so timing noise cannot turn into a false alarm.
  // On the model's own clock (inproc) there is no noise: no margin, so calls land on
  // deadlines too.
  gen.margin = args.target == "inproc" || (hello && hello->unit_ms == 0) ? 0 : 5;
  // Topics that keep their newest 2, 3 or 5 messages, where the engine serves them (asked
  // of a target once it exists, below): a few publishes trim under every subscription.
  const std::vector<std::size_t> bounds = {2, 3, 5};

  conformance::ParallelOptions popts;
  popts.margin = gen.margin;

  std::unique_ptr<conformance::NatsServer> server;
#ifdef CONFORMANCE_HAS_REDIS
  std::unique_ptr<conformance::RedisServer> redis_server;
#endif
  std::string url = args.url;
  std::uint64_t prefix_counter = 0;
  const std::string prefix_base = conformance::run_prefix(::getpid());
  try {
    // An engine the user runs: first what killed runs of this tool left on it.
    if (!url.empty() && args.target == "jetstream") {
      for (const std::string& name : conformance::remove_jetstream_leftovers(url)) {
        std::cerr << "conformance: removed stream " << name << ", left by a killed run\n";
      }
    }
#ifdef CONFORMANCE_HAS_REDIS
    if (!url.empty() && args.target == "redis") {
      for (const std::string& key : conformance::remove_redis_leftovers(url)) {
        std::cerr << "conformance: removed key " << key << ", left by a killed run\n";
      }
    }
#endif
    if (args.target == "jetstream" && url.empty()) {
      server = std::make_unique<conformance::NatsServer>();
      url = server->url();
      std::cerr << "conformance: nats-server started at " << url << "\n";
    }
#ifdef CONFORMANCE_HAS_REDIS
    if (args.target == "redis" && url.empty()) {
      redis_server = std::make_unique<conformance::RedisServer>();
      url = redis_server->url();
      std::cerr << "conformance: redis-server started at " << url << "\n";
    }
#endif
  } catch (const conformance::TargetFailure& e) {
    std::cerr << "conformance: the engine did not start: " << e.what() << "\n";
    return 3;
  }
  const conformance::TargetFactory factory = [&]() -> std::unique_ptr<conformance::Target> {
    if (g_interrupted) throw Interrupted{};
    if (args.target == "inproc") return std::make_unique<conformance::InProcTarget>();
    if (!command.empty()) {
      return std::make_unique<conformance::ExecTarget>(command,
                                                       std::chrono::milliseconds(args.reply_ms));
    }
#ifdef CONFORMANCE_HAS_REDIS
    if (args.target == "redis") {
      return std::make_unique<conformance::RedisTarget>(
          url, prefix_base + "_" + std::to_string(++prefix_counter), args.unit_ms);
    }
#endif
    return std::make_unique<conformance::JetStreamTarget>(
        url, prefix_base + "_" + std::to_string(++prefix_counter), args.unit_ms);
  };
  auto engine_failed = [&](const std::exception& e) {
    std::cerr << "conformance: the engine failed (not a contract violation): " << e.what() << "\n";
    if (server) {
      std::cerr << (server->alive() ? "server still running" : "the server died") << "; its log:\n"
                << server->log_tail(20) << "\n";
    }
#ifdef CONFORMANCE_HAS_REDIS
    if (redis_server) {
      std::cerr << (redis_server->alive() ? "server still running" : "the server died")
                << "; its log:\n"
                << redis_server->log_tail(20) << "\n";
    }
#endif
    return 3;
  };

  if (!args.replay.empty()) {
    std::ifstream in(args.replay);
    if (!in) return usage("cannot read " + args.replay);
    std::stringstream text;
    text << in.rdbuf();
    // A .program is a parallel run (rows L and H), anything else a script.
    const bool parallel = args.replay.ends_with(".program");
    std::variant<oplang::Program, oplang::Script> parsed;
    try {
      if (parallel) {
        parsed = oplang::parse_program(text.str());
      } else {
        parsed = oplang::parse(text.str());
      }
    } catch (const std::exception& e) {
      return usage(args.replay + ": " + e.what());
    }
    try {
      std::unique_ptr<conformance::Target> t = factory();
      if (parallel) {
        const conformance::ParallelVerdict v =
            conformance::check_parallel(*t, std::get<oplang::Program>(parsed), profile, popts);
        std::cout << v.report;
        if (v.void_run) std::cout << "void: the workers took too long to judge the run\n";
        std::cout << (!v.failed()      ? "holds"
                      : v.linearizable ? "violated: H"
                                       : "violated: L")
                  << "\n";
        return v.failed() ? 1 : 0;
      }
      const oplang::Script& script = std::get<oplang::Script>(parsed);
      std::cout << conformance::trace(*t, script, profile);
      std::unique_ptr<conformance::Target> again = factory();
      const conformance::Verdict v = conformance::check(*again, script, profile, gen.margin / 2);
      std::cout << (v.violation ? "violated: " + v.violation->rule : std::string("holds")) << "\n";
      return v.violation ? 1 : 0;
    } catch (const conformance::TargetFailure& e) {
      return engine_failed(e);
    } catch (const Interrupted&) {
      return interrupted();
    } catch (const std::invalid_argument& e) {
      return usage(args.replay + ": " + e.what());
    }
  }

  // What the table and the report print to replay a shrunk failure (under the same profile).
  // An exec target's program follows the file, after --.
  std::string program_tail;
  for (const std::string& a : args.command) program_tail += " " + shell_quoted(a);
  if (!program_tail.empty()) program_tail = " --" + program_tail;
  if (args.target == "rabbitmq" && !args.url.empty())
    program_tail = " --url " + shell_quoted(args.url);
  auto replay_line = [&](const std::string& file) {
    return "scripts/conformance " + args.target +
           (args.profile.empty() ? std::string() : " --profile " + args.profile) + " --replay " +
           file + program_tail;
  };
  std::map<std::string, Row, ByNumber> rows;
  for (const auto& [rule, name] : kRuleNames) rows[rule];
  std::size_t scripts = 0;
  std::size_t void_runs = 0;  // the engine fell behind the model's clock: not judged
  std::size_t steps = 0;
  const auto start = std::chrono::steady_clock::now();
  double next_progress = 5;  // seconds: a progress line every 5 s
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  std::filesystem::create_directories(args.out);
  int status = 0;
  // Row L: parallel programs; row H: the queue checkers on the same histories. Returns true
  // to stop (--first after a violation).
  Row parallel_row, queue_row;
  std::size_t parallel_runs = 0;
  auto run_parallel = [&](std::uint64_t seed) {
    const oplang::Program program = conformance::generate_parallel(seed, popts);
    std::unique_ptr<conformance::Target> t = factory();
    const conformance::ParallelVerdict v = conformance::check_parallel(*t, program, profile, popts);
    t.reset();
    if (v.void_run) {
      ++void_runs;
      return false;
    }
    ++parallel_runs;
    parallel_row.checked += v.calls;
    queue_row.checked += v.calls;
    for (conformance::Switch s : v.needed) ++parallel_row.diverged[conformance::name_of(s)];
    if (!v.failed()) return false;
    // Which row: L when it does not linearize, else H (anomalies by name).
    Row& row = v.linearizable ? queue_row : parallel_row;
    const char* which = v.linearizable ? "H" : "L";
    std::cout << "\nDisagreement (parallel seed " << seed << ", row " << which << "):\n"
              << v.report;
    // A run of the program on a fresh target that fails again (up to `times`).
    auto confirm_program = [&](const oplang::Program& p,
                               int times) -> std::optional<conformance::ParallelVerdict> {
      for (int k = 0; k < times; ++k) {
        std::unique_ptr<conformance::Target> again = factory();
        conformance::ParallelVerdict r = conformance::check_parallel(*again, p, profile, popts);
        if (r.failed()) return r;
      }
      return std::nullopt;
    };
    auto count = [&](const conformance::ParallelVerdict& shown) {
      std::istringstream lines(shown.anomalies);
      std::set<std::string> names;
      for (std::string line; std::getline(lines, line);) {
        names.insert(line.substr(0, line.find(':')));
      }
      for (const std::string& name : names) ++queue_row.anomalies[name];
      if (!shown.anomalies.empty()) ++queue_row.violated;
      if (!shown.linearizable) ++parallel_row.violated;
      status = 1;
    };
    if (!row.example.empty()) {
      if (std::optional<conformance::ParallelVerdict> again = confirm_program(program, 2)) {
        count(*again);
        std::cout << "reproduced (parallel seed " << seed << ")\n";
      } else {
        ++row.not_reproduced;
        std::cout << "not reproduced (parallel seed " << seed << "): 2 re-runs held\n";
      }
      return false;
    }
    std::cerr << "conformance: parallel seed " << seed
              << (v.linearizable ? " shows queue anomalies" : " is not linearizable")
              << "; shrinking\n";
    oplang::Program small = conformance::shrink_parallel(factory, program, profile, popts,
                                                         args.target == "inproc" ? 1 : 2, 40);
    std::optional<conformance::ParallelVerdict> shown = confirm_program(small, 3);
    if (!shown) {
      small = program;
      shown = confirm_program(small, 3);
    }
    const std::string stem = args.out + "/" + label + "-parallel-" + std::to_string(seed);
    const std::string header = "# conformance --target " + label + " (profile " + profile.name +
                               "), parallel seed " + std::to_string(seed) + "\n";
    if (!shown) {
      ++row.not_reproduced;
      if (row.unreproduced.empty()) row.unreproduced = stem + ".unreproduced.program";
      std::ofstream(stem + ".unreproduced.program") << header << oplang::print(program);
      std::cout << "Not reproduced (parallel seed " << seed << "): the shrunk program and the "
                << "original held on 3 re-runs each; not a violation. The original: " << stem
                << ".unreproduced.program\n";
      return false;
    }
    count(*shown);
    std::ofstream(stem + ".program") << header << oplang::print(small);
    std::size_t ops = small.setup.size();
    for (const oplang::Fiber& f : small.fibers) ops += f.ops.size();
    std::cout << "\nViolation of " << which << " (parallel seed " << seed << "), shrunk to " << ops
              << " steps (" << small.fibers.size() << " workers), as it failed again:\n"
              << oplang::print(small) << shown->report
              << "replay: " << replay_line(stem + ".program") << "\n";
    row.example = replay_line(stem + ".program");
    std::ofstream(stem + ".html") << conformance::timeline_html(
        "Parallel workers on " + label +
            (shown->linearizable ? " show queue anomalies" : " not linearizable") + " (seed " +
            std::to_string(seed) + ")",
        shown->timeline,
        "Rows are workers; ticks are a logical clock; red: the calls no order could place.");
    std::cout << "timeline: " << stem << ".html\n";
    return args.first;
  };
  try {
    const std::unique_ptr<conformance::Target> asked = factory();
    if (asked->serves(oplang::CreateTopic{"t", bounds.front(), 0})) {
      gen.retention_messages = bounds;
    }
    oplang::SubscribePull capped;
    capped.topic = "t";
    capped.name = "p";
    capped.ack_timeout = gen.ack_timeouts.front();
    capped.max_in_flight = 2;
    if (asked->serves(capped)) gen.max_in_flight = {1, 2, 3};
    gen.seek = asked->serves(oplang::Seek{"t", "p", 0});
    gen.seek_to_time = asked->serves(oplang::SeekToTime{"t", "p", 0});
    gen.nack_delays =
        asked->serves(oplang::Nack{"t", "p", 0, "w1", oplang::Which::kOffset, model::Millis{8}});
    gen.lag = asked->serves(oplang::GetLag{"t", "p"});
    gen.push = asked->serves(oplang::Drain{});
    gen.lag_filtered = !asked->filter_is_the_adapters();
    for (std::uint64_t seed = args.seed; elapsed() < args.seconds && !g_interrupted; ++seed) {
      if (args.parallel > 0 && (seed - args.seed) % static_cast<std::uint64_t>(args.parallel) ==
                                   static_cast<std::uint64_t>(args.parallel) - 1) {
        if (run_parallel(seed)) break;
        continue;
      }
      const oplang::Script script = conformance::generate(seed, gen, profile);
      std::unique_ptr<conformance::Target> t = factory();
      const conformance::Verdict v = conformance::check(*t, script, profile, gen.margin / 2);
      t.reset();
      if (v.void_run) {
        ++void_runs;
        continue;
      }
      ++scripts;
      for (const auto& [rule, n] : v.checked) {
        rows[rule].checked += n;
        steps += n;
      }
      for (conformance::Switch s : v.needed) {
        ++rows[conformance::rule_of(s)].diverged[conformance::name_of(s)];
      }
      if (elapsed() >= next_progress) {
        next_progress += 5;
        std::cerr << "conformance: " << scripts << " scripts, " << steps << " steps, "
                  << static_cast<int>(elapsed()) << " s\n";
      }
      if (!v.violation) continue;
      // The disagreement as it happened, before anything is re-run.
      std::cout << "\nDisagreement (seed " << seed << ") at "
                << conformance::disagreement_text(label, script, *v.violation);
      Row& row = rows[v.violation->rule];
      if (!row.example.empty()) {
        // This rule has its shrunk example: this script is only confirmed, by a re-run.
        if (conformance::fails_again(factory, script, profile, gen.margin / 2, 2)) {
          ++row.violated;
          status = 1;
          std::cout << "reproduced (seed " << seed << ")\n";
        } else {
          ++row.not_reproduced;
          std::cout << "not reproduced (seed " << seed << "): 2 re-runs held\n";
        }
        continue;
      }
      std::cerr << "conformance: seed " << seed << " violates " << v.violation->rule
                << "; shrinking\n";
      // Reported only once it fails again: the shrunk script, else the original.
      const conformance::Finding found = conformance::reproduce(
          factory, script, profile, gen.margin, args.target == "inproc" ? 1 : 2, 80, 3);
      const oplang::Script& small = found.script;
      const std::string stem = args.out + "/" + label + "-" + std::to_string(seed);
      if (!found.reproduced) {
        ++row.not_reproduced;
        if (row.unreproduced.empty()) row.unreproduced = stem + ".unreproduced.script";
        std::ofstream(stem + ".unreproduced.script")
            << conformance::replay_text(label, profile, seed, script);
        std::cout << "Not reproduced (seed " << seed << "): the shrunk script and the original "
                  << "held on 3 re-runs each; not a violation. The original: " << stem
                  << ".unreproduced.script\n";
        continue;
      }
      ++row.violated;
      status = 1;
      const std::string file = stem + ".script";
      std::ofstream(file) << conformance::replay_text(label, profile, seed, small);
      std::cout << "\nViolation of " << found.shown.verdict.violation->rule << " (seed " << seed
                << "), shrunk to " << small.size() << " steps, as it failed again:\n"
                << found.shown.trace << "replay: " << replay_line(file) << "\n";
      row.example = replay_line(file);
      const std::string page = stem + ".html";
      std::unique_ptr<conformance::Target> timed = factory();
      std::ofstream(page) << conformance::timeline_html(
          "Violation of " + v.violation->rule + " on " + label + " (seed " + std::to_string(seed) +
              ")",
          conformance::timed_run(*timed, small, profile));
      std::cout << "timeline: " << page << "\n";
      if (args.first) break;
    }
  } catch (const conformance::TargetFailure& e) {
    return engine_failed(e);
  } catch (const Interrupted&) {
    return interrupted();
  }
  if (g_interrupted) return interrupted();

  std::ostringstream table;
  table << "Conformance of '" << label << "' under profile '" << profile.name << "': " << scripts
        << " scripts, " << steps << " steps, " << parallel_runs << " parallel programs, seeds "
        << args.seed << ".." << args.seed + scripts + parallel_runs + void_runs - 1 << ", "
        << static_cast<int>(elapsed()) << " s"
        << (void_runs > 0 ? ", " + std::to_string(void_runs) +
                                " runs void (the engine fell more "
                                "than half the margin behind the model's clock)"
                          : std::string())
        << "\n\n";
  table << "| rule | what | steps checked | result |\n|---|---|---:|---|\n";
  // Every SPEC rule has a row: those the scripts reach, and the others with the reason.
  std::map<std::string, std::string, ByNumber> lines;
  for (const conformance::UnservedRule& u : conformance::unserved_rules()) {
    if (conformance::unserved_reason(u.rule, args.target).empty()) continue;  // served here
    lines[u.rule] = "| " + std::string(u.rule) + " | " + u.what +
                    " | - | not served: " + conformance::unserved_reason(u.rule, args.target) +
                    " |\n";
  }
  // A disagreement that no re-run showed again is no violation, and the table says so.
  auto unreproduced = [](const Row& row, const char* unit) {
    if (row.not_reproduced == 0) return std::string();
    return "; " + std::to_string(row.not_reproduced) + " " + unit +
           " disagreed once and not on re-runs (not judged" +
           (row.unreproduced.empty() ? std::string() : ": `" + row.unreproduced + "`") + ")";
  };
  for (const auto& [rule, row] : rows) {
    // A rule the target does not serve keeps its reason (R22 on Redis).
    if (row.checked == 0 && row.violated == 0 && row.diverged.empty() &&
        !conformance::unserved_reason(rule, args.target).empty()) {
      continue;
    }
    std::string result = "holds";
    if (row.violated > 0) {
      result =
          "**violated** in " + std::to_string(row.violated) + " scripts: `" + row.example + "`";
    } else if (!row.diverged.empty()) {
      result = "diverges as the profile says:";
      for (const auto& [name, n] : row.diverged) {
        result += " `" + name + "` (" + std::to_string(n) + " scripts)";
      }
    } else if (rule == "R3" && gen.retention_messages.empty()) {
      result = "not served (no bounded topics: Target::serves)";
    } else if (hello && row.checked == 0 && !exec_feature(rule).empty() &&
               std::find(hello->serves.begin(), hello->serves.end(), exec_feature(rule)) ==
                   hello->serves.end()) {
      result = "not served (the target's hello does not list " + exec_feature(rule) + ")";
    } else if (row.checked == 0) {
      result = "not reached";
    }
    lines[rule] = "| " + rule + " | " + kRuleNames.at(rule) + " | " + std::to_string(row.checked) +
                  " | " + result + unreproduced(row, "scripts") + " |\n";
    if (row.not_reproduced > 0 && status == 0) status = 4;
  }
  for (const auto& [rule, line] : lines) table << line;
  if (args.parallel > 0) {
    std::string result = parallel_row.checked == 0 ? "not reached" : "holds";
    if (parallel_row.violated > 0) {
      result = "**violated** in " + std::to_string(parallel_row.violated) + " programs: `" +
               parallel_row.example + "`";
    } else if (!parallel_row.diverged.empty()) {
      result = "diverges as the profile says:";
      for (const auto& [name, n] : parallel_row.diverged) {
        result += " `" + name + "` (" + std::to_string(n) + " programs)";
      }
    }
    table << "| L | parallel pull workers (" << parallel_runs
          << " programs): every history linearizes | " << parallel_row.checked << " calls | "
          << result << unreproduced(parallel_row, "programs") << " |\n";
    std::string queue = queue_row.checked == 0 ? "not reached" : "holds";
    if (queue_row.violated > 0) {
      queue = "**violated** in " + std::to_string(queue_row.violated) + " programs:";
      for (const auto& [name, n] : queue_row.anomalies) {
        queue += " " + name + " (" + std::to_string(n) + ")";
      }
      if (!queue_row.example.empty()) queue += ", `" + queue_row.example + "`";
    }
    table << "| H | the same histories, queue checkers: nothing lost, unexpected, "
             "double-held, duplicated beyond redelivery, skipped or back after its ack"
          << "; counters add up where the engine keeps R13's | " << queue_row.checked << " calls | "
          << queue << unreproduced(queue_row, "programs") << " |\n";
    if ((parallel_row.not_reproduced > 0 || queue_row.not_reproduced > 0) && status == 0) {
      status = 4;
    }
  }
  if (!profile.switches.empty()) {
    table << "\nProfile '" << profile.name << "':\n";
    for (conformance::Switch s : profile.switches) {
      table << "- `" << conformance::name_of(s) << "` (" << conformance::rule_of(s)
            << "): " << conformance::sentence_of(s) << "\n";
    }
  }
  std::cout << "\n" << table.str();
  if (!args.report.empty()) std::ofstream(args.report) << table.str();
  return status;
}
