// What a subscription reports about itself.
#pragma once

#include <cstdint>
#include <string>

#include "broker/message.h"

namespace broker {

/// Counters of one subscription (or one group). All counts since it was created.
struct SubscriptionStats {
  Offset next_offset = 0;        // the cursor: next offset never handed out
  std::uint64_t backlog = 0;     // waiting to be handed out: returned + matching after cursor
  std::uint64_t in_flight = 0;   // handed out, not yet confirmed or returned
  std::uint64_t delivered = 0;   // offers made (every attempt)
  std::uint64_t redelivered = 0; // offers with attempt > 1
  std::uint64_t confirmed = 0;   // acks / handler confirmations accepted
  std::uint64_t dead_lettered = 0;
  std::uint64_t skipped = 0;     // messages dropped by retention before this subscription got them
  std::uint64_t filtered = 0;    // messages the filter passed over
  bool operator==(const SubscriptionStats&) const = default;
};

/// A message that used up its deliveries, with how often it was offered and why it failed.
struct DeadLetter {
  MessagePtr message;
  int attempts = 0;
  std::string reason;
};

}  // namespace broker
