// The seed's weak design: publish calls every handler in a loop on the publisher's thread.
#pragma once

#include <mutex>
#include <string_view>
#include <vector>

#include "../common.h"

namespace bench {

/// Handlers called inside publish, in subscription order; a failed call is retried at once
/// (at-least-once). Thread-safe: publishes are serialized by one mutex.
class WeakFanOut {
 public:
  static constexpr const char* kName = "weak";

  /// Creates `subscribers` handlers from make.
  WeakFanOut(std::size_t subscribers, const HandlerFactory& make) {
    for (std::size_t i = 0; i < subscribers; ++i) handlers_.push_back(make(i));
  }

  /// Delivers payload to every handler before returning.
  void publish(std::string_view payload) {
    std::lock_guard lock(mu_);
    for (auto& h : handlers_) {
      while (!h(payload)) {
      }
    }
  }

 private:
  std::mutex mu_;
  std::vector<SubHandler> handlers_;
};

}  // namespace bench
