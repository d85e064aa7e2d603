// BrokerImpl: construction, the topic table and publish (SPEC R1-R3).
#include <algorithm>
#include <utility>

#include "broker_impl.h"

namespace broker {
namespace {

std::unique_ptr<Dispatcher> make_dispatcher(const DispatcherOptions& o,
                                            std::function<void()> on_progress) {
  switch (o.kind) {
    case DispatcherOptions::Kind::kLane:
      return make_lane_dispatcher(o, std::move(on_progress));
    case DispatcherOptions::Kind::kPool:
      return make_pool_dispatcher(o, std::move(on_progress));
    case DispatcherOptions::Kind::kSynchronous:
      break;
  }
  return make_synchronous_dispatcher();
}

}  // namespace

BrokerImpl::BrokerImpl(BrokerOptions options)
    : clock_(options.clock() ? options.clock() : std::make_shared<SteadyClock>()),
      dispatcher_(
          make_dispatcher(options.dispatcher(), [progress = progress_] { progress->notify(); })) {
  if (options.auto_expire()) {
    expiry_ = std::make_unique<ExpiryTimer>(clock_, options.auto_expire_period(),
                                            [this] { expire(clock_->now()); });
  }
}

BrokerImpl::~BrokerImpl() {
  dispatcher_->stop();  // first: no handler call may start once the destructor began (R16)
  expiry_.reset();      // its thread calls into this object
}

void BrokerImpl::create_topic(const std::string& name, TopicOptions options) {
  if (name.empty()) throw InvalidArgument("topic name must not be empty");
  sync::MutexLock lock(mu_);
  if (topics_.count(name)) throw DuplicateTopic("topic '" + name + "' already exists");
  auto topic = std::make_shared<Topic>(name, options);
  topics_[name] = topic;
  order_.push_back(std::move(topic));
}

void BrokerImpl::delete_topic(const std::string& name) {
  sync::MutexLock lock(mu_);
  auto it = topics_.find(name);
  if (it == topics_.end()) throw UnknownTopic("no topic '" + name + "'");
  std::shared_ptr<Topic> topic = it->second;
  sync::MutexLock topic_lock(topic->mu);
  if (topic->state_count() > 0) {
    throw TopicInUse("topic '" + name + "' still has " + std::to_string(topic->state_count()) +
                     " subscription(s)");
  }
  topic->deleted = true;
  topics_.erase(it);
  std::erase(order_, topic);
}

std::vector<std::string> BrokerImpl::topics() const {
  sync::MutexLock lock(mu_);
  std::vector<std::string> names;
  for (const auto& t : order_) names.push_back(t->name);
  return names;
}

std::shared_ptr<Topic> BrokerImpl::find_topic(const std::string& name) const {
  sync::MutexLock lock(mu_);
  auto it = topics_.find(name);
  if (it == topics_.end()) throw UnknownTopic("no topic '" + name + "'");
  return it->second;
}

std::vector<std::shared_ptr<Topic>> BrokerImpl::topic_snapshot() const {
  sync::MutexLock lock(mu_);
  return order_;
}

Offset BrokerImpl::publish(const std::string& topic, std::string payload, Headers headers,
                           std::string key) {
  std::shared_ptr<Topic> t = find_topic(topic);
  const Offset offset =
      t->log->append(std::move(payload), std::move(headers), std::move(key), clock_->now());
  if (!dispatcher_->synchronous()) {
    const std::shared_ptr<const StateList> push = t->push_states();
    for (const auto& s : *push) dispatcher_->notify(s);  // wakes lanes; never runs a handler
  }
  return offset;
}

Offset BrokerImpl::end_offset(const std::string& topic) const {
  return find_topic(topic)->log->end();
}

Offset BrokerImpl::oldest_offset(const std::string& topic) const {
  return find_topic(topic)->log->oldest();
}

}  // namespace broker
