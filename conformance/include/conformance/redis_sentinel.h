// A replicated Redis for the fault kit: a primary and two replicas (redis-server
// --replicaof) and three redis-sentinel processes watching them (quorum 2), each on a free
// loopback port with its own directory. A sentinel that finds the primary gone for a second
// fails over to a replica; clients find the primary through the sentinels
// (redis-sentinel:// URLs, conformance/redis_target.h).
#pragma once

#include <array>
#include <memory>
#include <string>

#include "conformance/local_process.h"
#include "conformance/net_namespaces.h"
#include "conformance/redis_server.h"

namespace conformance {

/// Starts the three servers (AOF with `fsync`) and the three sentinels (down after 1000 ms,
/// failover timeout 5 s) and waits (at most ~30 s) until every sentinel names the primary
/// and knows both replicas and the other two sentinels; throws TargetFailure (one line and
/// a log's tail) otherwise. With `net`, server i and sentinel i run in namespace i at its
/// address (ports 6379 and 26379), so a cut there parts a server from the others with its
/// sentinel; else all on loopback ports. The binary is redis-sentinel on PATH or /usr/bin
/// (apt-get install -y redis-sentinel). The destructor stops the sentinels, then the
/// servers, and removes their directories; a killed tool's watchdogs do the same. Not
/// thread-safe.
class RedisSentinelGroup {
 public:
  explicit RedisSentinelGroup(RedisServerOptions::Fsync fsync, const NetNamespaces* net = nullptr);
  ~RedisSentinelGroup();
  RedisSentinelGroup(const RedisSentinelGroup&) = delete;
  RedisSentinelGroup& operator=(const RedisSentinelGroup&) = delete;

  /// "redis-sentinel://HOST1:P1,HOST2:P2,HOST3:P3/aloc".
  [[nodiscard]] std::string url() const;
  /// Server i (0-2; 0 is the first primary).
  [[nodiscard]] RedisServer& node(int i) { return *nodes_.at(static_cast<std::size_t>(i)); }
  /// The server the first sentinel that answers names as primary; -1 if none answers.
  /// Throws nothing.
  [[nodiscard]] int primary() const;
  /// The server sentinel s (0-2, beside server s) names as primary; -1 if it does not
  /// answer. Throws nothing.
  [[nodiscard]] int primary_named_by(int s) const;

 private:
  // Waits until every sentinel knows both replicas and the other two sentinels.
  void wait_formed();

  std::array<std::unique_ptr<RedisServer>, 3> nodes_;
  std::array<int, 3> sentinel_ports_{};
  std::array<std::string, 3> sentinel_hosts_;
  std::array<std::string, 3> sentinel_dirs_;
  std::array<LocalProcess, 3> sentinels_;
};

}  // namespace conformance
