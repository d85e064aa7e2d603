// Boost.Signals2: synchronous, thread-safe fan-out to connected slots.
#pragma once

#include <boost/signals2/signal.hpp>
#include <string_view>

#include "../common.h"

namespace bench {

/// One signal, one slot per subscriber; publish emits on the publisher's thread. No retry:
/// Signals2 has no notion of confirmation.
class Signals2FanOut {
 public:
  static constexpr const char* kName = "signals2";

  /// Connects `subscribers` slots made by make.
  Signals2FanOut(std::size_t subscribers, const HandlerFactory& make) {
    for (std::size_t i = 0; i < subscribers; ++i) signal_.connect(make(i));
  }

  /// Calls every slot with payload before returning.
  void publish(std::string_view payload) { signal_(payload); }

 private:
  boost::signals2::signal<bool(std::string_view)> signal_;
};

}  // namespace bench
