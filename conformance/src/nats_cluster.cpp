// The three-node JetStream cluster fixture (conformance/nats_cluster.h).
#include "conformance/nats_cluster.h"

#include <nats/nats.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <functional>
#include <thread>
#include <vector>

#include "conformance/target.h"
#include "jetstream_probe.h"

namespace conformance {

namespace {

// Generous: on 2 busy cores (a sanitizer build's tests running beside it) a meta leader
// took more than 20 s to place the first three-replica stream; a healthy cluster is ready in
// about one.
constexpr auto kClusterStartTimeout = std::chrono::seconds(60);

// Whether the cluster places a three-replica stream now: JetStream answers on every node
// before the meta leader knows all its peers, and a stream made then fails with "no
// suitable peers for placement" (JetStream error 10005). Makes and deletes a probe stream.
bool places_r3(const std::string& url) {
  const JetStreamProbe probe(url, 2000);
  if (!probe.ok()) return false;
  const char* subjects[] = {"aloc_probe"};
  jsStreamConfig cfg;
  jsStreamConfig_Init(&cfg);
  cfg.Name = "aloc_probe";
  cfg.Subjects = subjects;
  cfg.SubjectsLen = 1;
  cfg.Storage = js_MemoryStorage;
  cfg.Replicas = 3;
  jsStreamInfo* info = nullptr;
  natsStatus s = js_AddStream(&info, probe.js(), &cfg, nullptr, nullptr);
  jsStreamInfo_Destroy(info);
  if (s == NATS_OK) s = js_DeleteStream(probe.js(), "aloc_probe", nullptr, nullptr);
  return s == NATS_OK;
}

}  // namespace

NatsCluster::NatsCluster(const std::array<std::string, 3>& store_dirs, const NetNamespaces* net) {
  std::array<int, 3> client{}, route{};
  std::array<std::string, 3> host;
  for (int i = 0; i < 3; ++i) {
    // In namespaces of their own every node has every port to itself.
    client[i] = net != nullptr ? 4222 : free_loopback_port();
    route[i] = net != nullptr ? 6222 : free_loopback_port();
    host[i] = net != nullptr ? net->address(i) : "127.0.0.1";
  }
  for (int i = 0; i < 3; ++i) {
    std::string routes;
    for (int j = 0; j < 3; ++j) {
      if (j == i) continue;
      routes += std::string(routes.empty() ? "" : ",") + "nats://" + host[j] + ":" +
                std::to_string(route[j]);
    }
    NatsServerOptions o;
    o.port = client[i];
    o.host = host[i];
    if (net != nullptr) o.exec_prefix = net->exec_prefix(i);
    o.wait_for_jetstream = false;  // no quorum until two nodes run
    o.store_dir = store_dirs[i];
    o.extra_args = {"--name",         "n" + std::to_string(i + 1),
                    "--cluster_name", "aloc",
                    "--cluster",      "nats://" + host[i] + ":" + std::to_string(route[i]),
                    "--routes",       routes};
    nodes_[i] = std::make_unique<NatsServer>(o);
  }
  const auto deadline = std::chrono::steady_clock::now() + kClusterStartTimeout;
  for (int i = 0; i < 3; ++i) {
    while (!jetstream_answers(nodes_[i]->url())) {
      if (std::chrono::steady_clock::now() >= deadline) {
        throw TargetFailure("the JetStream cluster did not form within 60 s (node n" +
                            std::to_string(i + 1) + " at " + nodes_[i]->url() + "); its log:\n" +
                            nodes_[i]->log_tail(10));
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }
  while (!places_r3(nodes_[0]->url())) {
    if (std::chrono::steady_clock::now() >= deadline) {
      throw TargetFailure(
          "the JetStream cluster formed but placed no three-replica stream within 60 s; n1's "
          "log:\n" +
          nodes_[0]->log_tail(10));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

std::string NatsCluster::urls() const {
  std::string out;
  for (const auto& n : nodes_) out += (out.empty() ? "" : ",") + n->url();
  return out;
}

int NatsCluster::index_of(const std::string& name) {
  for (int i = 0; i < 3; ++i) {
    if (name == "n" + std::to_string(i + 1)) return i;
  }
  return -1;
}

int NatsCluster::leader_among_live(const std::function<std::string(jsCtx*)>& leader_named,
                                   int other_than, std::chrono::milliseconds within) {
  const auto deadline = std::chrono::steady_clock::now() + within;
  do {
    for (auto& n : nodes_) {
      if (!n->alive()) continue;
      const JetStreamProbe probe(n->url(), 500);
      const int leader = probe.ok() ? index_of(leader_named(probe.js())) : -1;
      if (leader >= 0 && leader != other_than && nodes_[leader]->alive()) return leader;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  } while (std::chrono::steady_clock::now() < deadline);
  return -1;
}

int NatsCluster::leader_of(const std::string& stream, int other_than,
                           std::chrono::milliseconds within) {
  return leader_among_live(
      [&](jsCtx* js) {
        jsStreamInfo* si = nullptr;
        std::string leader;
        if (js_GetStreamInfo(&si, js, stream.c_str(), nullptr, nullptr) == NATS_OK &&
            si != nullptr && si->Cluster != nullptr && si->Cluster->Leader != nullptr) {
          leader = si->Cluster->Leader;
        }
        jsStreamInfo_Destroy(si);
        return leader;
      },
      other_than, within);
}

bool NatsCluster::wait_current(const std::string& stream, int node,
                               std::chrono::milliseconds within) {
  const auto deadline = std::chrono::steady_clock::now() + within;
  const std::string name = "n" + std::to_string(node + 1);
  do {
    const int leader = leader_of(stream, -1, std::chrono::milliseconds(0));
    if (leader == node) return true;
    if (leader >= 0) {
      const JetStreamProbe probe(nodes_[leader]->url(), 500);
      jsStreamInfo* si = nullptr;
      bool current = false;
      if (probe.ok() &&
          js_GetStreamInfo(&si, probe.js(), stream.c_str(), nullptr, nullptr) == NATS_OK &&
          si != nullptr && si->Cluster != nullptr) {
        for (int i = 0; i < si->Cluster->ReplicasLen; ++i) {
          const jsPeerInfo* peer = si->Cluster->Replicas[i];
          if (peer != nullptr && peer->Name != nullptr && name == peer->Name) {
            current = peer->Current && !peer->Offline;
          }
        }
      }
      jsStreamInfo_Destroy(si);
      if (current) return true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  } while (std::chrono::steady_clock::now() < deadline);
  return false;
}

std::vector<std::string> NatsCluster::peers_of(const std::string& stream) {
  for (auto& n : nodes_) {
    if (!n->alive()) continue;
    const JetStreamProbe probe(n->url(), 1000);
    jsStreamInfo* si = nullptr;
    std::vector<std::string> peers;
    if (probe.ok() &&
        js_GetStreamInfo(&si, probe.js(), stream.c_str(), nullptr, nullptr) == NATS_OK &&
        si != nullptr && si->Cluster != nullptr && si->Cluster->Leader != nullptr) {
      peers.emplace_back(si->Cluster->Leader);
      for (int i = 0; i < si->Cluster->ReplicasLen; ++i) {
        const char* name = si->Cluster->Replicas[i]->Name;
        if (name != nullptr) peers.emplace_back(name);
      }
    }
    jsStreamInfo_Destroy(si);
    if (!peers.empty()) return peers;
  }
  return {};
}

std::string NatsCluster::remove_replica(const std::string& stream, int node,
                                        std::chrono::milliseconds within) {
  const std::string name = "n" + std::to_string(node + 1);
  const auto deadline = std::chrono::steady_clock::now() + within;
  std::string answer;
  for (auto& n : nodes_) {
    if (!n->alive()) continue;
    const JetStreamProbe probe(n->url(), 5000);
    natsMsg* reply = nullptr;
    if (probe.ok() && natsConnection_RequestString(
                          &reply, probe.nc(), ("$JS.API.STREAM.PEER.REMOVE." + stream).c_str(),
                          ("{\"peer\":\"" + name + "\"}").c_str(), 5000) == NATS_OK) {
      answer.assign(natsMsg_GetData(reply), static_cast<std::size_t>(natsMsg_GetDataLength(reply)));
    }
    natsMsg_Destroy(reply);
    if (!answer.empty()) break;
  }
  do {
    const std::vector<std::string> peers = peers_of(stream);
    if (peers.size() == 2 && std::find(peers.begin(), peers.end(), name) == peers.end()) {
      return answer;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  } while (std::chrono::steady_clock::now() < deadline);
  throw TargetFailure("removing " + name + " from stream " + stream +
                      "'s peers: it is still one of them; the server answered: " +
                      (answer.empty() ? "nothing" : answer));
}

void NatsCluster::add_replica_back(const std::string& stream, int node,
                                   std::chrono::milliseconds within) {
  const auto deadline = std::chrono::steady_clock::now() + within;
  // Each scale is retried until the bound: a leader may be moving after the removal.
  for (const std::int64_t replicas : {2, 3}) {
    std::string why = "no node answered";
    while (true) {
      bool done = false;
      for (auto& n : nodes_) {
        if (!n->alive() || done) continue;
        const JetStreamProbe probe(n->url(), 5000);
        jsStreamInfo* si = nullptr;
        jsErrCode code = static_cast<jsErrCode>(0);
        if (probe.ok() &&
            js_GetStreamInfo(&si, probe.js(), stream.c_str(), nullptr, nullptr) == NATS_OK &&
            si != nullptr) {
          si->Config->Replicas = replicas;
          jsStreamInfo* updated = nullptr;
          const natsStatus s = js_UpdateStream(&updated, probe.js(), si->Config, nullptr, &code);
          done = s == NATS_OK;
          if (!done) {
            why = std::string(natsStatus_GetText(s)) + " (JetStream error " +
                  std::to_string(static_cast<int>(code)) + ")";
          }
          jsStreamInfo_Destroy(updated);
        }
        jsStreamInfo_Destroy(si);
      }
      if (done) break;
      if (std::chrono::steady_clock::now() >= deadline) {
        throw TargetFailure("scaling stream " + stream + " to " + std::to_string(replicas) +
                            " replicas was refused: " + why);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
  }
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      deadline - std::chrono::steady_clock::now());
  if (!wait_current(stream, node, std::max(left, std::chrono::milliseconds(0)))) {
    throw TargetFailure("n" + std::to_string(node + 1) + ", added back to stream " + stream +
                        ", did not catch up");
  }
}

int NatsCluster::consumer_leader(const std::string& stream, const std::string& consumer,
                                 std::chrono::milliseconds within) {
  return leader_among_live(
      [&](jsCtx* js) {
        jsConsumerInfo* ci = nullptr;
        std::string leader;
        if (js_GetConsumerInfo(&ci, js, stream.c_str(), consumer.c_str(), nullptr, nullptr) ==
                NATS_OK &&
            ci != nullptr && ci->Cluster != nullptr && ci->Cluster->Leader != nullptr) {
          leader = ci->Cluster->Leader;
        }
        jsConsumerInfo_Destroy(ci);
        return leader;
      },
      -1, within);
}

}  // namespace conformance
