// The messages a push lane's run took from the cursor, held without a map node each: a
// lane that confirms what it takes at once pays no map insert, map erase or reference-count
// atomics per message for entries nobody looks up.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "broker/message.h"

namespace broker {

/// Held messages of one member in the order they were taken (ascending offsets), each a
/// first offer (attempt 1) but the front, which a run may retry in place (retry_front),
/// without a deadline: what SubscriptionState::in_flight_ would hold for them, in a vector. A
/// message is a raw pointer into the storage of an owner (its segment, or a record read back from
/// disk) that the run keeps once per owner, so taking one adds no reference count, and the lane's
/// own MessagePtr is the one its handler gets. Not thread-safe (its subscription's mu guards it).
/// Throws std::bad_alloc only.
class HeldRun {
 public:
  [[nodiscard]] bool empty() const { return head_ == entries_.size(); }
  [[nodiscard]] std::size_t size() const { return entries_.size() - head_; }
  /// The member holding them (meaningful while not empty).
  [[nodiscard]] const std::string& member() const { return member_; }
  /// The lowest and the highest held offset; REQUIRES !empty().
  [[nodiscard]] Offset front() const { return entries_[head_].message->offset(); }
  [[nodiscard]] Offset back() const { return entries_.back().message->offset(); }

  /// Holds `message` for member after the ones held (its offset above back(); a run holds
  /// one member's messages: REQUIRES empty() or member == member()). Copies message's owner
  /// only when it differs from the last one's (once per segment).
  void add(const MessagePtr& message, const std::string& member) {
    if (empty()) {
      clear();
      member_ = member;
    }
    if (owners_.empty() || owns_differently(owners_.back(), message)) owners_.push_back(message);
    entries_.push_back(Entry{message.get(), static_cast<std::uint32_t>(owners_.size() - 1)});
  }
  /// The i-th held message's attempt (0: front).
  [[nodiscard]] int attempt(std::size_t i) const { return i == 0 ? front_attempt_ : 1; }
  /// The front failed and stays held for its next attempt (R15's re-offer at once of a
  /// run's first failure). REQUIRES !empty().
  void retry_front() { ++front_attempt_; }
  /// Confirmed or failed: the front leaves. REQUIRES !empty().
  void pop_front() {
    front_attempt_ = 1;
    if (++head_ == entries_.size()) clear();
  }
  /// Given back: the back leaves. REQUIRES !empty().
  void pop_back() {
    entries_.pop_back();
    if (empty()) clear();
  }
  /// Whether offset is held here (binary search).
  [[nodiscard]] bool contains(Offset offset) const {
    const auto it =
        std::lower_bound(entries_.begin() + static_cast<std::ptrdiff_t>(head_), entries_.end(),
                         offset, [](const Entry& e, Offset o) { return e.message->offset() < o; });
    return it != entries_.end() && it->message->offset() == offset;
  }
  /// The i-th held message (0: front) as a MessagePtr sharing its owner's count.
  [[nodiscard]] MessagePtr at(std::size_t i) const {
    const Entry& e = entries_[head_ + i];
    return MessagePtr(owners_[e.owner], e.message);
  }
  /// The i-th held offset (0: front).
  [[nodiscard]] Offset offset(std::size_t i) const { return entries_[head_ + i].message->offset(); }
  /// Forgets them all and releases their owners.
  void clear() {
    entries_.clear();
    owners_.clear();
    head_ = 0;
    front_attempt_ = 1;
  }

 private:
  struct Entry {
    const Message* message;
    std::uint32_t owner;  // index into owners_
  };
  static bool owns_differently(const MessagePtr& a, const MessagePtr& b) {
    return a.owner_before(b) || b.owner_before(a);
  }

  std::vector<Entry> entries_;  // from head_ on: held
  std::size_t head_ = 0;
  int front_attempt_ = 1;  // the rest are first offers
  // One per distinct owner of a held message, in the order first met; a MessagePtr to one
  // of its messages (the aliasing constructor makes the others).
  std::vector<MessagePtr> owners_;
  std::string member_;
};

}  // namespace broker
