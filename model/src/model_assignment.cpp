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
