// A three-node NATS JetStream cluster for the conformance kit: one nats-server process per
// node on loopback ports, joined by cluster routes, each with its own store directory.
#pragma once

#include <array>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "conformance/nats_server.h"
#include "conformance/net_namespaces.h"

struct __jsCtx;  // libnats' JetStream context (nats/nats.h)

namespace conformance {

/// Starts three nodes (`--name nI --cluster_name aloc --cluster nats://127.0.0.1:CPORT
/// --routes` to the other two) and waits (at most ~20 s) until JetStream answers on every
/// node and places a three-replica stream; throws TargetFailure (one line and the logs'
/// tails) otherwise. Node i keeps its store in store_dirs[i] ("" for its own directory) and,
/// with `net`, runs in namespace i at its address (ports 4222 and 6222), else on loopback
/// ports. The destructor stops every node and removes their directories. Not thread-safe.
class NatsCluster {
 public:
  explicit NatsCluster(const std::array<std::string, 3>& store_dirs = {},
                       const NetNamespaces* net = nullptr);
  NatsCluster(const NatsCluster&) = delete;
  NatsCluster& operator=(const NatsCluster&) = delete;

  /// Every node's client URL, comma-separated (what JetStreamTarget takes).
  [[nodiscard]] std::string urls() const;
  /// Node i (0-2).
  [[nodiscard]] NatsServer& node(int i) { return *nodes_.at(static_cast<std::size_t>(i)); }
  /// The node whose server name is `name` ("n1".."n3"); -1 if none.
  [[nodiscard]] static int index_of(const std::string& name);
  /// The index of stream's leader as a running node reports it: a running node other than
  /// `other_than`, waited for (an election) up to `within`; -1 if none by then. Throws
  /// nothing.
  [[nodiscard]] int leader_of(const std::string& stream, int other_than = -1,
                              std::chrono::milliseconds within = std::chrono::seconds(30));
  /// Waits up to `within` until the stream's leader reports node as a current replica (or
  /// node leads it): a restarted node has caught up. Throws nothing.
  [[nodiscard]] bool wait_current(const std::string& stream, int node,
                                  std::chrono::milliseconds within = std::chrono::seconds(60));
  /// A membership change: asks the cluster to remove node from stream's peers
  /// ($JS.API.STREAM.PEER.REMOVE), then waits (at most `within`) until the stream's leader
  /// lists two peers without it. Returns the server's raw answer (2.9.10 answers "peer remap
  /// failed" on three servers, having removed the peer: there is no fourth to move it to),
  /// "" if none came. Throws TargetFailure if the peer is still there by then.
  std::string remove_replica(const std::string& stream, int node,
                             std::chrono::milliseconds within = std::chrono::seconds(30));
  /// The change undone: scales stream to two replicas and back to three (the server places a
  /// peer only when the config's Replicas changes), then waits (at most `within`) until node
  /// is a current replica again. Throws TargetFailure if a scale is refused or node does not
  /// catch up by then.
  void add_replica_back(const std::string& stream, int node,
                        std::chrono::milliseconds within = std::chrono::seconds(60));
  /// The names of stream's peers (leader and replicas) as its leader reports them; empty if
  /// no node answers. Throws nothing.
  [[nodiscard]] std::vector<std::string> peers_of(const std::string& stream);
  /// The index of the node leading consumer `consumer` of stream, waited for up to
  /// `within`; -1 if none by then. Throws nothing.
  [[nodiscard]] int consumer_leader(const std::string& stream, const std::string& consumer,
                                    std::chrono::milliseconds within = std::chrono::seconds(60));

 private:
  // The index of the node a running node names as leader (leader_named asks one node's
  // JetStream; "" if it does not know), not `other_than` and running itself, waited for up
  // to `within`; -1 if none.
  int leader_among_live(const std::function<std::string(__jsCtx*)>& leader_named, int other_than,
                        std::chrono::milliseconds within);

  std::array<std::unique_ptr<NatsServer>, 3> nodes_;
};

}  // namespace conformance
