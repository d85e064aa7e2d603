// BrokerImpl: consumer groups over a topic's partitions (SPEC R32): join, leave, the
// rebalance each makes, poll_group and group_stats. Fencing lives with the partition
// subscriptions (SubscriptionState::answerable), so ack, nack, term and extend stay pull.cpp's.
#include <algorithm>
#include <utility>

#include "broker_impl.h"
#include "offer.h"

namespace broker {
namespace {

void require(bool ok, const std::string& what) {
  if (!ok) throw InvalidArgument(what);
}

bool is_member(const ConsumerGroup& g, const std::string& member) REQUIRES(g.mu) {
  return std::find(g.members.begin(), g.members.end(), member) != g.members.end();
}

Membership membership_of(const ConsumerGroup& g, const std::string& member) REQUIRES(g.mu) {
  auto it = g.assignment.find(member);
  return Membership{g.generation,
                    it == g.assignment.end() ? std::vector<std::uint32_t>{} : it->second};
}

std::string no_member(const std::string& member, const std::string& group,
                      const std::string& topic) {
  return "no member '" + member + "' in consumer group '" + group + "' on '" + topic + "'";
}

/// The subscription called group on pt that a new group takes over, or null if there is
/// none: a pull one with equal options (a restarted pull group's, R20), or for a push group
/// a push one a restart left without handler, with equal options. Throws WrongKind (the
/// other kind), DuplicateSubscription (a live push subscription or group of that name),
/// OptionsMismatch.
StatePtr adoptable(const Topic& pt, const std::string& group, bool push,
                   const GroupOptions& options) REQUIRES(pt.mu) {
  StatePtr s = pt.resolve(group);
  if (!s) return nullptr;
  const SubscriptionConfig& c = s->config();
  const bool is_push = c.kind == Kind::kPush;
  if (is_push != push) {
    throw WrongKind("'" + group + "' on '" + pt.name + "' is a " + (is_push ? "push" : "pull") +
                    " subscription");
  }
  if (push) {
    sync::MutexLock lock(s->mu);
    if (c.group || !s->members.empty() || s->owner) {
      throw DuplicateSubscription("subscription '" + group + "' already exists on '" + pt.name +
                                  "'");
    }
  }
  auto option = push ? first_mismatch(c, options.push) : first_mismatch(c, options.pull);
  if (option) {
    throw OptionsMismatch(*option, std::string(push ? "push" : "pull") + " subscription '" + group +
                                       "' on '" + pt.name + "' exists with another " + *option);
  }
  return s;
}

/// One partition's part of a rebalance: a partition that moves (every one, under an eager
/// assignor) gives back what its old owner held, and in a push group changes its member.
void move_owner(const ConsumerGroup& g, SubscriptionState& s, const std::string& owner,
                bool revoked, std::uint64_t generation, Time now) REQUIRES(s.mu, g.mu) {
  const bool moves = revoked || !s.owner || s.owner->member != owner;
  std::uint64_t since = generation;
  if (moves) {
    // What its old owner held comes back (or dies, out of deliveries) before anyone else
    // is given the partition: one holder per message across generations.
    for (Offset o : s.held_offsets()) s.fail(o, Failure{"revoked", now});
    if (g.push) {
      // The handler call still running keeps the offer slot (R15) until it returns, so
      // the new owner's first call starts after it. Its message is no longer held (failed
      // above), so its result could change nothing; voided, it also does not count as a
      // failure toward the dispatcher's retry back-off.
      s.offers.void_running();
      if (s.owner) s.members.remove(s.owner->member);
      if (!owner.empty()) s.members.add(Member{owner, g.handlers.at(owner)});
    }
  } else {
    since = s.owner->since;  // cooperative: kept partitions keep their receipts valid
  }
  s.owner = GroupOwner{owner, since, generation};
}

/// Holds the mutexes of all of a group's partition subscriptions, ascending by partition,
/// so a rebalance is one step for every ack, nack and poll (each holds one of them): no
/// answer sees one partition moved and another not yet (R32; broker_impl.h's lock order).
class AllPartitionsLocked {
 public:
  explicit AllPartitionsLocked(const ConsumerGroup& g) NO_THREAD_SAFETY_ANALYSIS : g_(g) {
    for (const ConsumerGroup::Part& part : g_.parts) part.state->mu.lock();
  }
  ~AllPartitionsLocked() NO_THREAD_SAFETY_ANALYSIS {
    for (auto it = g_.parts.rbegin(); it != g_.parts.rend(); ++it) it->state->mu.unlock();
  }
  AllPartitionsLocked(const AllPartitionsLocked&) = delete;
  AllPartitionsLocked& operator=(const AllPartitionsLocked&) = delete;
  /// move_owner on part, whose subscription's mutex this holds (the analysis cannot follow
  /// a set of locks taken by a loop, so this one call is not analysed); then saves its
  /// position and returns the ticket to wait for.
  std::uint64_t move_owner(const ConsumerGroup::Part& part, const std::string& owner, bool revoked,
                           std::uint64_t generation, Time now) const NO_THREAD_SAFETY_ANALYSIS {
    broker::move_owner(g_, *part.state, owner, revoked, generation, now);
    return part.state->save_position();
  }

 private:
  const ConsumerGroup& g_;
};

Offset start_of(const Topic& pt, bool push, const GroupOptions& options) {
  return resolve_start(*pt.log, push ? options.push.start : options.pull.start);
}

}  // namespace

std::shared_ptr<ConsumerGroup> BrokerImpl::find_group(const std::string& topic,
                                                      const std::string& group) const {
  std::shared_ptr<Topic> t = find_any_topic(topic);
  sync::MutexLock lock(t->mu);
  if (t->is_deleted()) throw UnknownTopic("no topic '" + topic + "'");
  auto it = t->consumer_groups.find(group);
  if (it == t->consumer_groups.end()) {
    throw UnknownSubscription("no consumer group '" + group + "' on '" + topic + "'");
  }
  return it->second;
}

std::shared_ptr<ConsumerGroup> BrokerImpl::make_group(const std::shared_ptr<Topic>& t,
                                                      const std::string& group, bool push,
                                                      const GroupOptions& options,
                                                      StateList& resumed) {
  // A topic without partitions is its own one (its mu is held); partitions are locked one
  // at a time, after the partitioned topic's mu (R29's order).
  const std::size_t n = std::max<std::size_t>(1, t->partitions.size());
  // First every check, so a refused join changes nothing; then create what is missing.
  std::vector<Offset> cursors(n);
  if (t->partitions.empty()) {
    if (!adoptable(*t, group, push, options)) cursors[0] = start_of(*t, push, options);
  }
  for (std::size_t p = 0; p < t->partitions.size(); ++p) {
    Topic& pt = *t->partitions[p];
    sync::MutexLock lock(pt.mu);
    if (!adoptable(pt, group, push, options)) cursors[p] = start_of(pt, push, options);
  }
  std::vector<ConsumerGroup::Part> parts;
  if (t->partitions.empty()) {
    parts.push_back(
        {0, t->name, group_subscription(*t, group, push, options, cursors[0], resumed)});
  }
  for (std::size_t p = 0; p < t->partitions.size(); ++p) {
    Topic& pt = *t->partitions[p];
    sync::MutexLock lock(pt.mu);
    parts.push_back({static_cast<std::uint32_t>(p), pt.name,
                     group_subscription(pt, group, push, options, cursors[p], resumed)});
  }
  return std::make_shared<ConsumerGroup>(group, push, options, std::move(parts));
}

StatePtr BrokerImpl::group_subscription(Topic& pt, const std::string& group, bool push,
                                        const GroupOptions& options, Offset cursor,
                                        StateList& resumed) {
  // Checked again: a subscribe of the group's name on a partition racing the join can
  // make it throw here, after earlier partitions got their subscriptions.
  if (StatePtr old = adoptable(pt, group, push, options)) {
    if (!push) return old;
    // A dormant push subscription (R20): a fresh state continues it, as subscribe does.
    StatePtr fresh;
    {
      sync::MutexLock old_lock(old->mu);
      fresh = make_state(pt, SubscriptionConfig::push(this, pt.name, group, options.push),
                         old->committed());
      sync::MutexLock fresh_lock(fresh->mu);
      fresh->continue_from(*old);
      old->offers.close();
    }
    pt.replace(old, fresh);
    pt.by_name[group] = fresh;
    resumed.push_back(old);
    return fresh;
  }
  SubscriptionConfig config = push ? SubscriptionConfig::push(this, pt.name, group, options.push)
                                   : SubscriptionConfig::pull(this, pt.name, group, options.pull);
  if (store_) store_->subscribed(pt.name, saved_of(config, cursor));  // may throw
  StatePtr s = make_state(pt, std::move(config), cursor);
  pt.add(s);
  pt.by_name[group] = s;
  return s;
}

std::vector<std::pair<StatePtr, std::uint64_t>> BrokerImpl::apply_rebalance(
    ConsumerGroup& g, std::vector<std::string> members, Time now) {
  const auto n = static_cast<std::uint32_t>(g.parts.size());
  Rebalance plan = rebalance(g.options.assignor, members, n, g.assignment);
  const std::uint64_t generation = g.generation + 1;
  std::vector<std::string> owner(n);
  for (const auto& [member, mine] : plan.assignment) {
    for (std::uint32_t p : mine) owner[p] = member;
  }
  std::vector<bool> revoked(n, false);
  for (const auto& [member, gone] : plan.revoked) {
    for (std::uint32_t p : gone) revoked[p] = true;
  }
  std::vector<std::pair<StatePtr, std::uint64_t>> saves;
  const AllPartitionsLocked locked(g);
  for (const ConsumerGroup::Part& part : g.parts) {
    saves.emplace_back(part.state, locked.move_owner(part, owner[part.partition],
                                                     revoked[part.partition], generation, now));
  }
  g.members = std::move(members);
  g.generation = generation;
  g.assignment = std::move(plan.assignment);
  return saves;
}

Membership BrokerImpl::join_group(const std::string& topic, const std::string& group,
                                  const std::string& member, const Handler* handler,
                                  const GroupOptions& options) {
  require(!group.empty(), "group must not be empty");
  require(!member.empty(), "member must not be empty");
  const bool push = handler != nullptr;
  if (push) {
    validate(group, *handler, options.push);
    require(options.push.group.empty(), "a consumer group's push options name no group (R10)");
  } else {
    validate(group, options.pull);
  }
  const Time now = clock_->now();  // read with no lock held
  std::shared_ptr<Topic> t = find_any_topic(topic);
  std::vector<std::pair<StatePtr, std::uint64_t>> saves;
  StateList resumed;
  std::shared_ptr<ConsumerGroup> g;
  bool made = false;
  Membership out;
  {
    sync::MutexLock lock(t->mu);
    if (t->is_deleted()) throw UnknownTopic("no topic '" + topic + "'");
    if (auto it = t->consumer_groups.find(group); it != t->consumer_groups.end()) {
      g = it->second;
      if (g->push != push) {
        throw WrongKind("consumer group '" + group + "' on '" + topic + "' is a " +
                        (g->push ? "push" : "pull") + " group");
      }
      if (g->options.assignor != options.assignor) {
        throw OptionsMismatch("assignor", "consumer group '" + group + "' has another assignor");
      }
      const SubscriptionConfig& c = g->parts.front().state->config();
      if (auto option = push ? first_mismatch(c, options.push) : first_mismatch(c, options.pull)) {
        throw OptionsMismatch(*option,
                              "consumer group '" + group + "' exists with another " + *option);
      }
    } else {
      g = make_group(t, group, push, options, resumed);
      t->consumer_groups[group] = g;
      made = true;
    }
    sync::MutexLock group_lock(g->mu);
    if (!is_member(*g, member)) {
      if (push) g->handlers[member] = std::make_shared<const Handler>(*handler);
      std::vector<std::string> members = g->members;
      members.push_back(member);
      saves = apply_rebalance(*g, std::move(members), now);
    }
    out = membership_of(*g, member);
  }
  for (const auto& [s, ticket] : saves) s->wait_saved(ticket);
  if (push) {
    for (const StatePtr& old : resumed) dispatcher_->detach(old);
    for (const ConsumerGroup::Part& part : g->parts) {
      if (made) dispatcher_->attach(part.state);
      dispatcher_->notify(part.state);
    }
  }
  return out;
}

bool BrokerImpl::leave_group(const std::string& topic, const std::string& group,
                             const std::string& member) {
  const Time now = clock_->now();
  std::shared_ptr<ConsumerGroup> g = find_group(topic, group);
  std::vector<std::pair<StatePtr, std::uint64_t>> saves;
  {
    sync::MutexLock lock(g->mu);
    if (!is_member(*g, member)) return false;
    std::vector<std::string> members = g->members;
    std::erase(members, member);
    saves = apply_rebalance(*g, std::move(members), now);
    g->handlers.erase(member);
  }
  for (const auto& [s, ticket] : saves) s->wait_saved(ticket);
  if (g->push) {
    for (const ConsumerGroup::Part& part : g->parts) {
      wait_for_offer_end(*part.state, member, waits_);  // R9: its handler runs no more
      dispatcher_->notify(part.state);
    }
  }
  return true;
}

Membership BrokerImpl::membership(const std::string& topic, const std::string& group,
                                  const std::string& member) const {
  std::shared_ptr<ConsumerGroup> g = find_group(topic, group);
  sync::MutexLock lock(g->mu);
  if (!is_member(*g, member)) throw UnknownSubscription(no_member(member, group, topic));
  return membership_of(*g, member);
}

std::vector<Received> BrokerImpl::poll_group(const std::string& topic, const std::string& group,
                                             const std::string& member, std::size_t max_messages,
                                             Time now) {
  require(max_messages > 0, "max_messages must be > 0");
  require(!member.empty(), "member must not be empty");
  std::shared_ptr<ConsumerGroup> g = find_group(topic, group);
  if (g->push) {
    throw WrongKind("consumer group '" + group + "' on '" + topic + "' is a push group");
  }
  const Time deadline = now + g->options.pull.ack_timeout;
  std::vector<Received> out;
  std::vector<std::pair<StatePtr, std::uint64_t>> saves;
  {
    // The group's mu for the whole poll: no rebalance can move a partition in between.
    sync::MutexLock lock(g->mu);
    if (!is_member(*g, member)) throw UnknownSubscription(no_member(member, group, topic));
    const std::vector<std::uint32_t> mine = membership_of(*g, member).partitions;
    for (std::uint32_t p : mine) {
      sync::MutexLock state_lock(g->parts[p].state->mu);
      g->parts[p].state->catch_up();
    }
    // One message from each of its partitions in turn, lowest partition first, so a busy
    // partition cannot starve the others.
    for (bool took = true; took && out.size() < max_messages;) {
      took = false;
      for (std::uint32_t p : mine) {
        if (out.size() >= max_messages) break;
        const ConsumerGroup::Part& part = g->parts[p];
        SubscriptionState& s = *part.state;
        sync::MutexLock state_lock(s.mu);
        const std::size_t bound = s.config().max_in_flight;
        if (bound != 0 && s.held_count() >= bound) continue;  // R22, per partition
        std::optional<Held> held = s.take_next(member, deadline, now);
        if (!held) continue;
        const Offset offset = held->message->offset();
        out.push_back(Received{std::move(held->message), held->attempt, held->deadline,
                               Receipt{part.topic, group, member, offset, g->generation}});
        took = true;
      }
    }
    for (std::uint32_t p : mine) {
      SubscriptionState& s = *g->parts[p].state;
      sync::MutexLock state_lock(s.mu);
      saves.emplace_back(g->parts[p].state,
                         s.save_position(s.config().durable_attempts && !out.empty()));
    }
  }
  for (const auto& [s, ticket] : saves) s->wait_saved(ticket);
  if (expiry_ && !out.empty()) expiry_->arm(deadline);
  return out;
}

GroupStats BrokerImpl::group_stats(const std::string& topic, const std::string& group) const {
  const Time now = clock_->now();
  std::shared_ptr<ConsumerGroup> g = find_group(topic, group);
  GroupStats out;
  sync::MutexLock lock(g->mu);
  out.generation = g->generation;
  out.members = g->members;
  out.assignment = g->assignment;
  for (const ConsumerGroup::Part& part : g->parts) {
    SubscriptionState& s = *part.state;
    sync::MutexLock state_lock(s.mu);
    s.catch_up();
    out.partitions.push_back(PartitionStats{part.partition, part.topic,
                                            s.owner ? s.owner->member : std::string(),
                                            s.log()->end(), s.committed(), s.lag(now)});
  }
  return out;
}

}  // namespace broker
