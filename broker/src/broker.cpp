// The facade forwards to BrokerImpl; it holds no state of its own.
#include "broker/broker.h"

#include "broker_impl.h"
#include "now_check.h"

namespace broker {

Broker::Broker() : Broker(BrokerOptions::synchronous()) {}
Broker::Broker(BrokerOptions options) : impl_(std::make_unique<BrokerImpl>(std::move(options))) {}
Broker::~Broker() = default;

void Broker::create_topic(const std::string& name, TopicOptions options) {
  impl_->check_storage();
  impl_->create_topic(name, options);
}
bool Broker::create_topic_if_absent(const std::string& name, TopicOptions options) {
  impl_->check_storage();
  return impl_->create_topic_if_absent(name, options);
}
void Broker::delete_topic(const std::string& name) {
  impl_->check_storage();
  impl_->delete_topic(name);
}
std::vector<std::string> Broker::topics() const {
  impl_->check_storage();
  return impl_->topics();
}
Offset Broker::publish(const std::string& topic, std::string_view payload, const Headers& headers,
                       std::string_view key) {
  impl_->check_storage();
  return impl_->publish(topic, payload, headers, key);
}
Placement Broker::send(const std::string& topic, std::string_view payload, const Headers& headers,
                       std::string_view key) {
  impl_->check_storage();
  return impl_->send(topic, payload, headers, key);
}
Offset Broker::publish_to(const std::string& topic, std::uint32_t partition,
                          std::string_view payload, const Headers& headers, std::string_view key) {
  impl_->check_storage();
  return impl_->publish_to(topic, partition, payload, headers, key);
}
std::uint32_t Broker::partitions(const std::string& topic) const {
  impl_->check_storage();
  return impl_->partitions(topic);
}
Offset Broker::end_offset(const std::string& topic) const {
  impl_->check_storage();
  return impl_->end_offset(topic);
}
Offset Broker::oldest_offset(const std::string& topic) const {
  impl_->check_storage();
  return impl_->oldest_offset(topic);
}

void Broker::subscribe(const std::string& topic, const std::string& name, Handler handler,
                       PushOptions options) {
  impl_->check_storage();
  impl_->subscribe(topic, name, std::move(handler), std::move(options));
}
void Broker::resubscribe(const WaitingSubscription& waiting, Handler handler,
                         const std::string& member) {
  impl_->check_storage();
  impl_->resubscribe(waiting, std::move(handler), member);
}
bool Broker::unsubscribe(const std::string& topic, const std::string& name) {
  impl_->check_storage();
  return impl_->unsubscribe(topic, name);
}
void Broker::seek(const std::string& topic, const std::string& name, Offset offset) {
  impl_->check_storage();
  impl_->seek(topic, name, offset);
}
std::size_t Broker::drain() {
  impl_->check_storage();
  return impl_->drain();
}
bool Broker::wait_idle(Millis timeout) {
  impl_->check_storage();
  return impl_->wait_idle(timeout);
}
bool Broker::wait_delivered(Millis timeout) {
  impl_->check_storage();
  return impl_->wait_delivered(timeout);
}

void Broker::subscribe_pull(const std::string& topic, const std::string& name,
                            PullOptions options) {
  impl_->check_storage();
  impl_->subscribe_pull(topic, name, std::move(options));
}
std::vector<Received> Broker::poll(const std::string& topic, const std::string& subscription,
                                   const std::string& member, std::size_t max_messages, Time now) {
  impl_->check_storage();
  check_now(impl_->clock(), now, "poll");
  return impl_->poll(topic, subscription, member, max_messages, now);
}
std::vector<Received> Broker::poll(const std::string& topic, const std::string& subscription,
                                   const std::string& member, std::size_t max_messages) {
  impl_->check_storage();
  return impl_->poll(topic, subscription, member, max_messages, impl_->clock().now());
}
std::vector<Received> Broker::poll_wait(const std::string& topic, const std::string& subscription,
                                        const std::string& member, std::size_t max_messages,
                                        Millis timeout) {
  impl_->check_storage();
  return impl_->poll_wait(topic, subscription, member, max_messages, timeout);
}
AckResult Broker::ack(const Receipt& receipt, Time now) {
  impl_->check_storage();
  check_now(impl_->clock(), now, "ack");
  return impl_->ack(receipt, now);
}
AckResult Broker::ack(const Receipt& receipt) {
  impl_->check_storage();
  return impl_->ack(receipt, impl_->clock().now());
}
AckResult Broker::nack(const Receipt& receipt, Time now) {
  impl_->check_storage();
  check_now(impl_->clock(), now, "nack");
  return impl_->nack(receipt, now, std::nullopt);
}
AckResult Broker::nack(const Receipt& receipt) {
  impl_->check_storage();
  return impl_->nack(receipt, impl_->clock().now(), std::nullopt);
}
AckResult Broker::nack(const Receipt& receipt, Time now, Millis delay) {
  impl_->check_storage();
  check_now(impl_->clock(), now, "nack");
  return impl_->nack(receipt, now, delay);
}
AckResult Broker::nack(const Receipt& receipt, Millis delay) {
  impl_->check_storage();
  return impl_->nack(receipt, impl_->clock().now(), delay);
}
AckResult Broker::term(const Receipt& receipt, Time now) {
  impl_->check_storage();
  check_now(impl_->clock(), now, "term");
  return impl_->term(receipt, now);
}
AckResult Broker::term(const Receipt& receipt) {
  impl_->check_storage();
  return impl_->term(receipt, impl_->clock().now());
}
AckResult Broker::extend(const Receipt& receipt, Time now, Millis extension) {
  impl_->check_storage();
  check_now(impl_->clock(), now, "extend");
  return impl_->extend(receipt, now, extension);
}
AckResult Broker::extend(const Receipt& receipt, Millis extension) {
  impl_->check_storage();
  return impl_->extend(receipt, impl_->clock().now(), extension);
}
std::vector<Expired> Broker::expire(Time now) {
  impl_->check_storage();
  check_now(impl_->clock(), now, "expire");
  return impl_->expire(now);
}
std::vector<Expired> Broker::expire() {
  impl_->check_storage();
  return impl_->expire(impl_->clock().now());
}

std::size_t Broker::redrive(const std::string& topic, const std::string& name) {
  impl_->check_storage();
  return impl_->redrive(topic, name);
}
std::vector<Offset> Broker::redrive_to(const std::string& topic, const std::string& name,
                                       const std::string& to_topic) {
  impl_->check_storage();
  return impl_->redrive_to(topic, name, to_topic);
}
std::size_t Broker::purge_dead_letters(const std::string& topic, const std::string& name) {
  impl_->check_storage();
  return impl_->purge_dead_letters(topic, name);
}
bool Broker::pause(const std::string& topic, const std::string& name) {
  impl_->check_storage();
  return impl_->set_paused(topic, name, true);
}
bool Broker::resume(const std::string& topic, const std::string& name) {
  impl_->check_storage();
  return impl_->set_paused(topic, name, false);
}
Lag Broker::lag(const std::string& topic, const std::string& name, Time now) const {
  impl_->check_storage();
  check_now(impl_->clock(), now, "lag");
  return impl_->lag(topic, name, now);
}
Lag Broker::lag(const std::string& topic, const std::string& name) const {
  impl_->check_storage();
  return impl_->lag(topic, name, impl_->clock().now());
}
Offset Broker::offset_for_time(const std::string& topic, Time time) const {
  impl_->check_storage();
  return impl_->offset_for_time(topic, time);
}
Offset Broker::seek_to_time(const std::string& topic, const std::string& name, Time time) {
  impl_->check_storage();
  return impl_->seek_to_time(topic, name, time);
}

Membership Broker::join_group(const std::string& topic, const std::string& group,
                              const std::string& member, const GroupOptions& options) {
  impl_->check_storage();
  return impl_->join_group(topic, group, member, nullptr, options);
}

Membership Broker::join_group(const std::string& topic, const std::string& group,
                              const std::string& member, Handler handler,
                              const GroupOptions& options) {
  impl_->check_storage();
  return impl_->join_group(topic, group, member, &handler, options);
}

bool Broker::leave_group(const std::string& topic, const std::string& group,
                         const std::string& member) {
  impl_->check_storage();
  return impl_->leave_group(topic, group, member);
}

Membership Broker::membership(const std::string& topic, const std::string& group,
                              const std::string& member) const {
  impl_->check_storage();
  return impl_->membership(topic, group, member);
}

std::vector<Received> Broker::poll_group(const std::string& topic, const std::string& group,
                                         const std::string& member, std::size_t max_messages,
                                         Time now) {
  impl_->check_storage();
  check_now(impl_->clock(), now, "poll_group");
  return impl_->poll_group(topic, group, member, max_messages, now);
}
std::vector<Received> Broker::poll_group(const std::string& topic, const std::string& group,
                                         const std::string& member, std::size_t max_messages) {
  impl_->check_storage();
  return impl_->poll_group(topic, group, member, max_messages, impl_->clock().now());
}

GroupStats Broker::group_stats(const std::string& topic, const std::string& group) const {
  impl_->check_storage();
  return impl_->group_stats(topic, group);
}

SubscriptionStats Broker::stats(const std::string& topic, const std::string& name) const {
  impl_->check_storage();
  return impl_->stats(topic, name);
}
std::vector<DeadLetter> Broker::dead_letters(const std::string& topic,
                                             const std::string& name) const {
  impl_->check_storage();
  return impl_->dead_letters(topic, name);
}
std::vector<std::string> Broker::subscriptions(const std::string& topic) const {
  impl_->check_storage();
  return impl_->subscriptions(topic);
}
std::vector<WaitingSubscription> Broker::waiting_for_handler() const {
  impl_->check_storage();
  return impl_->waiting_for_handler();
}
const Clock& Broker::clock() const { return impl_->clock(); }
const RecoveryReport& Broker::recovery() const { return impl_->recovery(); }
std::optional<std::string> Broker::storage_failure() const { return impl_->storage_failure(); }

}  // namespace broker
