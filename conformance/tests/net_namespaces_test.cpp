// Partitions on one machine: a cut between two ends drops their traffic both ways while
// every other link still carries it; heal restores it; the namespaces go with the fixture,
// and with its owner when that is killed.
#include "conformance/net_namespaces.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>

#include "conformance/nats_server.h"

namespace conformance {
namespace {

// Whether a TCP connection from namespace `from` (kClient: the tool's own) reaches
// address:4222 within about a second.
bool reaches(const NetNamespaces& net, int from, const std::string& address) {
  std::string command;
  if (from != NetNamespaces::kClient) {
    for (const std::string& part : net.exec_prefix(from)) command += part + " ";
  }
  command += "timeout 1 bash -c '</dev/tcp/" + address + "/4222' 2>/dev/null";
  return std::system(command.c_str()) == 0;
}

// The namespace names `ip netns list` shows that start with prefix.
int namespaces_named(const std::string& prefix) {
  const std::string command = "ip netns list | grep -c '^" + prefix + "' > /tmp/aloc-netns-count";
  (void)std::system(command.c_str());
  FILE* f = std::fopen("/tmp/aloc-netns-count", "r");
  int n = 0;
  if (f != nullptr) {
    if (std::fscanf(f, "%d", &n) != 1) n = 0;
    std::fclose(f);
  }
  std::remove("/tmp/aloc-netns-count");
  return n;
}

TEST(NetNamespaces, ACutDropsTrafficBothWaysAndHealRestoresIt) {
  if (const std::string why = net_namespaces_unavailable(); !why.empty()) GTEST_SKIP() << why;
  NetNamespaces net(3);
  // A server in each of nodes 0 and 1, listening on its namespace's address.
  NatsServerOptions o0, o1;
  o0.port = o1.port = 4222;
  o0.host = net.address(0);
  o1.host = net.address(1);
  o0.exec_prefix = net.exec_prefix(0);
  o1.exec_prefix = net.exec_prefix(1);
  NatsServer s0(o0), s1(o1);
  EXPECT_TRUE(reaches(net, NetNamespaces::kClient, net.address(0)));
  EXPECT_TRUE(reaches(net, 2, net.address(0)));
  EXPECT_TRUE(reaches(net, 1, net.address(0)));
  net.cut(1, 0);
  EXPECT_FALSE(reaches(net, 1, net.address(0)));
  EXPECT_FALSE(reaches(net, 0, net.address(1)));
  EXPECT_TRUE(reaches(net, 2, net.address(0))) << "a cut of 0-1 cut 2 off too";
  EXPECT_TRUE(reaches(net, 2, net.address(1)));
  EXPECT_TRUE(reaches(net, NetNamespaces::kClient, net.address(1)));
  net.cut(NetNamespaces::kClient, 0);
  EXPECT_FALSE(reaches(net, NetNamespaces::kClient, net.address(0)));
  EXPECT_TRUE(reaches(net, 2, net.address(0)));
  net.heal_all();
  EXPECT_TRUE(net.cuts().empty());
  EXPECT_TRUE(reaches(net, 1, net.address(0)));
  EXPECT_TRUE(reaches(net, 0, net.address(1)));
  EXPECT_TRUE(reaches(net, NetNamespaces::kClient, net.address(0)));
}

TEST(NetNamespaces, TheyGoWithTheFixtureAndWithAKilledOwner) {
  if (const std::string why = net_namespaces_unavailable(); !why.empty()) GTEST_SKIP() << why;
  const std::string mine = "al" + std::to_string(::getpid()) + "-";
  {
    NetNamespaces net(2);
    EXPECT_EQ(namespaces_named(mine), 3);
  }
  EXPECT_EQ(namespaces_named(mine), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    NetNamespaces net(2);  // never destroyed: the owner dies by SIGKILL
    ::raise(SIGKILL);
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  const std::string theirs = "al" + std::to_string(child) + "-";
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (namespaces_named(theirs) > 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_EQ(namespaces_named(theirs), 0) << "the killed owner's namespaces are still there";
}

}  // namespace
}  // namespace conformance
