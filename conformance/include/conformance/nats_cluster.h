// A three-node NATS JetStream cluster for the conformance kit: one nats-server process per
// node on loopback ports, joined by cluster routes, each with its own store directory.
#pragma once

#include <array>
#include <memory>
#include <string>

#include "conformance/nats_server.h"

namespace conformance {

/// Starts three nodes (`--name nI --cluster_name aloc --cluster nats://127.0.0.1:CPORT
/// --routes` to the other two) and waits (at most ~20 s) until JetStream answers on every
/// node and places a three-replica stream; throws TargetFailure (one line and the logs'
/// tails) otherwise. The destructor
/// stops every node and removes their directories. Not thread-safe.
class NatsCluster {
 public:
  NatsCluster();
  NatsCluster(const NatsCluster&) = delete;
  NatsCluster& operator=(const NatsCluster&) = delete;

  /// Every node's client URL, comma-separated (what JetStreamTarget takes).
  [[nodiscard]] std::string urls() const;
  /// Node i (0-2).
  [[nodiscard]] NatsServer& node(int i) { return *nodes_.at(static_cast<std::size_t>(i)); }
  /// The node whose server name is `name` ("n1".."n3"); -1 if none.
  [[nodiscard]] static int index_of(const std::string& name);
  /// The index of stream's leader as a running node reports it, -1 if no node knows
  /// (within ~2 s). Throws nothing.
  [[nodiscard]] int leader_of(const std::string& stream);

 private:
  std::array<std::unique_ptr<NatsServer>, 3> nodes_;
};

}  // namespace conformance
