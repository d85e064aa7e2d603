// Raw probe of the Sentinel finding (CONFORMANCE.md, "Redis with Sentinel"): a primary,
// two replicas and three sentinels (conformance/redis_sentinel.h), driven by hiredis alone.
// Redis replicates asynchronously: the primary answers an XADD before any replica has it,
// so when the sentinels promote a replica, what the old primary acknowledged and had not
// passed on is gone, even with appendfsync always (the old primary's own AOF has it, and
// it is discarded when it comes back as a replica). Here the replicas are held back for a
// moment by hand (paused, their links closed), so the window is certain rather than lucky;
// then the same loss from a partition alone, the nodes in network namespaces.
#include <gtest/gtest.h>
#include <hiredis/hiredis.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <thread>

#include "conformance/net_namespaces.h"
#include "conformance/redis_sentinel.h"

namespace conformance {
namespace {

long long xlen(int port, const std::string& host = "127.0.0.1") {
  redisContext* c = redisConnect(host.c_str(), port);
  if (c == nullptr || c->err != 0) {
    if (c != nullptr) redisFree(c);
    return -1;
  }
  auto* r = static_cast<redisReply*>(redisCommand(c, "XLEN k"));
  const long long n = r != nullptr && r->type == REDIS_REPLY_INTEGER ? r->integer : -1;
  if (r != nullptr) freeReplyObject(r);
  redisFree(c);
  return n;
}

// XADDs n entries to the server at port; returns how many it acknowledged.
int xadd(int port, int n, const std::string& host = "127.0.0.1") {
  const timeval second{1, 0};
  redisContext* c = redisConnectWithTimeout(host.c_str(), port, second);
  if (c != nullptr && c->err == 0) redisSetTimeout(c, second);
  int acked = 0;
  for (int i = 0; c != nullptr && c->err == 0 && i < n; ++i) {
    auto* r = static_cast<redisReply*>(redisCommand(c, "XADD k * f v%d", i));
    if (r != nullptr && r->type == REDIS_REPLY_STRING) ++acked;
    if (r != nullptr) freeReplyObject(r);
  }
  if (c != nullptr) redisFree(c);
  return acked;
}

TEST(RedisSentinelFailover, AcknowledgedXaddsNotYetReplicatedAreLostWhenAReplicaTakesOver) {
  RedisSentinelGroup group(RedisServerOptions::Fsync::kAlways);
  ASSERT_EQ(group.primary(), 0);
  const int replicated = xadd(group.node(0).port(), 10);
  ASSERT_EQ(replicated, 10);
  // Both replicas have the first ten before the primary goes on alone.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while ((xlen(group.node(1).port()) != 10 || xlen(group.node(2).port()) != 10) &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_EQ(xlen(group.node(1).port()), 10);
  // The replicas hear nothing for a moment (paused, their links closed by the primary so
  // nothing waits for them in a socket), the primary acknowledges 100 more, then dies.
  group.node(1).pause();
  group.node(2).pause();
  {
    redisContext* c = redisConnect("127.0.0.1", group.node(0).port());
    ASSERT_TRUE(c != nullptr && c->err == 0);
    auto* r = static_cast<redisReply*>(redisCommand(c, "CLIENT KILL TYPE replica"));
    ASSERT_TRUE(r != nullptr && r->type == REDIS_REPLY_INTEGER && r->integer == 2);
    freeReplyObject(r);
    redisFree(c);
  }
  const int alone = xadd(group.node(0).port(), 100);
  group.node(0).kill9();
  group.node(1).resume();
  group.node(2).resume();
  ASSERT_EQ(alone, 100);
  // The sentinels promote a replica (down after 1 s, then an election).
  const auto failover = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  int primary = 0;
  while ((primary = group.primary()) <= 0 && std::chrono::steady_clock::now() < failover) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_GT(primary, 0) << "no failover within 30 s";
  EXPECT_EQ(xlen(group.node(primary).port()), 10)
      << "the new primary has what the old one acknowledged alone";
  // The old primary comes back with all 110 in its AOF, and is made a replica of the new
  // one: its copy is replaced, the 100 are gone everywhere.
  group.node(0).restart();
  const auto rejoin = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (xlen(group.node(0).port()) != 10 && std::chrono::steady_clock::now() < rejoin) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_EQ(xlen(group.node(0).port()), 10) << "the old primary kept what it acknowledged alone";
}

// The partition Jepsen made of Redis: the primary, with the sentinel beside it, cut off
// from both replicas and the other two sentinels, while a client still reaches it. The
// majority side promotes a replica; the old primary, which cannot know, acknowledges XADDs
// all the while, and when the partition heals the sentinels make it a replica of the new
// primary, which replaces its copy: what it acknowledged alone is gone everywhere. Nothing
// is paused or killed here: the partition alone does it.
TEST(RedisSentinelPartition, XaddsAnIsolatedPrimaryAcknowledgedAreLostWhenThePartitionHeals) {
  if (const std::string why = net_namespaces_unavailable(); !why.empty()) GTEST_SKIP() << why;
  NetNamespaces net(3);
  RedisSentinelGroup group(RedisServerOptions::Fsync::kAlways, &net);
  ASSERT_EQ(group.primary(), 0);
  RedisServer& old = group.node(0);
  ASSERT_EQ(xadd(old.port(), 10, old.host()), 10);
  const auto replicated = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (xlen(group.node(1).port(), group.node(1).host()) != 10 &&
         std::chrono::steady_clock::now() < replicated) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_EQ(xlen(group.node(1).port(), group.node(1).host()), 10);
  net.cut(0, 1);
  net.cut(0, 2);
  // The majority's sentinels promote a replica (down after 1 s, then an election); the old
  // primary keeps answering the client, which is on its side.
  int alone = 0;
  int promoted = -1;
  const auto failover = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (std::chrono::steady_clock::now() < failover) {
    alone += xadd(old.port(), 10, old.host());
    promoted = group.primary_named_by(1);
    if (promoted > 0 && group.primary_named_by(2) == promoted) break;
  }
  ASSERT_GT(promoted, 0) << "the majority promoted no replica within 30 s";
  alone += xadd(old.port(), 10, old.host());
  EXPECT_GT(alone, 0) << "the isolated primary acknowledged nothing";
  RedisServer& now = group.node(promoted);
  const long long kept = xlen(now.port(), now.host());
  EXPECT_EQ(kept, 10) << "the new primary has what the old one acknowledged alone";
  net.heal_all();
  // The sentinels reach the old primary again and make it a replica of the new one.
  const auto rejoin = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (xlen(old.port(), old.host()) != kept && std::chrono::steady_clock::now() < rejoin) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_EQ(xlen(old.port(), old.host()), kept)
      << "the old primary kept the " << alone << " XADDs it acknowledged alone";
  EXPECT_EQ(xlen(now.port(), now.host()), kept);
  std::printf("the isolated primary acknowledged %d XADDs; %lld entries kept\n", alone, kept);
}

}  // namespace
}  // namespace conformance
