// Raw probe of the membership fault (CONFORMANCE.md, "The nemesis"): a three-node
// nats-server 2.9.10 cluster (the kit's fixture starts the processes), driven by libnats
// alone. A stream replica is removed with the engine's own request
// ($JS.API.STREAM.PEER.REMOVE.<stream>) and added back by scaling the stream down and up
// again (its config's Replicas), as the fault run does; what the engine acknowledged
// before, during and after is read back from the replica that was removed and came back.
#include <gtest/gtest.h>
#include <nats/nats.h>

#include <chrono>
#include <set>
#include <string>
#include <thread>

#include "conformance/nats_cluster.h"

namespace conformance {
namespace {

constexpr const char* kStream = "members";

// A libnats connection and JetStream context to one node (the cluster routes API requests).
class Client {
 public:
  explicit Client(const std::string& url) {
    natsOptions* o = nullptr;
    ok_ = natsOptions_Create(&o) == NATS_OK && natsOptions_SetURL(o, url.c_str()) == NATS_OK &&
          natsOptions_SetTimeout(o, 5000) == NATS_OK && natsConnection_Connect(&nc_, o) == NATS_OK;
    natsOptions_Destroy(o);
    jsOptions jo;
    jsOptions_Init(&jo);
    jo.Wait = 10000;
    ok_ = ok_ && natsConnection_JetStream(&js_, nc_, &jo) == NATS_OK;
  }
  ~Client() {
    jsCtx_Destroy(js_);
    natsConnection_Destroy(nc_);
  }
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  [[nodiscard]] bool ok() const { return ok_; }
  [[nodiscard]] jsCtx* js() const { return js_; }

  // The server's raw answer to a request, "" if none came within 10 s.
  std::string request(const std::string& subject, const std::string& body) {
    natsMsg* reply = nullptr;
    std::string out;
    if (natsConnection_RequestString(&reply, nc_, subject.c_str(), body.c_str(), 10000) ==
        NATS_OK) {
      out.assign(natsMsg_GetData(reply), static_cast<std::size_t>(natsMsg_GetDataLength(reply)));
    }
    natsMsg_Destroy(reply);
    return out;
  }

  // Publishes values [from, to), each answered by a PubAck; returns how many were.
  int publish(int from, int to) {
    int acked = 0;
    for (int v = from; v < to; ++v) {
      const std::string data = std::to_string(v);
      jsPubAck* ack = nullptr;
      if (js_Publish(&ack, js_, kStream, data.data(), static_cast<int>(data.size()), nullptr,
                     nullptr) == NATS_OK) {
        ++acked;
      }
      jsPubAck_Destroy(ack);
    }
    return acked;
  }

  // The stream's leader and replicas by name, and its message count; false if no answer.
  bool info(std::string& leader, std::set<std::string>& peers, std::uint64_t& messages,
            int& replicas) {
    jsStreamInfo* si = nullptr;
    const bool got = js_GetStreamInfo(&si, js_, kStream, nullptr, nullptr) == NATS_OK &&
                     si != nullptr && si->Cluster != nullptr;
    if (got) {
      leader = si->Cluster->Leader != nullptr ? si->Cluster->Leader : "";
      peers.clear();
      if (!leader.empty()) peers.insert(leader);
      for (int i = 0; i < si->Cluster->ReplicasLen; ++i) {
        if (si->Cluster->Replicas[i]->Name != nullptr) peers.insert(si->Cluster->Replicas[i]->Name);
      }
      messages = si->State.Msgs;
      replicas = static_cast<int>(si->Config->Replicas);
    }
    jsStreamInfo_Destroy(si);
    return got;
  }

  // Sets the stream's Replicas; true if the server accepted it.
  bool scale(int replicas) {
    jsStreamInfo* si = nullptr;
    if (js_GetStreamInfo(&si, js_, kStream, nullptr, nullptr) != NATS_OK || si == nullptr) {
      return false;
    }
    si->Config->Replicas = replicas;
    jsStreamInfo* updated = nullptr;
    const bool ok = js_UpdateStream(&updated, js_, si->Config, nullptr, nullptr) == NATS_OK;
    jsStreamInfo_Destroy(updated);
    jsStreamInfo_Destroy(si);
    return ok;
  }

 private:
  natsConnection* nc_ = nullptr;
  jsCtx* js_ = nullptr;
  bool ok_ = false;
};

// Waits (at most 60 s) until `holds` is true of the stream's info.
template <typename Pred>
bool wait_for(Client& c, Pred holds) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < deadline) {
    std::string leader;
    std::set<std::string> peers;
    std::uint64_t messages = 0;
    int replicas = 0;
    if (c.info(leader, peers, messages, replicas) && holds(leader, peers, messages)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return false;
}

// SPEC's at-least-once reading of a membership change: with all three servers up, a
// replica removed from an R3 stream (there is no fourth server to move it to) and added
// back keeps every acknowledged message, and the replica that came back holds them all.
// The engine's answers on the way are checked as raw facts: 2.9.10 answers the removal
// with an error ("peer remap failed", there is no spare server) and removes the peer all
// the same, and the stream's config still says three replicas.
TEST(JetStreamMembership, AReplicaRemovedAndAddedBackKeepsEveryAcknowledgedPublish) {
  NatsCluster cluster;
  Client c(cluster.node(0).url());  // n1 stays up throughout
  ASSERT_TRUE(c.ok());
  const char* subjects[] = {kStream};
  jsStreamConfig sc;
  jsStreamConfig_Init(&sc);
  sc.Name = kStream;
  sc.Subjects = subjects;
  sc.SubjectsLen = 1;
  sc.Storage = js_FileStorage;
  sc.Replicas = 3;
  ASSERT_EQ(js_AddStream(nullptr, c.js(), &sc, nullptr, nullptr), NATS_OK);
  ASSERT_EQ(c.publish(0, 100), 100);

  const int leader = cluster.leader_of(kStream);
  ASSERT_GE(leader, 0);
  const std::string removed = "n" + std::to_string(leader + 1);
  const std::string answer = c.request(std::string("$JS.API.STREAM.PEER.REMOVE.") + kStream,
                                       "{\"peer\":\"" + removed + "\"}");
  EXPECT_NE(answer.find("peer remap failed"), std::string::npos) << answer;
  EXPECT_EQ(answer.find("\"success\":true"), std::string::npos) << answer;
  ASSERT_TRUE(
      wait_for(c,
               [&](const std::string& l, const std::set<std::string>& peers, std::uint64_t) {
                 return !l.empty() && peers.size() == 2 && !peers.contains(removed);
               }))
      << "the answer was an error, and the peer was not removed either: " << answer;
  std::string l;
  std::set<std::string> peers;
  std::uint64_t messages = 0;
  int replicas = 0;
  ASSERT_TRUE(c.info(l, peers, messages, replicas));
  EXPECT_EQ(replicas, 3) << "the config keeps its three replicas on two peers";
  EXPECT_EQ(c.publish(100, 200), 100) << "two of two peers are a quorum";

  // Back: the config's Replicas must change for the server to place a peer again.
  ASSERT_TRUE(c.scale(2));
  ASSERT_TRUE(c.scale(3));
  const int back = NatsCluster::index_of(removed);
  ASSERT_TRUE(cluster.wait_current(kStream, back)) << removed << " never caught up";
  EXPECT_EQ(c.publish(200, 300), 100);
  ASSERT_TRUE(wait_for(c, [&](const std::string&, const std::set<std::string>& p, std::uint64_t m) {
    return p.size() == 3 && m == 300;
  }));

  // Read back from the replica that came back: leadership moved to it, then each sequence.
  bool leads = false;
  for (int i = 0; i < 30 && !leads; ++i) {
    leads = cluster.leader_of(kStream) == back;
    if (!leads) {
      (void)c.request(std::string("$JS.API.STREAM.LEADER.STEPDOWN.") + kStream, "");
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
      leads = cluster.leader_of(kStream) == back;
    }
  }
  ASSERT_TRUE(leads) << removed << " never led the stream again";
  for (std::uint64_t seq = 1; seq <= 300; ++seq) {
    natsMsg* m = nullptr;
    ASSERT_EQ(js_GetMsg(&m, c.js(), kStream, seq, nullptr, nullptr), NATS_OK)
        << "sequence " << seq << " is gone from " << removed;
    EXPECT_EQ(std::string(natsMsg_GetData(m), static_cast<std::size_t>(natsMsg_GetDataLength(m))),
              std::to_string(seq - 1));
    natsMsg_Destroy(m);
  }
}

}  // namespace
}  // namespace conformance
