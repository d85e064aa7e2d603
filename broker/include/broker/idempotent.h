// Exactly-once in effect: at-least-once delivery plus a handler that skips repeats.
#pragma once

#include <algorithm>
#include <cstddef>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

#include "broker/message.h"

namespace broker {

namespace detail {

/// A set of offsets kept as disjoint, non-adjacent half-open intervals [first, last):
/// memory is proportional to the number of gaps, not to the number of offsets.
class OffsetIntervals {
 public:
  /// Whether `o` was inserted.
  [[nodiscard]] bool contains(Offset o) const {
    auto next = runs_.upper_bound(o);  // the first run that starts after o
    if (next == runs_.begin()) return false;
    return o < std::prev(next)->second;
  }
  /// Adds `o`, merging it with the runs it touches.
  void insert(Offset o) {
    auto next = runs_.upper_bound(o);
    if (next != runs_.begin()) {
      auto prev = std::prev(next);
      if (o < prev->second) return;  // already in
      if (prev->second == o) {       // extends prev, maybe up to next
        prev->second = o + 1;
        if (next != runs_.end() && next->first == o + 1) {
          prev->second = next->second;
          runs_.erase(next);
        }
        return;
      }
    }
    if (next != runs_.end() && next->first == o + 1) {  // extends next downwards
      const Offset last = next->second;
      runs_.emplace_hint(runs_.erase(next), o, last);
      return;
    }
    runs_.emplace_hint(next, o, o + 1);
  }
  /// The number of runs (what the memory is proportional to).
  [[nodiscard]] std::size_t runs() const { return runs_.size(); }

 private:
  std::map<Offset, Offset> runs_;  // first -> one past the last
};

}  // namespace detail

/// Wraps a handler so that each message is applied at most once per subscription state:
/// an offer is confirmed without calling `inner` only if `inner` already confirmed
/// exactly that offset for that same subscription state (the push subscription, or the
/// push group its members share); anything else (a first offer, a retry after a failure,
/// a replay after a seek back over offsets a seek forward skipped, a dead-lettered offset
/// replayed) calls `inner`. The state is identified by `Delivery::topic`, a pointer the
/// broker creates once per subscription state, so one wrapped handler used by two
/// subscriptions applies each message once for each of them, and a deleted and re-created
/// topic (or an unsubscribed and re-created subscription) is a new state that applies
/// everything again. It locks its own mutex only around the lookup and the record, never
/// while `inner` runs; it relies on every dispatcher serving one subscription from one
/// context at a time (a pool handler abandoned after `handler_timeout` may still be
/// applying when the retry starts: both may apply). Its memory lives in this process
/// only, so it must not be shared across processes (or trusted across a restart): it
/// knows only what this wrapper saw. Memory: per live subscription state, one interval
/// per run of applied offsets (proportional to the gaps, not to the messages); the
/// entries of subscription states that no longer exist are dropped as new ones arrive.
inline Handler idempotent(Handler inner) {
  struct State {
    std::mutex mu;
    /// Subscription state (by the identity of its Delivery::topic) -> applied offsets.
    std::map<std::weak_ptr<const std::string>, detail::OffsetIntervals, std::owner_less<>> applied;
    std::size_t sweep_at = 16;  // drop expired keys when the map reaches this size
  };
  auto state = std::make_shared<State>();
  return [inner = std::move(inner), state](const Delivery& d) {
    if (!d.topic) return inner(d);  // no identity to remember it by
    const Offset offset = d.message->offset();
    {
      std::lock_guard<std::mutex> lock(state->mu);
      auto it = state->applied.find(d.topic);
      if (it != state->applied.end() && it->second.contains(offset)) return true;  // a repeat
    }
    if (!inner(d)) return false;
    std::lock_guard<std::mutex> lock(state->mu);
    auto it = state->applied.find(d.topic);
    if (it == state->applied.end()) {
      if (state->applied.size() >= state->sweep_at) {
        for (auto k = state->applied.begin(); k != state->applied.end();) {
          k = k->first.expired() ? state->applied.erase(k) : std::next(k);
        }
        state->sweep_at = std::max<std::size_t>(16, 2 * state->applied.size());
      }
      it = state->applied
               .emplace(std::weak_ptr<const std::string>(d.topic), detail::OffsetIntervals{})
               .first;
    }
    it->second.insert(offset);
    return true;
  };
}

}  // namespace broker
