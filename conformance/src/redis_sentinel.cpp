// The replicated Redis with Sentinel (conformance/redis_sentinel.h).
#include "conformance/redis_sentinel.h"

#include <hiredis/hiredis.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <system_error>
#include <thread>
#include <vector>

#include "conformance/target.h"

namespace conformance {

namespace {

using Clock = std::chrono::steady_clock;

constexpr auto kFormTimeout = std::chrono::seconds(30);
constexpr auto kStopTimeout = std::chrono::seconds(5);
const char* const kName = "aloc";

// One command to the server at host:port; its reply, or null (no answer within ~1 s).
std::unique_ptr<redisReply, void (*)(void*)> ask(const std::string& host, int port,
                                                 const char* command) {
  const struct timeval second { 1, 0 };
  std::unique_ptr<redisContext, void (*)(redisContext*)> c(
      redisConnectWithTimeout(host.c_str(), port, second), redisFree);
  if (!c || c->err != 0 || redisSetTimeout(c.get(), second) != REDIS_OK) {
    return {nullptr, freeReplyObject};
  }
  return {static_cast<redisReply*>(redisCommand(c.get(), command)), freeReplyObject};
}

// The number of entries of an array reply (-1 if it is not one).
long entries(const std::string& host, int port, const char* command) {
  auto r = ask(host, port, command);
  return r && r->type == REDIS_REPLY_ARRAY ? static_cast<long>(r->elements) : -1;
}

}  // namespace

RedisSentinelGroup::RedisSentinelGroup(RedisServerOptions::Fsync fsync, const NetNamespaces* net) {
  const std::string binary =
      find_server_binary("REDIS_SENTINEL_BIN", "redis-sentinel", {"/usr/bin", "/usr/local/bin"});
  if (binary.empty()) {
    throw TargetFailure(
        "redis-sentinel not found (looked at $REDIS_SENTINEL_BIN, PATH, /usr/bin, "
        "/usr/local/bin): install it with `apt-get install -y redis-sentinel`");
  }
  // Each server keeps its role in a config file the sentinels rewrite, so one restarted
  // after a failover comes back as what the sentinels made it, not as it first started.
  // Node i's options: in namespace i at its address, or on a free loopback port.
  auto on_node = [&](int i, RedisServerOptions o) {
    if (net != nullptr) {
      o.host = net->address(i);
      o.exec_prefix = net->exec_prefix(i);
      o.port = 6379;
    }
    return o;
  };
  RedisServerOptions primary;
  primary.appendonly = fsync;
  primary.config_lines = {"# the sentinels rewrite this file (CONFIG REWRITE)"};
  nodes_[0] = std::make_unique<RedisServer>(on_node(0, primary));
  const std::string primary_at = nodes_[0]->host() + " " + std::to_string(nodes_[0]->port());
  for (int i = 1; i < 3; ++i) {
    RedisServerOptions replica = primary;
    replica.config_lines.push_back("replicaof " + primary_at);
    nodes_[i] = std::make_unique<RedisServer>(on_node(i, replica));
  }
  for (int i = 0; i < 3; ++i) {
    sentinel_hosts_[i] = net != nullptr ? net->address(i) : "127.0.0.1";
    sentinel_ports_[i] = net != nullptr ? 26379 : free_loopback_port();
    sentinel_dirs_[i] = make_temp_dir("sentinel");
    const std::string conf = sentinel_dirs_[i] + "/sentinel.conf";
    std::ofstream(conf) << "port " << sentinel_ports_[i] << "\nbind " << sentinel_hosts_[i]
                        << "\nprotected-mode " << (net != nullptr ? "no" : "yes") << "\n"
                        << "dir " << sentinel_dirs_[i] << "\nlogfile " << sentinel_dirs_[i]
                        << "/server.log\n"
                        << "sentinel monitor " << kName << " " << primary_at
                        << " 2\nsentinel down-after-milliseconds " << kName
                        << " 1000\nsentinel failover-timeout " << kName
                        << " 5000\nsentinel parallel-syncs " << kName << " 1\n";
    std::vector<std::string> args =
        net != nullptr ? net->exec_prefix(i) : std::vector<std::string>{};
    args.insert(args.end(), {binary, conf});
    if (const int err = sentinels_[i].spawn(std::move(args), sentinel_dirs_[i] + "/stdout.log",
                                            sentinel_dirs_[i]);
        err != 0) {
      throw TargetFailure("cannot run " + binary + ": " + std::strerror(err));
    }
  }
  try {
    wait_formed();
  } catch (...) {
    for (LocalProcess& s : sentinels_) s.stop(kStopTimeout);
    for (const std::string& dir : sentinel_dirs_) {
      std::error_code ec;
      std::filesystem::remove_all(dir, ec);
    }
    throw;
  }
}

void RedisSentinelGroup::wait_formed() {
  const auto deadline = Clock::now() + kFormTimeout;
  for (int i = 0; i < 3; ++i) {
    const std::string replicas = std::string("SENTINEL replicas ") + kName;
    const std::string others = std::string("SENTINEL sentinels ") + kName;
    while (entries(sentinel_hosts_[i], sentinel_ports_[i], replicas.c_str()) < 2 ||
           entries(sentinel_hosts_[i], sentinel_ports_[i], others.c_str()) < 2) {
      if (Clock::now() >= deadline) {
        throw TargetFailure(
            "the sentinels did not find both replicas and each other within 30 s "
            "(sentinel " +
            std::to_string(i + 1) + "); its log:\n" + logs_tail(sentinel_dirs_[i], 10));
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
  }
}

RedisSentinelGroup::~RedisSentinelGroup() {
  for (int i = 0; i < 3; ++i) {
    sentinels_[i].stop(kStopTimeout);
    std::error_code ec;
    if (!sentinel_dirs_[i].empty()) std::filesystem::remove_all(sentinel_dirs_[i], ec);
  }
}

std::string RedisSentinelGroup::url() const {
  std::string out = "redis-sentinel://";
  for (int i = 0; i < 3; ++i) {
    out += (i == 0 ? "" : ",") + sentinel_hosts_[i] + ":" + std::to_string(sentinel_ports_[i]);
  }
  return out + "/" + kName;
}

int RedisSentinelGroup::primary() const {
  for (int s = 0; s < 3; ++s) {
    if (const int p = primary_named_by(s); p >= 0) return p;
  }
  return -1;
}

int RedisSentinelGroup::primary_named_by(int s) const {
  const std::string command = std::string("SENTINEL get-master-addr-by-name ") + kName;
  const auto at = static_cast<std::size_t>(s);
  auto r = ask(sentinel_hosts_.at(at), sentinel_ports_.at(at), command.c_str());
  if (!r || r->type != REDIS_REPLY_ARRAY || r->elements != 2) return -1;
  const std::string host = r->element[0]->str;
  const int primary_port = std::atoi(r->element[1]->str);
  for (int i = 0; i < 3; ++i) {
    if (nodes_[i]->host() == host && nodes_[i]->port() == primary_port) return i;
  }
  return -1;
}

}  // namespace conformance
