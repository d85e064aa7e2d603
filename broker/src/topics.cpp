// BrokerImpl: construction, the topic table and publish (SPEC R1-R3).
#include <algorithm>
#include <utility>

#include "broker_impl.h"

namespace broker {
namespace {

std::unique_ptr<Dispatcher> make_dispatcher(const BrokerOptions& options,
                                            std::function<void()> on_progress) {
  const DispatcherOptions o{options.pool_threads(), options.handler_timeout(),
                            options.retry_backoff()};
  switch (options.dispatcher()) {
    case BrokerOptions::Dispatcher::kLane:
      return make_lane_dispatcher(o, std::move(on_progress));
    case BrokerOptions::Dispatcher::kPool:
      return make_pool_dispatcher(o, std::move(on_progress));
    case BrokerOptions::Dispatcher::kSynchronous:
      break;
  }
  return make_synchronous_dispatcher();
}

}  // namespace

BrokerImpl::BrokerImpl(BrokerOptions options)
    : clock_(options.clock() ? options.clock() : std::make_shared<SteadyClock>()),
      dispatcher_(make_dispatcher(options, [progress = progress_] { progress->notify(); })) {
  if (options.storage()) {
    storage::Store::Opened opened;
    store_ = storage::Store::open(*options.storage(), opened);
    recover(opened);
  }
  if (options.auto_expire()) {
    expiry_ = std::make_unique<ExpiryTimer>(
        clock_, options.auto_expire_period(), [this]() -> std::optional<Time> {
          // R33: once the store has failed every call reports it, and what the timer would
          // expire could not be committed: it changes nothing more, and an IoError must
          // not escape its thread.
          if (store_ && store_->failed()) return std::nullopt;
          std::optional<Time> next;
          try {
            expire(clock_->now(), next);
          } catch (const IoError&) {  // the store failed meanwhile
            return std::nullopt;
          }
          return next;
        });
  }
}

void BrokerImpl::recover(storage::Store::Opened& opened) {
  const FsyncPolicy policy = store_->options().publish_sync;
  std::vector<StatePtr> push;
  {
    sync::MutexLock lock(mu_);
    std::vector<std::pair<std::size_t, const storage::SavedTopic*>> partitioned;
    for (storage::SavedTopic& saved : opened.saved.topics) {
      if (saved.options.partitions > 1) {  // R29: built below, once its partitions are
        partitioned.emplace_back(order_.size(), &saved);
        order_.push_back(nullptr);
        continue;
      }
      storage::SegmentLog::Loaded& loaded = opened.logs[saved.id];
      std::shared_ptr<storage::SegmentLog> disk = store_->topic_log(saved.id, loaded);
      auto log = std::make_shared<TopicLog>(saved.options, std::move(disk), policy, loaded.sizes,
                                            loaded.end);
      auto t = std::make_shared<Topic>(saved.name, saved.options, std::move(log), saved.id,
                                       std::vector<std::shared_ptr<Topic>>{}, saved.parent);
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
        c.ordered_by_key = sub.ordered_by_key;
        c.durable_attempts = sub.durable_attempts;
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
      topics_.insert_all({{saved.name, t}});
      order_.push_back(std::move(t));
    }
    for (const auto& [at, saved] : partitioned) {
      std::vector<std::shared_ptr<Topic>> parts;
      for (std::uint32_t p = 0; p < saved->options.partitions; ++p) {
        parts.push_back(topics_.find(partition_name(saved->name, p)));
      }
      auto t = std::make_shared<Topic>(saved->name, saved->options, nullptr, saved->id,
                                       std::move(parts));
      topics_.insert_all({{saved->name, t}});
      order_[at] = std::move(t);
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
  s.ordered_by_key = c.ordered_by_key;
  s.durable_attempts = c.durable_attempts;
  s.start = c.start;
  s.position = cursor;
  return s;
}

BrokerImpl::~BrokerImpl() {
  dispatcher_->stop();  // first: no handler call may start once the destructor began (R16)
  expiry_.reset();      // its thread calls into this object
}

namespace {

// R1, R29: a topic's name and options as create_topic takes them, else InvalidArgument.
void check_topic(const std::string& name, const TopicOptions& options) {
  if (name.empty()) throw InvalidArgument("topic name must not be empty");
  if (options.partitions == 0 || options.partitions > kMaxPartitions) {
    throw InvalidArgument("partitions must be 1.." + std::to_string(kMaxPartitions) + ", not " +
                          std::to_string(options.partitions));
  }
}

}  // namespace

void BrokerImpl::create_topic(const std::string& name, TopicOptions options) {
  check_topic(name, options);
  sync::MutexLock lock(mu_);
  create_topic_locked(name, options);
}

bool BrokerImpl::create_topic_if_absent(const std::string& name, TopicOptions options) {
  check_topic(name, options);
  sync::MutexLock lock(mu_);
  if (const std::shared_ptr<Topic> t = topics_.find(name)) {
    if (!t->parent.empty()) {
      throw OptionsMismatch("topic", "'" + name + "' is a partition of topic '" + t->parent + "'");
    }
    // A topic without partitions has no use for a partitioner (its record does not keep one).
    const TopicOptions& o = t->options;
    const bool same = o.retention_messages == options.retention_messages &&
                      o.retention_bytes == options.retention_bytes &&
                      o.partitions == options.partitions &&
                      (o.partitions == 1 || o.partitioner == options.partitioner);
    if (!same) throw OptionsMismatch("topic", "topic '" + name + "' exists with other options");
    return false;
  }
  create_topic_locked(name, options);
  return true;
}

void BrokerImpl::create_topic_locked(const std::string& name, const TopicOptions& options) {
  std::vector<std::string> names{name};
  if (options.partitions > 1) {
    for (std::uint32_t p = 0; p < options.partitions; ++p) {
      names.push_back(partition_name(name, p));
    }
  }
  for (const std::string& n : names) {
    if (topics_.contains(n)) throw DuplicateTopic("topic '" + n + "' already exists");
  }
  // One journal record makes the topic and its partitions (ids id + 1 + p), so a crash
  // never leaves half of them.
  const std::uint64_t id = store_ ? store_->create_topic(name, options) : 0;
  std::vector<std::shared_ptr<Topic>> parts;
  TopicOptions part_options = options;
  part_options.partitions = 1;
  for (std::size_t i = 1; i < names.size(); ++i) {
    parts.push_back(make_topic(names[i], part_options, store_ ? id + i : 0, name));
  }
  std::shared_ptr<Topic> topic = parts.empty()
                                     ? make_topic(name, options, id, {})
                                     : std::make_shared<Topic>(name, options, nullptr, id, parts);
  // All names at once: no reader sees a partition without its topic (R29).
  std::vector<std::pair<std::string, std::shared_ptr<Topic>>> named{{name, topic}};
  for (const auto& part : parts) named.emplace_back(part->name, part);
  topics_.insert_all(named);
  order_.push_back(std::move(topic));
  for (auto& part : parts) order_.push_back(std::move(part));
}

std::shared_ptr<Topic> BrokerImpl::make_topic(const std::string& name, const TopicOptions& options,
                                              std::uint64_t id, const std::string& parent) const {
  if (!store_) {
    return std::make_shared<Topic>(name, options, nullptr, 0, std::vector<std::shared_ptr<Topic>>{},
                                   parent);
  }
  storage::SegmentLog::Loaded fresh;
  auto log = std::make_shared<TopicLog>(options, store_->topic_log(id, fresh),
                                        store_->options().publish_sync, fresh.sizes, 0);
  return std::make_shared<Topic>(name, options, std::move(log), id,
                                 std::vector<std::shared_ptr<Topic>>{}, parent);
}

void BrokerImpl::delete_topic(const std::string& name) {
  sync::MutexLock lock(mu_);
  std::shared_ptr<Topic> topic = topics_.find(name);
  if (!topic) throw UnknownTopic("no topic '" + name + "'");
  if (!topic->parent.empty()) {
    throw WrongKind("'" + name + "' is a partition: delete its topic '" + topic->parent + "'");
  }
  std::vector<std::shared_ptr<Topic>> gone{topic};
  gone.insert(gone.end(), topic->partitions.begin(), topic->partitions.end());
  for (const auto& t : gone) {
    sync::MutexLock topic_lock(t->mu);
    if (t->state_count() > 0) {
      throw TopicInUse("topic '" + t->name + "' still has " + std::to_string(t->state_count()) +
                       " subscription(s)");
    }
  }
  // A subscribe between the check above and here would need mu_, which this call holds.
  if (store_) {
    store_->delete_topic(name);
    // Its logs sync nothing more (a clean close would sync files that are gone, R33).
    for (const auto& t : gone) t->log->discard_disk();
    store_->remove_topic_files(topic->storage_id, topic->partitions.size());
  }
  std::vector<std::string> names;
  for (const auto& t : gone) {
    sync::MutexLock topic_lock(t->mu);
    t->dropped.store(true, std::memory_order_release);
    names.push_back(t->name);
    std::erase(order_, t);
  }
  topics_.erase_all(names);
}

std::vector<std::string> BrokerImpl::topics() const {
  sync::MutexLock lock(mu_);
  std::vector<std::string> names;
  for (const auto& t : order_) names.push_back(t->name);
  return names;
}

std::shared_ptr<Topic> BrokerImpl::find_any_topic(const std::string& name) const {
  std::shared_ptr<Topic> t = topics_.find(name);
  if (!t) throw UnknownTopic("no topic '" + name + "'");
  return t;
}

std::shared_ptr<Topic> BrokerImpl::find_topic(const std::string& name) const {
  std::shared_ptr<Topic> t = find_any_topic(name);
  if (!t->partitions.empty()) {
    throw WrongKind("'" + name + "' has " + std::to_string(t->partitions.size()) +
                    " partitions: name one, " + partition_name(name, 0) + ".." +
                    partition_name(name, static_cast<std::uint32_t>(t->partitions.size() - 1)));
  }
  return t;
}

std::vector<std::shared_ptr<Topic>> BrokerImpl::topic_snapshot() const {
  sync::MutexLock lock(mu_);
  return order_;
}

Offset BrokerImpl::publish(const std::string& topic, std::string_view payload,
                           const Headers& headers, std::string_view key) {
  return send(topic, payload, headers, key).offset;
}

Placement BrokerImpl::send(const std::string& topic, std::string_view payload,
                           const Headers& headers, std::string_view key) {
  return send_to(*find_any_topic(topic), payload, headers, key);
}

Placement BrokerImpl::send(std::shared_ptr<Topic>& found, const std::string& name,
                           std::string_view payload, const Headers& headers, std::string_view key) {
  if (!found || found->dropped.load(std::memory_order_acquire)) {
    found.reset();  // a deleted topic's messages go now, not at the handle's end
    found = find_any_topic(name);
  }
  return send_to(*found, payload, headers, key);
}

Placement BrokerImpl::send_to(Topic& topic, std::string_view payload, const Headers& headers,
                              std::string_view key) {
  if (topic.partitions.empty()) return {0, append(topic, payload, headers, key)};
  const auto n = static_cast<std::uint32_t>(topic.partitions.size());
  const std::uint32_t p = key.empty()
                              ? static_cast<std::uint32_t>(
                                    topic.round_robin.fetch_add(1, std::memory_order_relaxed) % n)
                              : partition_for_key(topic.options.partitioner, key, n);
  return {p, append(*topic.partitions[p], payload, headers, key)};
}

Offset BrokerImpl::publish_to(const std::string& topic, std::uint32_t partition,
                              std::string_view payload, const Headers& headers,
                              std::string_view key) {
  std::shared_ptr<Topic> t = find_any_topic(topic);
  const std::size_t n = std::max<std::size_t>(1, t->partitions.size());
  if (partition >= n) {
    throw PartitionOutOfRange("topic '" + topic + "' has " + std::to_string(n) +
                              " partition(s), so no partition " + std::to_string(partition));
  }
  Topic& target = t->partitions.empty() ? *t : *t->partitions[partition];
  return append(target, payload, headers, key);
}

std::uint32_t BrokerImpl::partitions(const std::string& topic) const {
  return std::max<std::uint32_t>(
      1, static_cast<std::uint32_t>(find_any_topic(topic)->partitions.size()));
}

Offset BrokerImpl::append(Topic& t, std::string_view payload, const Headers& headers,
                          std::string_view key) {
  const TopicLog::Appended appended = t.log->append(payload, headers, key, clock_->now());
  // Wakes lanes (dispatcher locks come after the topic's); never runs a handler. Lanes watch
  // the log's end while awake: then only one that may sleep needs a notify (and the
  // publisher touches neither the topic's lock nor a lane's wake-up flag).
  if (publish_notifies_ && (!notify_only_sleepers_ || appended.sleepers)) {
    t.for_each_push_state([this](const StatePtr& s) { dispatcher_->notify(s); });
  }
  return appended.offset;
}

Offset BrokerImpl::end_offset(const std::string& topic) const {
  const std::shared_ptr<Topic> t = find_any_topic(topic);
  if (t->partitions.empty()) return t->log->end();
  Offset total = 0;  // R29: each partition's end as read at some moment of this call
  for (const auto& p : t->partitions) total += p->log->end();
  return total;
}

Offset BrokerImpl::oldest_offset(const std::string& topic) const {
  return find_topic(topic)->log->oldest();
}

}  // namespace broker
