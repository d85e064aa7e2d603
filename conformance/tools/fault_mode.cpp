// `conformance --faults` (fault_mode.h).
#include "fault_mode.h"

#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iomanip>
#include <iostream>
#include <memory>
#include <sstream>
#include <thread>

#include "conformance/broker_server.h"
#include "conformance/faults.h"
#include "conformance/jetstream_target.h"
#include "conformance/leftovers.h"
#include "conformance/nats_cluster.h"
#include "conformance/nats_server.h"
#include "conformance/served_target.h"
#ifdef CONFORMANCE_HAS_REDIS
#include "conformance/redis_server.h"
#include "conformance/redis_target.h"
#endif

namespace {

std::string command_of(const FaultArgs& a) {
  std::ostringstream s;
  s << "scripts/conformance " << a.target << " --faults --seconds " << a.seconds << " --seed "
    << a.seed << " --fault " << a.kinds;
  if (a.url.empty() && (a.target == "redis" || a.target == "inproc")) {
    s << " --appendfsync " << a.appendfsync;
  }
  if (!a.url.empty()) {
    s << " --url " << a.url << " --restart-command '" << a.restart_command << "'";
    if (!a.kill_command.empty()) s << " --kill-command '" << a.kill_command << "'";
  }
  return s.str();
}

std::string kind_of(const conformance::FaultEvent& e) {
  switch (e.kind) {
    case conformance::FaultEvent::Kind::kPublish:
      return e.result == conformance::PublishResult::kOk       ? "publish ok"
             : e.result == conformance::PublishResult::kFailed ? "publish failed"
                                                               : "publish info";
    case conformance::FaultEvent::Kind::kDeliver:
      return "deliver";
    case conformance::FaultEvent::Kind::kAck:
      return e.accepted ? "ack ok" : "ack refused";
    case conformance::FaultEvent::Kind::kPollFailed:
      return "poll info";
  }
  return "?";
}

// The history, one event a line, for reading an anomaly's values in context.
void write_history(const std::string& path, const conformance::FaultReport& r) {
  std::ofstream out(path);
  for (const conformance::Fault& f : r.faults) {
    out << "# fault at " << f.at_ms << " ms: "
        << (f.kill9 ? "kill -9, down " + std::to_string(f.down_ms) + " ms" : "clean restart")
        << "\n";
  }
  std::size_t next = 0;  // the next fault to print in its place among the events
  for (const conformance::FaultEvent& e : r.history) {
    for (; next < r.faults.size() && r.faults[next].at_ms <= e.at_ms; ++next) {
      out << "## " << r.faults[next].at_ms
          << " ms: " << (r.faults[next].kill9 ? "kill -9" : "clean restart") << "\n";
    }
    out << e.at_ms << " ms: " << kind_of(e) << " " << e.value;
    if (e.kind != conformance::FaultEvent::Kind::kPublish)
      out << " " << e.consumer << " id " << e.id;
    if (e.kind == conformance::FaultEvent::Kind::kDeliver) {
      out << " poll " << e.poll << " attempt " << e.attempt;
    }
    out << "\n";
  }
}

}  // namespace

int run_fault_mode(const FaultArgs& args, const volatile std::sig_atomic_t& interrupted) {
  conformance::FaultOptions options;
  options.seed = args.seed;
  options.seconds = args.seconds;
  options.kinds = args.kinds;
  options.progress = [](const std::string& line) { std::cerr << "faults: " << line << "\n"; };
  const std::string prefix = conformance::run_prefix(::getpid()) + "_f";
  std::string persistence;
  try {
    std::unique_ptr<conformance::BrokerServer> served;
    std::unique_ptr<conformance::NatsServer> nats;
    std::unique_ptr<conformance::NatsCluster> cluster;
    conformance::JetStreamTarget* on_cluster = nullptr;
    int victim = -1;     // the node a kill -9 took down, to start again
    int kills_done = 0;  // kill -9 alternates: the stream leader, then a follower
#ifdef CONFORMANCE_HAS_REDIS
    std::unique_ptr<conformance::RedisServer> redis;
#endif
    std::unique_ptr<conformance::Target> target;
    conformance::FaultControl control;
    bool killed = false;  // --url: the kill command ran, the restart command has not yet
    // --url: the user's commands, run by the shell; one that fails ends the run as an engine
    // failure. A clean restart is the restart command alone, counted as down once it
    // returned (the tool cannot see when it stopped the server).
    auto run_command = [](const char* what, const std::string& command) {
      std::cerr << "faults: " << what << ": " << command << "\n";
      const int rc = std::system(command.c_str());
      if (rc != 0) {
        throw conformance::TargetFailure(std::string("the ") + what + " command failed (status " +
                                         std::to_string(rc) + "): " + command);
      }
    };
    auto wait_serving = [&](const std::function<bool()>& serves) {
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
      while (!serves()) {
        if (std::chrono::steady_clock::now() >= deadline) {
          throw conformance::TargetFailure("the deployment at " + args.url +
                                           " did not serve again within 30 s of its restart");
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
      }
    };
    if (!args.url.empty()) {
      persistence = "the user's deployment";
      std::function<bool()> serves = [&] { return conformance::jetstream_answers(args.url); };
#ifdef CONFORMANCE_HAS_REDIS
      if (args.target == "redis") serves = [&] { return conformance::redis_answers(args.url); };
#endif
      control.kill9 = [&, run_command] {
        run_command("kill", args.kill_command);
        killed = true;
      };
      control.stop = [&, run_command, serves] {
        run_command("restart", args.restart_command);
        wait_serving(serves);
      };
      control.restart = [&, run_command, serves] {
        if (killed) run_command("restart", args.restart_command);
        killed = false;
        wait_serving(serves);
      };
      std::cerr << "conformance: faults on the deployment at " << args.url << "\n";
#ifdef CONFORMANCE_HAS_REDIS
      if (args.target == "redis") {
        target = std::make_unique<conformance::RedisTarget>(args.url, prefix, 1);
      } else
#endif
      {
        target = std::make_unique<conformance::JetStreamTarget>(args.url, prefix, 1, true);
      }
    } else if (args.target == "inproc") {
      conformance::BrokerServerOptions bo;
      bo.sync_always = args.appendfsync == "always";
      persistence = bo.sync_always ? "fsync always" : "fsync every 1 s";
      served = std::make_unique<conformance::BrokerServer>(bo);
      std::cerr << "conformance: broker_server (" << persistence << ") started at " << served->url()
                << "\n";
      control.kill9 = [&] { served->kill9(); };
      control.stop = [&] { served->stop(); };
      control.restart = [&] { served->restart(); };
      target = std::make_unique<conformance::ServedTarget>(served->port());
    } else if (args.target == "jetstream-cluster") {
      persistence = "R3 file store, 3 nodes";
      options.drain_quiet_rounds = 10;  // leaders may still be moving after the last fault
      cluster = std::make_unique<conformance::NatsCluster>();
      std::cerr << "conformance: 3-node JetStream cluster started at " << cluster->urls() << "\n";
      // The faults' victims: kill -9 the stream leader, then a follower, in turn; a clean
      // restart restarts the leader.
      auto leader = [&] {
        const int l = cluster->leader_of(on_cluster->stream_of("faults"));
        return l < 0 ? 0 : l;
      };
      control.kill9 = [&, leader] {
        const int l = leader();
        victim = kills_done++ % 2 == 0 ? l : (l + 1) % 3;
        std::cerr << "faults: kill -9 n" << victim + 1
                  << (victim == l ? " (leader)" : " (follower)") << "\n";
        cluster->node(victim).kill9();
      };
      control.stop = [&, leader] {
        victim = leader();
        cluster->node(victim).stop();
      };
      control.restart = [&, leader] {
        const int n = victim >= 0 ? victim : leader();
        victim = -1;
        cluster->node(n).restart();
      };
      auto t = std::make_unique<conformance::JetStreamTarget>(cluster->urls(), prefix, 1, true, 3);
      on_cluster = t.get();
      target = std::move(t);
    } else if (args.target == "jetstream") {
      persistence = "file store, default sync";
      nats = std::make_unique<conformance::NatsServer>();
      std::cerr << "conformance: nats-server started at " << nats->url() << "\n";
      control.kill9 = [&] { nats->kill9(); };
      control.stop = [&] { nats->stop(); };
      control.restart = [&] { nats->restart(); };
      target = std::make_unique<conformance::JetStreamTarget>(nats->url(), prefix, 1, true);
    } else {
#ifdef CONFORMANCE_HAS_REDIS
      persistence = "AOF appendfsync " + args.appendfsync;
      conformance::RedisServerOptions ro;
      ro.appendonly = args.appendfsync == "always"
                          ? conformance::RedisServerOptions::Fsync::kAlways
                          : conformance::RedisServerOptions::Fsync::kEverySec;
      redis = std::make_unique<conformance::RedisServer>(ro);
      std::cerr << "conformance: redis-server (" << persistence << ") started at " << redis->url()
                << "\n";
      control.kill9 = [&] { redis->kill9(); };
      control.stop = [&] { redis->stop(); };
      control.restart = [&] { redis->restart(); };
      target = std::make_unique<conformance::RedisTarget>(redis->url(), prefix, 1);
#endif
    }
    const std::vector<conformance::Fault> schedule = conformance::fault_schedule(options);
    std::size_t kills = 0;
    for (const conformance::Fault& f : schedule) kills += f.kill9 ? 1 : 0;
    std::cerr << "faults: seed " << args.seed << ", " << args.seconds << " s, " << schedule.size()
              << " faults (" << kills << " kill -9, " << schedule.size() - kills
              << " clean restarts)\n";
    const conformance::FaultReport r =
        conformance::run_faults(*target, control, options, [&] { return interrupted != 0; });
    target.reset();

    std::filesystem::create_directories(args.out);
    const std::string history =
        args.out + "/faults-" + args.target +
        (args.target == "redis" || args.target == "inproc" ? "-" + args.appendfsync : "") + "-" +
        std::to_string(args.seed) + ".history";
    write_history(history, r);

    std::size_t total = 0, failing = 0;
    std::cout << "\nfault run: " << args.target << " (" << persistence << "), seed " << args.seed
              << ", " << r.faults.size() << " faults (" << kills << " kill -9), " << r.consumers
              << " consumers\n"
              << "publishes: " << r.published << " (" << r.ok << " ok, " << r.failed << " failed, "
              << r.indeterminate << " indeterminate); deliveries " << r.delivered
              << ", acks accepted " << r.acks_accepted << ", calls the engine failed "
              << r.call_errors << "\n"
              << "history: " << history << "\n\n";
    std::cout << "| engine | persistence | anomaly | count | examples |\n"
              << "|---|---|---|---|---|\n";
    for (const std::string& name : conformance::anomaly_names()) {
      const std::vector<std::string>& values = r.anomalies.at(name);
      total += values.size();
      if (!args.allow.contains(name)) failing += values.size();
      std::string examples;
      for (std::size_t i = 0; i < values.size() && i < 5; ++i) {
        examples += (i == 0 ? "" : " ") + values[i];
      }
      if (values.size() > 5) examples += " ...";
      std::cout << "| " << args.target << " | " << persistence << " | " << name << " | "
                << (values.empty() ? std::string("none") : std::to_string(values.size())) << " | "
                << (examples.empty() ? "-" : examples) << " |\n";
    }
    std::cout << "\nreproduce (same fault schedule; the interleaving is real time): "
              << command_of(args) << "\n";
    std::cout << (total == 0 ? "no anomaly\n"
                             : "anomalies found (a finding about the engine and setting, "
                               "not a failure of the run; --strict exits 1)\n");
    return args.strict && failing > 0 ? 1 : 0;
  } catch (const conformance::TargetFailure& e) {
    if (interrupted) {
      std::cerr << "conformance: interrupted; stopping the servers it started\n";
      return 130;
    }
    std::cerr << "conformance: the engine failed (not an anomaly): " << e.what() << "\n";
    return 3;
  } catch (const std::invalid_argument& e) {
    std::cerr << "conformance: " << e.what() << "\n";
    return 2;
  }
}
