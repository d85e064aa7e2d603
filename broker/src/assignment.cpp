// The four assignors of SPEC R30.
#include "broker/assignment.h"

#include <algorithm>
#include <set>

#include "broker/errors.h"

namespace broker {
namespace {

Assignment empty_for(const std::vector<std::string>& members) {
  Assignment out;
  for (const std::string& m : members) out[m];
  return out;
}

Assignment range(const std::vector<std::string>& members, std::uint32_t n) {
  Assignment out = empty_for(members);
  if (members.empty()) return out;  // no one to own anything
  const auto m = static_cast<std::uint32_t>(members.size());
  std::uint32_t next = 0;
  for (std::uint32_t i = 0; i < m; ++i) {
    const std::uint32_t count = n / m + (i < n % m ? 1 : 0);
    for (std::uint32_t k = 0; k < count; ++k) out[members[i]].push_back(next++);
  }
  return out;
}

Assignment round_robin(const std::vector<std::string>& members, std::uint32_t n) {
  Assignment out = empty_for(members);
  for (std::uint32_t p = 0; p < n; ++p) out[members[p % members.size()]].push_back(p);
  return out;
}

// Keeps min(cap, previously owned) of each member's partitions, where the n % m larger caps
// go to the members that owned the most (ties: join order), which keeps the most; then
// hands the rest out in join order up to each cap.
Assignment sticky(const std::vector<std::string>& members, std::uint32_t n,
                  const Assignment& previous) {
  const std::size_t m = members.size();
  std::vector<std::vector<std::uint32_t>> kept(m);
  std::set<std::uint32_t> taken;
  for (std::size_t i = 0; i < m; ++i) {
    auto it = previous.find(members[i]);
    if (it == previous.end()) continue;
    for (std::uint32_t p : it->second) {
      if (p < n && taken.insert(p).second) kept[i].push_back(p);
    }
    std::sort(kept[i].begin(), kept[i].end());
  }
  std::vector<std::size_t> by_owned(m);
  for (std::size_t i = 0; i < m; ++i) by_owned[i] = i;
  std::stable_sort(by_owned.begin(), by_owned.end(),
                   [&](std::size_t a, std::size_t b) { return kept[a].size() > kept[b].size(); });
  std::vector<std::size_t> cap(m, n / m);
  for (std::size_t k = 0; k < n % m; ++k) ++cap[by_owned[k]];
  std::set<std::uint32_t> free;
  for (std::uint32_t p = 0; p < n; ++p) free.insert(p);
  for (std::size_t i = 0; i < m; ++i) {
    kept[i].resize(std::min(kept[i].size(), cap[i]));
    for (std::uint32_t p : kept[i]) free.erase(p);
  }
  Assignment out = empty_for(members);
  for (std::size_t i = 0; i < m; ++i) {
    std::vector<std::uint32_t>& mine = out[members[i]];
    mine = kept[i];
    while (mine.size() < cap[i]) {
      mine.push_back(*free.begin());
      free.erase(free.begin());
    }
    std::sort(mine.begin(), mine.end());
  }
  return out;
}

}  // namespace

Rebalance rebalance(Assignor assignor, const std::vector<std::string>& members,
                    std::uint32_t partitions, const Assignment& previous) {
  std::set<std::string> names;
  for (const std::string& m : members) {
    if (m.empty() || !names.insert(m).second) {
      throw InvalidArgument("member names must be non-empty and distinct ('" + m + "')");
    }
  }
  Rebalance out;
  switch (members.empty() ? Assignor::kRange : assignor) {
    case Assignor::kRange:
      out.assignment = range(members, partitions);
      break;
    case Assignor::kRoundRobin:
      out.assignment = round_robin(members, partitions);
      break;
    case Assignor::kSticky:
    case Assignor::kCooperativeSticky:
      out.assignment = sticky(members, partitions, previous);
      break;
  }
  // Eager strategies take everything back first; cooperative only what moves.
  for (const auto& [member, had] : previous) {
    std::vector<std::uint32_t>& gone = out.revoked[member];
    auto now = out.assignment.find(member);
    for (std::uint32_t p : had) {
      const bool stays = now != out.assignment.end() &&
                         std::binary_search(now->second.begin(), now->second.end(), p);
      if (assignor != Assignor::kCooperativeSticky || !stays) gone.push_back(p);
    }
    std::sort(gone.begin(), gone.end());
    gone.erase(std::unique(gone.begin(), gone.end()), gone.end());
  }
  return out;
}

}  // namespace broker
