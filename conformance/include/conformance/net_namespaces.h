// Partitions made on one machine: each server node in a network namespace of its own, all
// joined by veth links to a bridge in a hub namespace, and the tool joined to the same
// bridge by one more link, on a private /24 (10.77.X.0, X from the tool's pid). A cut
// between two ends is a blackhole route on each side: their packets are dropped, nothing
// else is touched. Traffic goes only to addresses of these namespaces.
#pragma once

#include <set>
#include <string>
#include <utility>
#include <vector>

#include "conformance/local_process.h"

namespace conformance {

/// Why network namespaces cannot be made here, in one line ("" if they can): not root, or
/// no `ip` (iproute2). Throws nothing.
std::string net_namespaces_unavailable();

/// `nodes` namespaces on a private bridge. Throws TargetFailure (the `ip` command that
/// failed and its message) if they cannot be made; what was made is removed. The
/// destructor removes the namespaces and the tool's link; if the tool is killed, a
/// watchdog process does. Not thread-safe.
class NetNamespaces {
 public:
  /// The tool's own end, for cut().
  static constexpr int kClient = -1;

  explicit NetNamespaces(int nodes);
  ~NetNamespaces();
  NetNamespaces(const NetNamespaces&) = delete;
  NetNamespaces& operator=(const NetNamespaces&) = delete;

  /// Node i's address ("10.77.X.(i+1)"), or the tool's for kClient.
  [[nodiscard]] std::string address(int i) const;
  /// What runs a program in node i's namespace: {"ip", "netns", "exec", NAME}.
  [[nodiscard]] std::vector<std::string> exec_prefix(int i) const;
  /// Cuts a from b both ways (nodes or kClient). Throws TargetFailure.
  void cut(int a, int b);
  /// Heals every cut. Throws TargetFailure.
  void heal_all();
  /// The cuts now, as (a, b) pairs with a < b.
  [[nodiscard]] const std::set<std::pair<int, int>>& cuts() const { return cuts_; }

 private:
  // Runs `ip ARGS...`; throws TargetFailure with its output if it fails.
  void ip(const std::vector<std::string>& args) const;
  [[nodiscard]] std::string name(int i) const;
  // Adds (add) or removes a blackhole route to `to`'s address in `from`'s namespace.
  void blackhole(int from, int to, bool add);
  void remove_all() noexcept;

  int nodes_ = 0;
  int subnet_ = 0;
  std::string prefix_;
  std::string ip_;
  std::set<std::pair<int, int>> cuts_;
  LocalProcess holder_;  // its watchdog removes everything if the tool dies
};

}  // namespace conformance
