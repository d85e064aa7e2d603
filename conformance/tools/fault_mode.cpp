// `conformance --faults` (fault_mode.h).
#include "fault_mode.h"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iomanip>
#include <iostream>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <thread>
#include <utility>
#include <vector>

#include "conformance/broker_server.h"
#include "conformance/damage.h"
#include "conformance/faults.h"
#include "conformance/jetstream_target.h"
#include "conformance/lazy_fs.h"
#include "conformance/leftovers.h"
#include "conformance/nats_cluster.h"
#include "conformance/nats_server.h"
#include "conformance/net_namespaces.h"
#include "conformance/served_target.h"
#ifdef CONFORMANCE_HAS_REDIS
#include "conformance/redis_sentinel.h"
#include "conformance/redis_server.h"
#include "conformance/redis_target.h"
#endif

namespace {

std::string command_of(const FaultArgs& a) {
  std::ostringstream s;
  s << "scripts/conformance " << a.target << " --faults --seconds " << a.seconds << " --seed "
    << a.seed << " --fault " << a.kinds;
  if (!a.schedule.empty()) s << " --schedule " << a.schedule;
  if (a.shrink) s << " --shrink --shrink-runs " << a.shrink_runs;
  if (a.strict) s << " --strict";
  if (!a.allow.empty()) {
    s << " --allow ";
    bool first = true;
    for (const std::string& name : a.allow) s << (first ? "" : ",") << name, first = false;
  }
  if (a.url.empty() &&
      (a.target == "redis" || a.target == "inproc" || a.target == "redis-sentinel")) {
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
    case conformance::FaultEvent::Kind::kAckFailed:
      return "ack info";
  }
  return "?";
}

// A fault as the history and the log name it: "kill -9", "clean restart", "pause",
// "power cut (lose unsynced writes)"; with its duration if `timed`.
std::string fault_text(const conformance::Fault& f, bool timed) {
  using Kind = conformance::Fault::Kind;
  const std::string down = timed ? ", down " + std::to_string(f.down_ms) + " ms" : "";
  switch (f.kind) {
    case Kind::kKill9:
      return "kill -9" + down;
    case Kind::kRestart:
      return "clean restart";
    case Kind::kPause:
      return "pause" + (timed ? " " + std::to_string(f.down_ms) + " ms" : std::string());
    case Kind::kLoseUnsynced:
      return "power cut (unsynced writes lost)" + down;
    case Kind::kDamage:
      return "kill -9 and damage at rest" + down;
    case Kind::kPartition:
      return "partition" + (timed ? " " + std::to_string(f.down_ms) + " ms" : std::string());
    case Kind::kMembership:
      return "membership change" +
             (timed ? ", out " + std::to_string(f.down_ms) + " ms" : std::string());
    case Kind::kDiskError:
      return "failing disk" + (timed ? " " + std::to_string(f.down_ms) + " ms" : std::string()) +
             ", then kill -9 and restart";
  }
  return "?";
}

// The history, one event a line, for reading an anomaly's values in context.
void write_history(const std::string& path, const conformance::FaultReport& r) {
  std::ofstream out(path);
  for (std::size_t i = 0; i < r.faults.size(); ++i) {
    out << "# fault at " << r.faults[i].at_ms << " ms: " << fault_text(r.faults[i], true);
    if (const auto d = r.damaged.find(i); d != r.damaged.end()) out << " (" << d->second << ")";
    if (i < r.took_ms.size()) out << "; serving again after " << r.took_ms[i] << " ms";
    out << "\n";
  }
  std::size_t next = 0;  // the next fault to print in its place among the events
  for (const conformance::FaultEvent& e : r.history) {
    for (; next < r.faults.size() && r.faults[next].at_ms <= e.at_ms; ++next) {
      out << "## " << r.faults[next].at_ms << " ms: " << fault_text(r.faults[next], false) << "\n";
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

// Damage at rest in dir (conformance/damage.h), said on stderr; a damage that fails ends
// the run as an engine failure.
std::string damaged(const std::string& dir, std::uint64_t where) {
  try {
    std::string what = conformance::damage_at_rest(dir, where);
    std::cerr << "faults: damage: " << what << "\n";
    return what;
  } catch (const std::runtime_error& e) {
    throw conformance::TargetFailure(e.what());
  }
}

// How the nodes of a partition are named: "n1" or "r1", and the leader's and the others'
// roles.
struct NodeNames {
  const char* prefix;
  const char* leader;
  const char* follower;
};

// Cuts the links a partition's draw names around the leader `l` of three nodes in `net`:
// the leader or a follower cut from both other nodes, a bridge (the leader cut from one
// follower, the third node sees both), or the client cut from the leader. Returns what it
// cut (also said on stderr). Throws TargetFailure if a cut fails.
std::string cut_drawn(conformance::NetNamespaces& net, int l, std::uint64_t where,
                      const NodeNames& names) {
  const int f = (l + 1 + static_cast<int>((where / 4) % 2)) % 3;
  const int other = 3 - l - f;
  auto node = [&](int i, const char* role) {
    return names.prefix + std::to_string(i + 1) +
           (role != nullptr ? " (" + std::string(role) + ")" : "");
  };
  std::string what;
  switch (where % 4) {
    case 0:
      net.cut(l, f);
      net.cut(l, other);
      what = node(l, names.leader) + " cut from both other nodes";
      break;
    case 1:
      net.cut(f, l);
      net.cut(f, other);
      what = node(f, names.follower) + " cut from both other nodes";
      break;
    case 2:
      net.cut(l, f);
      what = node(l, names.leader) + " cut from " + node(f, nullptr) + ", " + node(other, nullptr) +
             " a bridge between them";
      break;
    default:
      net.cut(conformance::NetNamespaces::kClient, l);
      what = "the client cut from " + node(l, names.leader);
  }
  std::cerr << "faults: partition: " << what << "\n";
  return what;
}

// What one run gave: the report, the engine's persistence in words, and the lazy file
// systems' evidence line ("" without power cuts).
struct RunResult {
  conformance::FaultReport report;
  std::string persistence;
  std::string evidence;
};

// One fault run with `schedule` on servers (and lazy file systems) of its own, started and
// stopped here. Throws TargetFailure (the engine failed, or an interrupt), std::invalid_argument.
RunResult run_once(const FaultArgs& args, const std::vector<conformance::Fault>& schedule,
                   const volatile std::sig_atomic_t& interrupted) {
  conformance::FaultOptions options;
  options.seed = args.seed;
  options.seconds = args.seconds;
  options.kinds = args.kinds;
  options.schedule = schedule;
  options.progress = [](const std::string& line) { std::cerr << "faults: " << line << "\n"; };
  const std::string prefix = conformance::run_prefix(::getpid()) + "_f";
  std::string persistence;
  using Kind = conformance::Fault::Kind;
  const std::vector<Kind> kinds = conformance::fault_kinds(args.kinds);
  const bool disk_errors = std::find(kinds.begin(), kinds.end(), Kind::kDiskError) != kinds.end();
  // Data on lazy file systems: for power cuts and for failing disks.
  const bool power_cuts =
      disk_errors || std::find(kinds.begin(), kinds.end(), Kind::kLoseUnsynced) != kinds.end();
  const bool partitions = std::find(kinds.begin(), kinds.end(), Kind::kPartition) != kinds.end();
  // Declared before the servers, so removed (unmounted) after they stop.
  std::unique_ptr<conformance::NetNamespaces> net;
  std::vector<std::unique_ptr<conformance::LazyFs>> disks;
  std::vector<std::uint64_t> dropped;  // bytes each power cut dropped, over every disk
  auto new_disk = [&] {
    disks.push_back(std::make_unique<conformance::LazyFs>());
    return disks.back()->path();
  };
  // A power cut of the servers on disks (all of them if empty): killed first, then what
  // their files had not synced is gone.
  auto drop_unsynced = [&](const std::vector<int>& which) {
    std::uint64_t bytes = 0;
    for (std::size_t i = 0; i < disks.size(); ++i) {
      if (which.empty() ||
          std::find(which.begin(), which.end(), static_cast<int>(i)) != which.end()) {
        bytes += disks[i]->drop_unsynced();
      }
    }
    dropped.push_back(bytes);
  };
  // A failing disk: the disks (all if empty), by the draw, fail every write and fsync with
  // EIO or ENOSPC, or only the fsyncs with EIO (the writes stay unsynced), until heal_disks.
  auto fail_disks = [&](const std::vector<int>& which, std::uint64_t where) {
    const std::uint64_t how = where % 3;
    for (std::size_t i = 0; i < disks.size(); ++i) {
      if (which.empty() ||
          std::find(which.begin(), which.end(), static_cast<int>(i)) != which.end()) {
        if (how == 2) {
          disks[i]->fail_syncs();
        } else {
          disks[i]->fail(how == 0 ? EIO : ENOSPC);
        }
      }
    }
    const std::string what = how == 0   ? "every write and fsync failed with EIO"
                             : how == 1 ? "every write and fsync failed with ENOSPC"
                                        : "every fsync failed with EIO (writes taken, unsynced)";
    std::cerr << "faults: disk: " << what << "\n";
    return what;
  };
  auto heal_disks = [&] {
    for (auto& d : disks) d->heal();
  };
  std::unique_ptr<conformance::BrokerServer> served;
  std::unique_ptr<conformance::NatsServer> nats;
  std::unique_ptr<conformance::NatsCluster> cluster;
  conformance::JetStreamTarget* on_cluster = nullptr;
  std::vector<int> victims;  // the nodes a fault took down or paused, to start again
  int kills_done = 0;        // kill -9 alternates: the stream leader, then a follower
  int member_out = 0;        // the node a membership change took out of the stream's peers
  int disk_victim = -1;      // the node whose disk failed: the next kill -9 is its reopening
#ifdef CONFORMANCE_HAS_REDIS
  std::unique_ptr<conformance::RedisServer> redis;
  std::unique_ptr<conformance::RedisSentinelGroup> sentinel;
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
    if (power_cuts) bo.store_dir = new_disk();
    served = std::make_unique<conformance::BrokerServer>(bo);
    std::cerr << "conformance: broker_server (" << persistence << ") started at " << served->url()
              << "\n";
    control.kill9 = [&] { served->kill9(); };
    control.stop = [&] { served->stop(); };
    control.restart = [&] { served->restart(); };
    control.pause = [&] { served->pause(); };
    control.resume = [&] { served->resume(); };
    control.damage = [&, store = bo.store_dir.empty() ? served->dir() + "/store"
                                                      : bo.store_dir](std::uint64_t where) {
      served->kill9();
      return damaged(store, where);
    };
    control.repair = [&] {
      const std::string cut = served->repair_restart();
      const std::string said = "broker_server --repair: " + (cut.empty() ? "nothing cut" : cut);
      std::cerr << "faults: " << said << "\n";
      return said;
    };
    if (power_cuts) {
      control.lose_unsynced = [&] {
        served->kill9();
        drop_unsynced({});
      };
      control.fail_disk = [&](std::uint64_t where) { return fail_disks({}, where); };
      control.heal_disk = heal_disks;
    }
    target = std::make_unique<conformance::ServedTarget>(served->port());
  } else if (args.target == "jetstream-cluster") {
    persistence = "R3 file store, 3 nodes";
    options.drain_quiet_rounds = 10;  // leaders may still be moving after the last fault
    std::array<std::string, 3> stores;
    if (power_cuts) {
      for (std::string& store : stores) store = new_disk();
    }
    if (partitions) net = std::make_unique<conformance::NetNamespaces>(3);
    cluster = std::make_unique<conformance::NatsCluster>(stores, net.get());
    std::cerr << "conformance: 3-node JetStream cluster started at " << cluster->urls() << "\n";
    // The faults' victims: kill -9 the stream leader, then a follower, in turn; a clean
    // restart restarts the leader, a pause pauses it, a damage damages it; a power cut takes
    // down a majority (the leader and a follower) and drops what both had not synced. The
    // leader is n1 if none is elected within `within` (after a power cut of a majority there
    // may be none for long).
    auto leader = [&](std::chrono::milliseconds within = std::chrono::seconds(30)) {
      const int l = cluster->leader_of(on_cluster->stream_of("faults"), -1, within);
      return l < 0 ? 0 : l;
    };
    control.kill9 = [&, leader] {
      if (disk_victim >= 0) {  // a failing disk's end: that node is reopened
        victims = {std::exchange(disk_victim, -1)};
        std::cerr << "faults: kill -9 n" << victims[0] + 1 << " (its disk failed)\n";
        cluster->node(victims[0]).kill9();
        return;
      }
      const int l = leader();
      const int victim = kills_done++ % 2 == 0 ? l : (l + 1) % 3;
      victims = {victim};
      std::cerr << "faults: kill -9 n" << victim + 1 << (victim == l ? " (leader)" : " (follower)")
                << "\n";
      cluster->node(victim).kill9();
    };
    control.stop = [&, leader] {
      victims = {leader()};
      cluster->node(victims[0]).stop();
    };
    control.restart = [&, leader] {
      if (victims.empty()) victims = {leader()};
      for (const int n : victims) cluster->node(n).restart();
      victims.clear();
    };
    control.pause = [&, leader] {
      victims = {leader(std::chrono::seconds(2))};
      cluster->node(victims[0]).pause();
    };
    control.resume = [&] {
      for (const int n : victims) cluster->node(n).resume();
      victims.clear();
    };
    if (partitions) {
      control.partition = [&, leader](std::uint64_t where) {
        return cut_drawn(*net, leader(std::chrono::seconds(2)), where, {"n", "leader", "follower"});
      };
      control.heal = [&] { net->heal_all(); };
    }
    // A membership change (Jepsen's node removal): the leader or a follower, by the draw,
    // leaves the stream's peers and is added back when its time is up (NatsCluster).
    control.remove_member = [&, leader](std::uint64_t where) {
      const int l = leader(std::chrono::seconds(2));
      const int node = where % 2 == 0 ? l : (l + 1 + static_cast<int>((where / 2) % 2)) % 3;
      member_out = node;
      const std::string answer = cluster->remove_replica(on_cluster->stream_of("faults"), node);
      const std::string what = "n" + std::to_string(node + 1) +
                               (node == l ? " (leader)" : " (follower)") +
                               " removed from the stream's peers; the server answered " +
                               (answer.empty() ? "nothing" : answer);
      std::cerr << "faults: membership: " << what << "\n";
      return what;
    };
    control.add_member = [&] {
      cluster->add_replica_back(on_cluster->stream_of("faults"), member_out);
      std::cerr << "faults: membership: n" << member_out + 1 << " added back, caught up\n";
    };
    control.damage = [&, leader, stores](std::uint64_t where) {
      victims = {leader(std::chrono::seconds(2))};
      cluster->node(victims[0]).kill9();
      const std::string& store = stores[static_cast<std::size_t>(victims[0])];
      return damaged(store.empty() ? cluster->node(victims[0]).dir() + "/store" : store, where);
    };
    if (power_cuts) {
      control.lose_unsynced = [&, leader] {
        const int l = leader(std::chrono::seconds(2));
        victims = {l, (l + 1) % 3};
        std::cerr << "faults: power cut of n" << l + 1 << " (leader) and n" << (l + 1) % 3 + 1
                  << " (follower)\n";
        for (const int n : victims) cluster->node(n).kill9();
        drop_unsynced(victims);
      };
      // A failing disk under the stream leader; it is then killed and started again.
      control.fail_disk = [&, leader](std::uint64_t where) {
        const int l = leader(std::chrono::seconds(2));
        disk_victim = l;
        return "n" + std::to_string(l + 1) + " (leader): " + fail_disks({l}, where);
      };
      control.heal_disk = heal_disks;
    }
    auto t = std::make_unique<conformance::JetStreamTarget>(cluster->urls(), prefix, 1, true, 3);
    on_cluster = t.get();
    target = std::move(t);
#ifdef CONFORMANCE_HAS_REDIS
  } else if (args.target == "redis-sentinel") {
    const auto fsync = args.appendfsync == "always"
                           ? conformance::RedisServerOptions::Fsync::kAlways
                           : conformance::RedisServerOptions::Fsync::kEverySec;
    persistence = "primary and 2 replicas, 3 sentinels, AOF appendfsync " + args.appendfsync;
    if (partitions) net = std::make_unique<conformance::NetNamespaces>(3);
    sentinel = std::make_unique<conformance::RedisSentinelGroup>(fsync, net.get());
    std::cerr << "conformance: redis primary, 2 replicas and 3 sentinels started at "
              << sentinel->url() << "\n";
    // The faults' victim is the primary as the sentinels name it now.
    auto primary = [&] {
      const int p = sentinel->primary();
      return p < 0 ? 0 : p;
    };
    control.kill9 = [&, primary] {
      victims = {primary()};
      std::cerr << "faults: kill -9 r" << victims[0] + 1 << " (primary)\n";
      sentinel->node(victims[0]).kill9();
    };
    control.stop = [&, primary] {
      victims = {primary()};
      sentinel->node(victims[0]).stop();
    };
    control.restart = [&, primary] {
      if (victims.empty()) victims = {primary()};
      for (const int n : victims) sentinel->node(n).restart();
      victims.clear();
    };
    control.pause = [&, primary] {
      victims = {primary()};
      std::cerr << "faults: pause r" << victims[0] + 1 << " (primary)\n";
      sentinel->node(victims[0]).pause();
    };
    control.resume = [&] {
      for (const int n : victims) sentinel->node(n).resume();
      victims.clear();
    };
    control.damage = [&, primary](std::uint64_t where) {
      victims = {primary()};
      sentinel->node(victims[0]).kill9();
      return damaged(sentinel->node(victims[0]).dir(), where);
    };
    if (partitions) {
      // Each server is cut with its sentinel beside it.
      control.partition = [&, primary](std::uint64_t where) {
        return cut_drawn(*net, primary(), where, {"r", "primary", "replica"});
      };
      control.heal = [&] { net->heal_all(); };
    }
    target = std::make_unique<conformance::RedisTarget>(sentinel->url(), prefix, 1);
#endif
  } else if (args.target == "jetstream") {
    persistence = "file store, default sync";
    conformance::NatsServerOptions no;
    if (power_cuts) no.store_dir = new_disk();
    nats = std::make_unique<conformance::NatsServer>(no);
    std::cerr << "conformance: nats-server started at " << nats->url() << "\n";
    control.kill9 = [&] { nats->kill9(); };
    control.stop = [&] { nats->stop(); };
    control.restart = [&] { nats->restart(); };
    control.pause = [&] { nats->pause(); };
    control.resume = [&] { nats->resume(); };
    control.damage = [&, store = no.store_dir.empty() ? nats->dir() + "/store"
                                                      : no.store_dir](std::uint64_t where) {
      nats->kill9();
      return damaged(store, where);
    };
    if (power_cuts) {
      control.lose_unsynced = [&] {
        nats->kill9();
        drop_unsynced({});
      };
      control.fail_disk = [&](std::uint64_t where) { return fail_disks({}, where); };
      control.heal_disk = heal_disks;
    }
    target = std::make_unique<conformance::JetStreamTarget>(nats->url(), prefix, 1, true);
  } else {
#ifdef CONFORMANCE_HAS_REDIS
    persistence = "AOF appendfsync " + args.appendfsync;
    conformance::RedisServerOptions ro;
    ro.appendonly = args.appendfsync == "always"
                        ? conformance::RedisServerOptions::Fsync::kAlways
                        : conformance::RedisServerOptions::Fsync::kEverySec;
    if (power_cuts) ro.data_dir = new_disk();
    redis = std::make_unique<conformance::RedisServer>(ro);
    std::cerr << "conformance: redis-server (" << persistence << ") started at " << redis->url()
              << "\n";
    control.kill9 = [&] { redis->kill9(); };
    control.stop = [&] { redis->stop(); };
    control.restart = [&] { redis->restart(); };
    control.pause = [&] { redis->pause(); };
    control.resume = [&] { redis->resume(); };
    control.damage = [&, data = ro.data_dir.empty() ? redis->dir()
                                                    : ro.data_dir](std::uint64_t where) {
      redis->kill9();
      return damaged(data, where);
    };
    control.repair = [&] {
      const std::string said = redis->repair_restart();
      std::cerr << "faults: " << said << "\n";
      return said;
    };
    if (power_cuts) {
      control.lose_unsynced = [&] {
        redis->kill9();
        drop_unsynced({});
      };
      control.fail_disk = [&](std::uint64_t where) { return fail_disks({}, where); };
      control.heal_disk = heal_disks;
    }
    target = std::make_unique<conformance::RedisTarget>(redis->url(), prefix, 1);
#endif
  }
  if (partitions) persistence += ", nodes in network namespaces";
  if (power_cuts) {
    persistence += ", on a lazy file system";
    control.after_setup = [&] {
      for (const auto& disk : disks) disk->write_back();
    };
  }
  const conformance::FaultReport r =
      conformance::run_faults(*target, control, options, [&] { return interrupted != 0; });
  target.reset();
  std::ostringstream evidence;
  if (!disks.empty()) {
    // The evidence of what the power cuts could lose: what the engine synced, and what
    // was dropped.
    conformance::LazyFsCounters total;
    for (const auto& disk : disks) {
      const conformance::LazyFsCounters c = disk->counters();
      total.fsyncs += c.fsyncs;
      total.writes += c.writes;
    }
    std::uint64_t cut_bytes = 0, cuts_losing = 0;
    for (const std::uint64_t b : dropped) {
      cut_bytes += b;
      cuts_losing += b > 0 ? 1 : 0;
    }
    evidence << "lazy file system: the engine made " << total.writes << " writes and "
             << total.fsyncs << " fsyncs; " << dropped.size() << " power cuts dropped " << cut_bytes
             << " unsynced bytes (" << cuts_losing << " of them dropped any)\n";
  }
  return RunResult{r, persistence, evidence.str()};
}

// "N faults (a kill9, b restart, ...)" of a schedule, in the order the kinds were listed.
std::string faults_text(const std::vector<conformance::Fault>& schedule, const std::string& kinds) {
  std::map<conformance::Fault::Kind, std::size_t> per_kind;
  for (const conformance::Fault& f : schedule) ++per_kind[f.kind];
  const std::vector<conformance::Fault::Kind> listed = conformance::fault_kinds(kinds);
  std::string out = std::to_string(schedule.size()) + " faults";
  for (std::size_t i = 0; i < listed.size(); ++i) {
    out += (i == 0 ? " (" : ", ") + std::to_string(per_kind[listed[i]]) + " " +
           conformance::fault_kind_name(listed[i]) + (i + 1 == listed.size() ? ")" : "");
  }
  return out;
}

// The anomaly names a report shows that --allow does not name.
std::set<std::string> failing_names(const FaultArgs& args, const conformance::FaultReport& r) {
  std::set<std::string> out;
  for (const auto& [name, values] : r.anomalies) {
    if (!values.empty() && !args.allow.contains(name)) out.insert(name);
  }
  return out;
}

// Shrinks a schedule whose run showed `wanted` (anomalies not allowed): drops chunks of
// faults (halves, then quarters, ... then one at a time), then halves each remaining
// fault's down time, keeping each change whose run shows one of `wanted` again; at most
// args.shrink_runs runs. The interleaving is real time, so a run that does not show the
// anomaly again (or ends as an engine failure) only means the change is not kept.
std::vector<conformance::Fault> shrink(const FaultArgs& args,
                                       std::vector<conformance::Fault> schedule,
                                       const std::set<std::string>& wanted,
                                       const volatile std::sig_atomic_t& interrupted) {
  int runs = 0;
  auto still_fails = [&](const std::vector<conformance::Fault>& candidate) {
    ++runs;
    std::cerr << "shrink: run " << runs << "/" << args.shrink_runs << " with " << candidate.size()
              << " faults: " << conformance::schedule_text(candidate) << "\n";
    RunResult r;
    try {
      r = run_once(args, candidate, interrupted);
    } catch (const conformance::TargetFailure& e) {
      if (interrupted) throw;
      // Unjudged: the anomaly was not seen again in a judged run.
      std::cerr << "shrink: the engine failed in this run (not kept): " << e.what() << "\n";
      return false;
    }
    std::set<std::string> seen = failing_names(args, r.report);
    for (const std::string& name : wanted) {
      if (seen.contains(name)) {
        std::cerr << "shrink: " << name << " again: kept\n";
        return true;
      }
    }
    std::cerr << "shrink: not seen again\n";
    return false;
  };
  for (std::size_t chunk = std::max<std::size_t>(1, schedule.size() / 2); chunk >= 1; chunk /= 2) {
    for (std::size_t at = 0; at < schedule.size() && runs < args.shrink_runs;) {
      std::vector<conformance::Fault> candidate = schedule;
      candidate.erase(
          candidate.begin() + static_cast<std::ptrdiff_t>(at),
          candidate.begin() + static_cast<std::ptrdiff_t>(std::min(at + chunk, schedule.size())));
      if (still_fails(candidate)) {
        schedule = candidate;
      } else {
        at += chunk;
      }
    }
    if (chunk == 1 || runs >= args.shrink_runs) break;
  }
  for (std::size_t i = 0; i < schedule.size() && runs < args.shrink_runs; ++i) {
    if (schedule[i].down_ms < 2) continue;
    std::vector<conformance::Fault> candidate = schedule;
    candidate[i].down_ms /= 2;
    if (still_fails(candidate)) schedule = candidate;
  }
  return schedule;
}

}  // namespace

int run_fault_mode(const FaultArgs& args, const volatile std::sig_atomic_t& interrupted) {
  try {
    conformance::FaultOptions drawn;
    drawn.seed = args.seed;
    drawn.seconds = args.seconds;
    drawn.kinds = args.kinds;
    const std::vector<conformance::Fault> schedule =
        args.schedule.empty() ? conformance::fault_schedule(drawn)
                              : conformance::parse_schedule(args.schedule, args.seconds);
    const std::vector<conformance::Fault::Kind> listed = conformance::fault_kinds(args.kinds);
    for (const conformance::Fault& f : schedule) {
      if (std::find(listed.begin(), listed.end(), f.kind) == listed.end()) {
        throw std::invalid_argument("the schedule has a " + conformance::fault_kind_name(f.kind) +
                                    " fault: name it in --fault too (" + args.kinds + ")");
      }
    }
    std::cerr << "faults: seed " << args.seed << ", " << args.seconds << " s, "
              << faults_text(schedule, args.kinds) << "\n";
    const RunResult result = run_once(args, schedule, interrupted);
    const conformance::FaultReport& r = result.report;

    std::filesystem::create_directories(args.out);
    std::string kinds_part = args.kinds == "both" ? "" : "-" + args.kinds;
    std::replace(kinds_part.begin(), kinds_part.end(), ',', '+');
    const std::string history =
        args.out + "/faults-" + args.target +
        (args.target == "redis" || args.target == "inproc" || args.target == "redis-sentinel"
             ? "-" + args.appendfsync
             : "") +
        kinds_part + "-" + std::to_string(args.seed) + ".history";
    write_history(history, r);

    std::size_t total = 0, failing = 0;
    std::cout << "\nfault run: " << args.target << " (" << result.persistence << "), seed "
              << args.seed << ", " << faults_text(schedule, args.kinds) << ", " << r.consumers
              << " consumers\n"
              << "publishes: " << r.published << " (" << r.ok << " ok, " << r.failed << " failed, "
              << r.indeterminate << " indeterminate); deliveries " << r.delivered
              << ", acks accepted " << r.acks_accepted << ", calls the engine failed "
              << r.call_errors << "\n"
              << "delivery counts judged across a restart (R34, attempts-went-back): "
              << r.counted_after_restart << " hand-outs\n"
              << "history: " << history << "\n"
              << "drain: " << r.drain_rounds << " rounds, "
              << (r.drain_quiet ? "ended quiet"
                                : "cut off at its bound (the engine was still failing polls or "
                                  "handing out: a value lost may be one it never served again)")
              << (r.last_call_error.empty() ? ""
                                            : "; the engine's last failure: " + r.last_call_error)
              << "\n"
              << result.evidence << "\n";
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
      std::cout << "| " << args.target << " | " << result.persistence << " | " << name << " | "
                << (values.empty() ? std::string("none") : std::to_string(values.size())) << " | "
                << (examples.empty() ? "-" : examples) << " |\n";
    }
    std::cout << "\nschedule: " << conformance::schedule_text(schedule) << "\n"
              << "reproduce (same fault schedule; the interleaving is real time): "
              << command_of(args) << "\n";
    std::cout << (total == 0 ? "no anomaly\n"
                             : "anomalies found (a finding about the engine and setting, "
                               "not a failure of the run; --strict exits 1)\n");
    if (args.shrink && failing > 0) {
      const std::set<std::string> wanted = failing_names(args, r);
      const std::vector<conformance::Fault> small = shrink(args, schedule, wanted, interrupted);
      FaultArgs replay = args;
      replay.schedule = conformance::schedule_text(small);
      replay.shrink = false;
      std::cout << "\nshrunk to " << small.size() << " of " << schedule.size()
                << " faults, still showing one of";
      for (const std::string& name : wanted) std::cout << " " << name;
      std::cout << ": " << replay.schedule << "\nreplay: " << command_of(replay) << "\n";
    }
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
