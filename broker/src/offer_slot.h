// The bookkeeping of one subscription's running push offer: who runs it, whether its
// result still counts, and how unsubscribe waits for it to end (SPEC R6, R9, R12, R15).
#pragma once

#include <cstdint>
#include <string>

#include "sync/sync.h"

namespace broker {

class SubscriptionState;

/// The identity of a thread (or, on the fiber back-end, a fiber): the address of its
/// context slot. Typed so it cannot be confused with any other pointer.
class ContextId {
 public:
  /// The calling thread's (fiber's) identity.
  static ContextId current() { return ContextId(&sync::context_slot()); }
  static ContextId none() { return ContextId(nullptr); }
  bool operator==(const ContextId&) const = default;
  [[nodiscard]] bool empty() const { return id_ == nullptr; }

 private:
  explicit ContextId(const void* id) : id_(id) {}
  const void* id_;
};

/// Identifies one offer from its begin to its finish.
struct OfferTicket {
  std::uint64_t token = 0;  // unique per offer of this slot
  std::uint64_t epoch = 0;  // the slot's epoch when the offer began
};

/// How an offer's handler result is to be taken when the offer ends.
enum class OfferEnd {
  kApply,      // confirm or fail the message
  kSeeked,     // the subscription was seeked meanwhile: the result is void
  kGone,       // the subscription was unsubscribed meanwhile: the result is void
  kAbandoned,  // the offer was abandoned (handler timeout) and already failed
};

/// One subscription's offer slot: at most one offer runs at a time (SPEC R15). Not
/// synchronized by itself: it is a member of SubscriptionState GUARDED_BY its mu, so every
/// call holds that mutex; wait_until_idle takes it to wait on.
class OfferSlot {
 public:
  /// Whether offers may still start (false once closed by unsubscribe).
  [[nodiscard]] bool open() const { return open_; }
  /// Whether an offer is running (begun, not finished or abandoned).
  [[nodiscard]] bool busy() const { return !runner_.empty(); }
  /// Whether the running offer belongs to member (any member when member is empty).
  [[nodiscard]] bool running_for(const std::string& member) const {
    return busy() && (member.empty() || member_ == member);
  }
  /// Whether the running offer runs on the calling context (a handler calling back).
  [[nodiscard]] bool running_here() const { return busy() && runner_ == ContextId::current(); }

  /// Marks an offer to member as running on the calling context. REQUIRES open() &&
  /// !busy(): committing the offer and marking it running is one step under the lock, so
  /// an unsubscribe either sees it running (and waits) or wins before it is taken.
  OfferTicket begin(const std::string& member) {
    runner_ = ContextId::current();
    member_ = member;
    return OfferTicket{++token_, epoch_};
  }
  /// Ends the offer of ticket and says what its result is worth. Wakes waiters.
  OfferEnd finish(const OfferTicket& ticket) {
    if (!busy() || token_ != ticket.token) return OfferEnd::kAbandoned;
    release();
    if (!open_) return OfferEnd::kGone;
    if (epoch_ != ticket.epoch) return OfferEnd::kSeeked;
    return OfferEnd::kApply;
  }
  /// Frees the slot from the offer of token (handler timeout): its late finish will be
  /// kAbandoned, and unsubscribe no longer waits for it. False if that offer already ended.
  bool abandon(std::uint64_t token) {
    if (!busy() || token_ != token) return false;
    release();
    return true;
  }
  /// Threaded dispatchers: the subscription failed twice in a row and waits out its
  /// retry_backoff (wait_idle does not wait for a subscription that backs off).
  [[nodiscard]] bool backing_off() const { return backing_off_; }
  void set_backing_off(bool on) { backing_off_ = on; }

  /// Unsubscribe: no offer starts from now on; a running one's result is void.
  void close() { open_ = false; }
  /// Seek: the running offer's result is void.
  void void_running() { ++epoch_; }
  /// Waits until no offer of member (any member if empty) runs. mu is the owner's mutex,
  /// held by the caller; the wait releases it. Offers end only by finish or abandon.
  void wait_until_idle(sync::Mutex& mu, const std::string& member) REQUIRES(mu) {
    while (running_for(member)) ended_.wait(mu);
  }

 private:
  void release() {
    runner_ = ContextId::none();
    member_.clear();
    ended_.notify_all();
  }

  bool open_ = true;
  bool backing_off_ = false;
  ContextId runner_ = ContextId::none();
  std::string member_;
  std::uint64_t token_ = 0;
  std::uint64_t epoch_ = 0;
  sync::CondVar ended_;
};

}  // namespace broker
