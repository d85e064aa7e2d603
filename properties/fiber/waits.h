// The timed rules of pull subscriptions on the fiber back-end's virtual time, where "at
// once" and "soon" are exact (SPEC R11's poll_wait, R17's automatic expiry):
//   - early-return: a poll_wait returned empty before its timeout had passed (a publish its
//     filter passes over, a key held back, a full max_in_flight or a pause keeps it
//     waiting), on any subscription;
//   - stuck: a poll_wait went on waiting after a call that must end its wait had returned:
//     a seek that made a message ready on a plain subscription (no filter, bound, order,
//     back-off or pause), or an unsubscribe of its subscription (it ends with
//     UnknownSubscription);
//   - late-expiry: under automatic expiry, a held message whose deadline passed (its poll's
//     now + ack timeout, or an accepted extend's now + extension) was not back within
//     kExpiryBoundMs: a poll with room that began later, or a poll_wait still waiting then,
//     did not get it.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "history.h"

namespace fiberprop {

/// How soon after a deadline automatic expiry must have returned the message (virtual ms).
inline constexpr std::int64_t kExpiryBoundMs = 1;

/// One poll or poll_wait of any subscription, as the runner saw it.
struct PollSeen {
  std::pair<std::string, std::string> sub;  // topic, subscription
  std::string member;
  bool wait = false;
  std::uint64_t invoke = 0, ret = 0;  // logical ticks
  std::int64_t invoke_ms = 0, ret_ms = 0, timeout_ms = 0;
  std::size_t got = 0;
  std::string error;  // "" or the error code's name
};

/// A call that ends a waiting poll_wait on `sub` at once (`what` says which and why).
struct WakeSeen {
  std::pair<std::string, std::string> sub;
  std::string what;
  std::uint64_t invoke = 0, ret = 0;
  std::int64_t ret_ms = 0;
  bool ends_with_error = false;  // an unsubscribe: the wait ends with UnknownSubscription
};

/// early-return and stuck over every poll and wake of a run; "" or "<anomaly>: ..." lines.
std::string check_waits(const std::vector<PollSeen>& polls, const std::vector<WakeSeen>& wakes);

/// late-expiry over one checked pull subscription's history (h.auto_expire_ms > 0, a back-off
/// list, key order and retention off: a returned message is ready at once).
std::string check_expiry(const History& h);

}  // namespace fiberprop
