// Broker::publisher's handle: a topic found once, looked up again only after a delete.
#include <utility>

#include "broker/broker.h"
#include "broker_impl.h"

namespace broker {

Publisher::Publisher(BrokerImpl& impl, std::string topic, std::shared_ptr<Topic> found)
    : impl_(&impl), topic_(std::move(topic)), found_(std::move(found)) {}

Offset Publisher::publish(std::string_view payload, const Headers& headers, std::string_view key) {
  impl_->check_storage();
  return impl_->send(found_, topic_, payload, headers, key).offset;
}

Placement Publisher::send(std::string_view payload, const Headers& headers, std::string_view key) {
  impl_->check_storage();
  return impl_->send(found_, topic_, payload, headers, key);
}

Publisher Broker::publisher(const std::string& topic) {
  impl_->check_storage();
  return Publisher(*impl_, topic, impl_->find_any_topic(topic));
}

}  // namespace broker
