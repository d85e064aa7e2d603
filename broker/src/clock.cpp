#include "broker/clock.h"

#include <chrono>

namespace broker {

Time SteadyClock::now() const {
  return Time{
      std::chrono::duration_cast<Millis>(std::chrono::steady_clock::now().time_since_epoch())};
}

}  // namespace broker
