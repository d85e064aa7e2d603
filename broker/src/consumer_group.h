// A consumer group over a topic's partitions (SPEC R32).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "broker/group.h"
#include "subscription_state.h"
#include "sync/sync.h"

namespace broker {

/// One consumer group: its options, the subscription it keeps on each partition (pull, or
/// push with each partition's owner as its one member), and its membership. Lock order: the group's
/// topic's mu, then mu, then a partition subscription's mu (each partition's topic mu is taken only
/// while creating the group). Membership is not saved: a restarted broker has no groups until
/// members join again, and the first join adopts the partition subscriptions (and their positions)
/// it finds.
struct ConsumerGroup {
  /// One partition: its number, its topic's name and the group's subscription on it.
  struct Part {
    std::uint32_t partition = 0;
    std::string topic;
    std::shared_ptr<SubscriptionState> state;
  };

  ConsumerGroup(std::string n, bool is_push, GroupOptions o, std::vector<Part> p)
      : name(std::move(n)), push(is_push), options(std::move(o)), parts(std::move(p)) {}

  // Constant after construction.
  const std::string name;
  const bool push;  // members have handlers; the partitions' subscriptions are push ones
  const GroupOptions options;
  const std::vector<Part> parts;  // by partition

  sync::Mutex mu;
  std::vector<std::string> members GUARDED_BY(mu);  // join order
  std::uint64_t generation GUARDED_BY(mu) = 0;
  Assignment assignment GUARDED_BY(mu);
  /// A push group's members' handlers (what each partition's subscription offers to).
  std::map<std::string, std::shared_ptr<const Handler>> handlers GUARDED_BY(mu);
};

}  // namespace broker
