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
#include "conformance/redis_server.h"

namespace conformance {

/// Starts the three servers (AOF with `fsync`) and the three sentinels (down after 1000 ms,
/// failover timeout 5 s) and waits (at most ~30 s) until every sentinel names the primary
/// and knows both replicas and the other two sentinels; throws TargetFailure (one line and
/// a log's tail) otherwise. The binary is redis-sentinel on PATH or /usr/bin (apt-get
/// install -y redis-sentinel). The destructor stops the sentinels, then the servers, and
/// removes their directories; a killed tool's watchdogs do the same. Not thread-safe.
class RedisSentinelGroup {
 public:
  explicit RedisSentinelGroup(RedisServerOptions::Fsync fsync);
  ~RedisSentinelGroup();
  RedisSentinelGroup(const RedisSentinelGroup&) = delete;
  RedisSentinelGroup& operator=(const RedisSentinelGroup&) = delete;

  /// "redis-sentinel://127.0.0.1:P1,127.0.0.1:P2,127.0.0.1:P3/aloc".
  [[nodiscard]] std::string url() const;
  /// Server i (0-2; 0 is the first primary).
  [[nodiscard]] RedisServer& node(int i) { return *nodes_.at(static_cast<std::size_t>(i)); }
  /// The server the first sentinel that answers names as primary; -1 if none answers.
  /// Throws nothing.
  [[nodiscard]] int primary() const;

 private:
  // Waits until every sentinel knows both replicas and the other two sentinels.
  void wait_formed();

  std::array<std::unique_ptr<RedisServer>, 3> nodes_;
  std::array<int, 3> sentinel_ports_{};
  std::array<std::string, 3> sentinel_dirs_;
  std::array<LocalProcess, 3> sentinels_;
};

}  // namespace conformance
