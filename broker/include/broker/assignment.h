// Consumer-group partition assignment (SPEC R30): which member of a group consumes which
// partitions of a partitioned topic, under the four strategies Kafka names. Pure functions,
// usable without a broker; a group's members poll the partitions (R29) they are given.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace broker {

/// How a rebalance spreads n partitions over m members (members in join order).
enum class Assignor {
  kRange,              // contiguous ranges: the first n % m members get one partition more
  kRoundRobin,         // partition i to member i % m (seed 003's ConsumerGroupAssignment)
  kSticky,             // balanced like the others, moving as few partitions as that allows
  kCooperativeSticky,  // sticky's result, revoking only the partitions that move
};

/// Member name -> its partitions, ascending. Members without partitions are listed too.
using Assignment = std::map<std::string, std::vector<std::uint32_t>>;

/// One rebalance: the new assignment, and what each member must give up (stop processing,
/// its acks no longer count) before anyone is given it: every partition it had under an
/// eager strategy (range, round robin, sticky), only those that move under cooperative.
struct Rebalance {
  Assignment assignment;
  Assignment revoked;
};

/// Assigns `partitions` partitions to `members` (join order; names distinct and non-empty),
/// each partition to exactly one member, every member within one partition of every other.
/// `previous` is the assignment before (sticky and cooperative keep what they can of it;
/// partitions >= `partitions` and members gone are ignored, and a partition listed under
/// two members counts as the one's who joined first). Throws InvalidArgument (an empty or
/// repeated member name). No members: nothing assigned, everything revoked.
Rebalance rebalance(Assignor assignor, const std::vector<std::string>& members,
                    std::uint32_t partitions, const Assignment& previous = {});

}  // namespace broker
