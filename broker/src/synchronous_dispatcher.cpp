#include "dispatcher.h"

namespace broker {
namespace {

/// Deterministic mode: offers run only inside Broker::drain, on the caller's thread.
class SynchronousDispatcher final : public Dispatcher {
 public:
  bool synchronous() const override { return true; }
  void attach(const std::shared_ptr<SubscriptionState>&) override {}
  void detach(const std::shared_ptr<SubscriptionState>&) override {}
  void notify(const std::shared_ptr<SubscriptionState>&) override {}
  void stop() override {}
};

}  // namespace

std::unique_ptr<Dispatcher> make_synchronous_dispatcher() {
  return std::make_unique<SynchronousDispatcher>();
}

}  // namespace broker
