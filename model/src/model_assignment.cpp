// R30: whoever keeps what: a balanced assignment gives n % m members n / m + 1 partitions
// and the rest n / m; a member keeps at most its share of what it owned, so the most that
// can stay is the best over every choice of who gets the larger share.
#include <algorithm>
#include <set>

#include "model/assignment.h"

namespace model {

std::uint32_t minimal_moves(const std::vector<std::string>& members, std::uint32_t partitions,
                            const std::map<std::string, std::vector<std::uint32_t>>& previous) {
  const std::size_t m = members.size();
  if (m == 0) return 0;
  std::vector<std::uint32_t> owned(m, 0);
  std::set<std::uint32_t> seen;
  std::uint32_t had = 0;
  for (std::size_t i = 0; i < m; ++i) {
    auto it = previous.find(members[i]);
    if (it == previous.end()) continue;
    for (std::uint32_t p : it->second) {
      if (p < partitions && seen.insert(p).second) ++owned[i];
    }
    had += owned[i];
  }
  const std::uint32_t share = partitions / static_cast<std::uint32_t>(m);
  const std::size_t larger = partitions % m;
  std::uint32_t best = 0;
  for (std::uint32_t mask = 0; mask < (1u << m); ++mask) {
    if (static_cast<std::size_t>(__builtin_popcount(mask)) != larger) continue;
    std::uint32_t kept = 0;
    for (std::size_t i = 0; i < m; ++i) {
      kept += std::min(owned[i], share + ((mask >> i) & 1u));
    }
    best = std::max(best, kept);
  }
  return had - best;
}

}  // namespace model

namespace model {

// R30 in the model's words: walk the partitions and the members the way SPEC describes.
std::map<std::string, std::vector<std::uint32_t>> assign(
    Assignor assignor, const std::vector<std::string>& members, std::uint32_t partitions,
    const std::map<std::string, std::vector<std::uint32_t>>& previous) {
  std::map<std::string, std::vector<std::uint32_t>> out;
  for (const std::string& m : members) out[m];
  const std::size_t m = members.size();
  if (m == 0) return out;
  const std::uint32_t share = partitions / static_cast<std::uint32_t>(m);
  const std::size_t larger = partitions % m;
  if (assignor == Assignor::kRoundRobin) {
    for (std::uint32_t p = 0; p < partitions; ++p) out[members[p % m]].push_back(p);
    return out;
  }
  if (assignor == Assignor::kRange) {
    std::uint32_t p = 0;
    for (std::size_t i = 0; i < m; ++i) {
      for (std::uint32_t k = 0; k < share + (i < larger ? 1 : 0); ++k)
        out[members[i]].push_back(p++);
    }
    return out;
  }
  // Sticky (and cooperative sticky): what each member had, first claim in join order wins.
  std::map<std::uint32_t, std::size_t> had_by;  // partition -> member index
  for (std::size_t i = 0; i < m; ++i) {
    auto it = previous.find(members[i]);
    if (it == previous.end()) continue;
    for (std::uint32_t p : it->second) {
      if (p < partitions && !had_by.contains(p)) had_by[p] = i;
    }
  }
  std::vector<std::uint32_t> had(m, 0);
  for (const auto& [p, i] : had_by) ++had[i];
  // The larger shares go to the members that had the most; ties to the earlier joiner.
  std::vector<std::uint32_t> cap(m, share);
  std::vector<bool> got_larger(m, false);
  for (std::size_t k = 0; k < larger; ++k) {
    std::size_t best = m;
    for (std::size_t i = 0; i < m; ++i) {
      if (!got_larger[i] && (best == m || had[i] > had[best])) best = i;
    }
    got_larger[best] = true;
    ++cap[best];
  }
  // Each keeps its lowest partitions up to its share; the rest go, lowest first, to the
  // members still short, in join order.
  std::vector<std::uint32_t> free;
  for (std::uint32_t p = 0; p < partitions; ++p) {
    auto it = had_by.find(p);
    if (it != had_by.end() && out[members[it->second]].size() < cap[it->second]) {
      out[members[it->second]].push_back(p);
    } else {
      free.push_back(p);
    }
  }
  std::size_t next = 0;
  for (std::size_t i = 0; i < m; ++i) {
    std::vector<std::uint32_t>& mine = out[members[i]];
    while (mine.size() < cap[i]) mine.push_back(free[next++]);
    std::sort(mine.begin(), mine.end());
  }
  return out;
}

}  // namespace model
