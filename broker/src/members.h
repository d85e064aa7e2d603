// The handler members of one push subscription or group, and whose turn is next (SPEC R10).
#pragma once

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "broker/message.h"

namespace broker {

/// One handler member of a push subscription (a group has several).
struct Member {
  std::string name;
  std::shared_ptr<const Handler> handler;
};

/// Members in join order and the round-robin position. Not synchronized: a member of
/// SubscriptionState GUARDED_BY its mu.
class Members {
 public:
  void add(Member m) { members_.push_back(std::move(m)); }
  /// Removes the member called name; returns whether it was there.
  bool remove(const std::string& name) {
    return std::erase_if(members_, [&](const Member& m) { return m.name == name; }) > 0;
  }
  [[nodiscard]] bool empty() const { return members_.empty(); }
  [[nodiscard]] const std::vector<Member>& all() const { return members_; }

  /// SPEC R10: the member after the one that got the previous offer (the first if that one
  /// left or nobody had one yet); null if there are none. Does not move the turn.
  [[nodiscard]] const Member* next() const {
    if (members_.empty()) return nullptr;
    for (std::size_t i = 0; i < members_.size(); ++i) {
      if (members_[i].name == last_) return &members_[(i + 1) % members_.size()];
    }
    return &members_.front();
  }
  /// Records that member got an offer.
  void took_turn(const std::string& member) { last_ = member; }

 private:
  std::vector<Member> members_;
  std::string last_;  // who got the previous offer
};

}  // namespace broker
