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
  if (options.storage()) {
    storage::Store::Opened opened;
    store_ = storage::Store::open(*options.storage(), opened);
    recover(opened);
  }
  if (options.auto_expire()) {
    expiry_ = std::make_unique<ExpiryTimer>(clock_, options.auto_expire_period(),
                                            [this] { expire(clock_->now()); });
  }
}

void BrokerImpl::recover(storage::Store::Opened& opened) {
  const FsyncPolicy policy = store_->options().publish_sync;
  std::vector<StatePtr> push;
  {
    sync::MutexLock lock(mu_);
    for (storage::SavedTopic& saved : opened.saved.topics) {
      storage::SegmentLog::Loaded& loaded = opened.logs[saved.id];
      std::shared_ptr<storage::SegmentLog> disk = store_->topic_log(saved.id, loaded);
      auto log = std::make_shared<TopicLog>(saved.options, std::move(disk), policy, loaded.sizes,
                                            loaded.end);
      auto t = std::make_shared<Topic>(saved.name, saved.options, std::move(log), saved.id);
      sync::MutexLock topic_lock(t->mu);
      for (storage::SavedSubscription& sub : saved.subscriptions) {
        SubscriptionConfig c;
        c.broker = this;
        c.kind = sub.pull ? Kind::kPull : Kind::kPush;
        c.topic = saved.name;
        c.name = sub.name;
        c.header_filter = sub.header_filter;
        c.max_deliveries = sub.max_deliveries;
        c.ack_timeout = sub.ack_timeout;
        c.max_in_flight = sub.max_in_flight;
        c.backoff = sub.backoff;
        c.start = sub.start;
        c.group = sub.group;
        StatePtr s = make_state(*t, std::move(c), sub.position);
        {
          sync::MutexLock state_lock(s->mu);
          s->restore(std::move(sub.attempts), std::move(sub.dead));
        }
        t->add(s);
        // A push subscription comes back without a handler: subscribe resumes it (R20).
        if (sub.group) {
          t->groups[sub.name] = s;
        } else {
          t->by_name[sub.name] = s;
        }
        if (!sub.pull) push.push_back(s);
      }
      topics_[saved.name] = t;
      order_.push_back(std::move(t));
    }
  }
  for (const auto& s : push) dispatcher_->attach(s);
  recovery_ = std::move(opened.report);
}

StatePtr BrokerImpl::make_state(const Topic& t, SubscriptionConfig config, Offset cursor) const {
  std::shared_ptr<CommitSink> sink;
  if (store_) sink = store_;
  return std::make_shared<SubscriptionState>(std::move(config), t.log, clock_, cursor,
                                             std::move(sink));
}

storage::SavedSubscription BrokerImpl::saved_of(const SubscriptionConfig& c, Offset cursor) {
  storage::SavedSubscription s;
  s.name = c.name;
  s.pull = c.kind == Kind::kPull;
  s.group = c.group;
  s.header_filter = c.header_filter;
  s.max_deliveries = c.max_deliveries;
  s.ack_timeout = c.ack_timeout;
  s.max_in_flight = c.max_in_flight;
  s.backoff = c.backoff;
  s.start = c.start;
  s.position = cursor;
  return s;
}

BrokerImpl::~BrokerImpl() {
  dispatcher_->stop();  // first: no handler call may start once the destructor began (R16)
  expiry_.reset();      // its thread calls into this object
}

void BrokerImpl::create_topic(const std::string& name, TopicOptions options) {
  if (name.empty()) throw InvalidArgument("topic name must not be empty");
  sync::MutexLock lock(mu_);
  if (topics_.count(name)) throw DuplicateTopic("topic '" + name + "' already exists");
  std::shared_ptr<Topic> topic;
  if (store_) {
    const std::uint64_t id = store_->create_topic(name, options);
    storage::SegmentLog::Loaded fresh;
    auto log = std::make_shared<TopicLog>(options, store_->topic_log(id, fresh),
                                          store_->options().publish_sync, fresh.sizes, 0);
    topic = std::make_shared<Topic>(name, options, std::move(log), id);
  } else {
    topic = std::make_shared<Topic>(name, options);
  }
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
  if (store_) store_->delete_topic(name, topic->storage_id);
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
