// R30's yardstick for sticky assignment, stated by brute force: the fewest partitions a
// balanced assignment must move. Small inputs only (it tries every way to place the larger
// shares).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "model/types.h"

namespace model {

/// The fewest partitions (of those whose previous owner is still a member) that any
/// assignment of `partitions` partitions to `members` with shares n / m or n / m + 1 must
/// give to another member. `previous`: member -> partitions; partitions >= `partitions` and
/// members gone are ignored, and a partition listed under two members counts as the first's
/// in join order (as broker::rebalance reads it). Members at most 16.
std::uint32_t minimal_moves(const std::vector<std::string>& members, std::uint32_t partitions,
                            const std::map<std::string, std::vector<std::uint32_t>>& previous);

/// R30 as SPEC states it: the assignment of `partitions` partitions to `members` (join
/// order, distinct) under `assignor`, given the previous one (sticky keeps what it can).
std::map<std::string, std::vector<std::uint32_t>> assign(
    Assignor assignor, const std::vector<std::string>& members, std::uint32_t partitions,
    const std::map<std::string, std::vector<std::uint32_t>>& previous);

}  // namespace model
