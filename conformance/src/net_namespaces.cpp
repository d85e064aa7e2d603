// Network namespaces for partitions (conformance/net_namespaces.h).
#include "conformance/net_namespaces.h"

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <memory>

#include "conformance/target.h"

namespace conformance {

namespace {

std::string ip_binary() {
  return find_server_binary("IP_BIN", "ip", {"/usr/sbin", "/sbin", "/usr/bin"});
}

}  // namespace

std::string net_namespaces_unavailable() {
  if (::geteuid() != 0) return "not root (partitions need network namespaces)";
  if (ip_binary().empty()) return "no `ip` (apt-get install -y iproute2)";
  if (::access("/var/run", W_OK) != 0)
    return "/var/run is not writable (ip netns keeps its names there)";
  return {};
}

NetNamespaces::NetNamespaces(int nodes) : nodes_(nodes) {
  if (const std::string why = net_namespaces_unavailable(); !why.empty()) throw TargetFailure(why);
  ip_ = ip_binary();
  const pid_t pid = ::getpid();
  subnet_ = 1 + static_cast<int>(pid % 250);
  prefix_ = "al" + std::to_string(pid);
  // The watchdog's cleanup: delete the namespaces (their links go with them) and the tool's
  // link; each step may find nothing to delete.
  std::string script;
  for (int i = 0; i < nodes_; ++i) script += ip_ + " netns del " + name(i) + " 2>/dev/null; ";
  script += ip_ + " netns del " + name(nodes_) + " 2>/dev/null; " + ip_ + " link del " + prefix_ +
            "c 2>/dev/null; true";
  if (const int err =
          holder_.spawn({"/bin/sleep", "infinity"}, "/dev/null", "", "", {"/bin/sh", "-c", script});
      err != 0) {
    throw TargetFailure("cannot start the namespaces' watchdog");
  }
  try {
    const std::string hub = name(nodes_);
    ip({"netns", "add", hub});
    ip({"-n", hub, "link", "add", "br0", "type", "bridge"});
    ip({"-n", hub, "link", "set", "br0", "up"});
    for (int i = -1; i < nodes_; ++i) {
      // Link i: its hub end on the bridge; its other end in node i's namespace, or (the
      // tool's link, i = -1) in the tool's.
      const std::string end = prefix_ + (i < 0 ? "c" : "n" + std::to_string(i));
      const std::string hub_end = prefix_ + (i < 0 ? "h" : "h" + std::to_string(i));
      ip({"link", "add", end, "type", "veth", "peer", "name", hub_end});
      ip({"link", "set", hub_end, "netns", hub});
      ip({"-n", hub, "link", "set", hub_end, "master", "br0"});
      ip({"-n", hub, "link", "set", hub_end, "up"});
      if (i < 0) {
        ip({"addr", "add", address(kClient) + "/24", "dev", end});
        ip({"link", "set", end, "up"});
      } else {
        ip({"netns", "add", name(i)});
        ip({"link", "set", end, "netns", name(i)});
        ip({"-n", name(i), "addr", "add", address(i) + "/24", "dev", end});
        ip({"-n", name(i), "link", "set", end, "up"});
        ip({"-n", name(i), "link", "set", "lo", "up"});
      }
    }
  } catch (...) {
    remove_all();
    holder_.kill9();
    throw;
  }
}

NetNamespaces::~NetNamespaces() {
  remove_all();
  holder_.kill9();  // its watchdog finds nothing left to delete
}

void NetNamespaces::remove_all() noexcept {
  for (int i = 0; i <= nodes_; ++i) {
    try {
      ip({"netns", "del", name(i)});
    } catch (const TargetFailure&) {
    }
  }
  try {
    ip({"link", "del", prefix_ + "c"});
  } catch (const TargetFailure&) {
  }
}

std::string NetNamespaces::name(int i) const {
  return prefix_ + (i == nodes_ ? "-hub" : "-n" + std::to_string(i));
}

std::string NetNamespaces::address(int i) const {
  return "10.77." + std::to_string(subnet_) + "." + std::to_string(i == kClient ? 100 : i + 1);
}

std::vector<std::string> NetNamespaces::exec_prefix(int i) const {
  return {ip_, "netns", "exec", name(i)};
}

void NetNamespaces::ip(const std::vector<std::string>& args) const {
  std::string command = ip_;
  for (const std::string& a : args) command += " '" + a + "'";
  command += " 2>&1";
  std::unique_ptr<FILE, int (*)(FILE*)> p(::popen(command.c_str(), "r"), ::pclose);
  if (!p) throw TargetFailure("cannot run " + command);
  std::string out;
  std::array<char, 256> buf{};
  while (std::fgets(buf.data(), buf.size(), p.get()) != nullptr) out += buf.data();
  const int status = ::pclose(p.release());
  if (status != 0) throw TargetFailure(command + " failed: " + out);
}

void NetNamespaces::blackhole(int from, int to, bool add) {
  std::vector<std::string> args;
  if (from != kClient) args = {"-n", name(from)};
  args.insert(args.end(), {"route", add ? "add" : "del", "blackhole", address(to) + "/32"});
  ip(args);
}

void NetNamespaces::cut(int a, int b) {
  const std::pair<int, int> key{std::min(a, b), std::max(a, b)};
  if (a == b || cuts_.contains(key)) return;
  blackhole(a, b, true);
  blackhole(b, a, true);
  cuts_.insert(key);
}

void NetNamespaces::heal_all() {
  for (const auto& [a, b] : cuts_) {
    blackhole(a, b, false);
    blackhole(b, a, false);
  }
  cuts_.clear();
}

}  // namespace conformance
