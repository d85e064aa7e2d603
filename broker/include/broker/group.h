// Consumer groups over a topic's partitions (SPEC R32): members join and leave, every
// change is a rebalance (R30) and a new generation, and a member polls only the partitions
// its generation gave it.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "broker/assignment.h"
#include "broker/message.h"
#include "broker/options.h"
#include "broker/stats.h"

namespace broker {

/// How a consumer group spreads and consumes its topic's partitions: the assignor (R30)
/// and the options of the subscription the group keeps on each partition: `pull` (R11)
/// for a group joined with join_group(..., options), `push` (R4; its `group` stays empty)
/// for one joined with a handler.
struct GroupOptions {
  Assignor assignor = Assignor::kRange;
  PullOptions pull{};
  PushOptions push{};
};

/// A member's place in its group: the group's generation (1 after the first join, one
/// more per rebalance) and the partitions it owns in it, ascending.
struct Membership {
  std::uint64_t generation = 0;
  std::vector<std::uint32_t> partitions;
  bool operator==(const Membership&) const = default;
};

/// Prints it as `Membership{field=value, ...}` (strings quoted, other bytes as \xNN), for test
/// failures and logs. Throws what the stream throws.
std::ostream& operator<<(std::ostream& out, const Membership& v);

/// One partition as a group sees it: who owns it, the partition's end, the group's
/// committed position on it and its lag (R27).
struct PartitionStats {
  std::uint32_t partition = 0;
  std::string topic;  // the partition's topic name (R29), or the topic itself
  std::string owner;  // "" while no member owns it
  Offset end = 0;
  Offset committed = 0;
  Lag lag;
  bool operator==(const PartitionStats&) const = default;
};

/// Prints it as `PartitionStats{field=value, ...}` (strings quoted, other bytes as \xNN), for test
/// failures and logs. Throws what the stream throws.
std::ostream& operator<<(std::ostream& out, const PartitionStats& v);

/// A group: its generation, members in join order, the assignment and each partition.
struct GroupStats {
  std::uint64_t generation = 0;
  std::vector<std::string> members;
  Assignment assignment;
  std::vector<PartitionStats> partitions;
  bool operator==(const GroupStats&) const = default;
};

/// Prints it as `GroupStats{field=value, ...}` (strings quoted, other bytes as \xNN), for test
/// failures and logs. Throws what the stream throws.
std::ostream& operator<<(std::ostream& out, const GroupStats& v);

}  // namespace broker
