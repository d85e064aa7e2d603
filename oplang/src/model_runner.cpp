// Runs ops against model::Model.
#include "oplang/model_runner.h"

#include <stdexcept>

namespace oplang {
namespace {

// Calls the model for one op and returns its value; model::Error propagates.
struct Apply {
  model::Model& m;

  // R11: an answer names its outcome, unless the profile's engine says only yes or no.
  Value answer(model::AckResult r) const {
    if (m.profile().answers_name_no_reason) return BoolResult{static_cast<bool>(r)};
    return r;
  }

  Value operator()(const CreateTopic& o) const {
    if (o.if_absent) {
      return BoolResult{m.create_topic_if_absent(o.name, o.retention_messages, o.retention_bytes,
                                                 o.partitions, o.partitioner)};
    }
    m.create_topic(o.name, o.retention_messages, o.retention_bytes, o.partitions, o.partitioner);
    return Done{};
  }
  Value operator()(const DeleteTopic& o) const {
    m.delete_topic(o.name);
    return Done{};
  }
  Value operator()(const Publish& o) const {
    const model::Placement p = m.send(o.topic, o.payload, o.headers, o.key);
    if (m.partitions(o.topic) == 1) return OffsetResult{p.offset};
    return OffsetResult{p.offset, p.partition};
  }
  Value operator()(const PublishTo& o) const {
    return OffsetResult{m.publish_to(o.topic, o.partition, o.payload, o.headers, o.key)};
  }
  Value operator()(const Partitions& o) const { return PartitionsResult{m.partitions(o.topic)}; }
  Value operator()(const Subscribe& o) const {
    if (o.saved) {
      m.resubscribe(o.topic, o.name, {{}, 5, {}, o.group, o.script, o.idempotent, {}, false});
      return Done{};
    }
    m.subscribe(o.topic, o.name,
                {o.filter, o.max_deliveries, o.start, o.group, o.script, o.idempotent, o.backoff,
                 o.durable_attempts});
    return Done{};
  }
  Value operator()(const SubscribePull& o) const {
    m.subscribe_pull(o.topic, o.name,
                     {o.filter, o.ack_timeout, o.max_deliveries, o.start, o.max_in_flight,
                      o.backoff, o.ordered_by_key, o.durable_attempts});
    return Done{};
  }
  Value operator()(const Unsubscribe& o) const {
    return BoolResult{m.unsubscribe(o.topic, o.name)};
  }
  Value operator()(const Seek& o) const {
    m.seek(o.topic, o.name, o.offset);
    return Done{};
  }
  Value operator()(const Drain&) const { return CountResult{m.drain()}; }
  Value operator()(const Poll& o) const { return m.poll(o.topic, o.sub, o.member, m.now(), o.max); }
  Value operator()(const Ack& o) const {
    return answer(m.ack(o.topic, o.sub, by_offset(o), o.member, m.now(), o.generation));
  }
  Value operator()(const Nack& o) const {
    return answer(m.nack(o.topic, o.sub, by_offset(o), o.member, m.now(), o.delay, o.generation));
  }
  Value operator()(const Redrive& o) const { return MovedResult{m.redrive(o.topic, o.name)}; }
  Value operator()(const RedriveTo& o) const {
    return OffsetsResult{m.redrive_to(o.topic, o.name, o.to)};
  }
  Value operator()(const Purge& o) const {
    return MovedResult{m.purge_dead_letters(o.topic, o.name)};
  }
  Value operator()(const Pause& o) const { return BoolResult{m.pause(o.topic, o.name)}; }
  Value operator()(const Resume& o) const { return BoolResult{m.resume(o.topic, o.name)}; }
  Value operator()(const GetLag& o) const { return m.lag(o.topic, o.name, m.now()); }
  Value operator()(const OffsetForTime& o) const {
    return OffsetResult{m.offset_for_time(o.topic, o.time)};
  }
  Value operator()(const SeekToTime& o) const {
    return OffsetResult{m.seek_to_time(o.topic, o.name, o.time)};
  }
  Value operator()(const Term& o) const {
    return answer(m.term(o.topic, o.sub, by_offset(o), o.member, m.now(), o.generation));
  }
  Value operator()(const Extend& o) const {
    return answer(
        m.extend(o.topic, o.sub, by_offset(o), o.member, m.now(), o.extension, o.generation));
  }
  Value operator()(const JoinGroup& o) const {
    return m.join_group(o.topic, o.group, o.member, o.assignor,
                        {o.filter, o.ack_timeout, o.max_deliveries, o.start, o.max_in_flight,
                         o.backoff, o.ordered_by_key, o.durable_attempts});
  }
  Value operator()(const JoinGroupPush& o) const {
    model::PushOptions options;
    options.header_filter = o.filter;
    options.max_deliveries = o.max_deliveries;
    options.start = o.start;
    options.script = o.script;
    options.backoff = o.backoff;
    return m.join_group_push(o.topic, o.group, o.member, o.assignor, options);
  }
  Value operator()(const LeaveGroup& o) const {
    return BoolResult{m.leave_group(o.topic, o.group, o.member)};
  }
  Value operator()(const PollGroup& o) const {
    return m.poll_group(o.topic, o.group, o.member, m.now(), o.max);
  }
  Value operator()(const GetMembership& o) const {
    return m.membership(o.topic, o.group, o.member);
  }
  Value operator()(const GetGroupStats& o) const { return m.group_stats(o.topic, o.group); }
  Value operator()(const Expire&) const { return m.expire(m.now()); }
  Value operator()(const Advance& o) const {
    m.advance(o.ms);
    return Done{};
  }
  Value operator()(const GetStats& o) const { return m.stats(o.topic, o.name); }
  Value operator()(const GetDeadLetters& o) const { return m.dead_letters(o.topic, o.name); }
  Value operator()(const Yield&) const { return Done{}; }
  Value operator()(const Subscriptions& o) const { return NamesResult{m.subscriptions(o.topic)}; }
  Value operator()(const Topics& o) const {
    return NamesResult{o.waiting ? m.waiting_for_handler() : m.topics()};
  }
  Value operator()(const PollWait& o) const {
    return m.poll_wait(o.topic, o.sub, o.member, o.max, o.timeout);
  }
  Value operator()(const WaitIdle& o) const { return BoolResult{m.wait_idle(o.timeout)}; }
  Value operator()(const WaitDelivered& o) const { return BoolResult{m.wait_delivered(o.timeout)}; }
  Value operator()(const EndOffset& o) const { return OffsetResult{m.end_offset(o.topic)}; }
  Value operator()(const OldestOffset& o) const { return OffsetResult{m.oldest_offset(o.topic)}; }
  // R20: under FsyncPolicy::always a crash between calls loses nothing that returned.
  Value operator()(const Restart&) const {
    m.restart();
    return Done{};
  }
  // A crash with damage (R21) too: what recovery cuts is the broker's to say, and
  // harness::ModelStates judges it (Model::lose_tail); the model alone restarts.
  Value operator()(const Crash&) const {
    m.restart();
    return Done{};
  }
  // R33: the model cannot tell which call meets a disk fault; the comparator judges the
  // IoError when one comes (properties/state_machine.h).
  Value operator()(const Fault&) const { return Done{}; }

  // A sequential script names offsets; `oldest` / `all` exist only in fiber programs.
  template <typename T>
  static Offset by_offset(const T& o) {
    if (o.which != Which::kOffset) {
      throw std::invalid_argument("oldest / all are for concurrent programs, not scripts");
    }
    return o.offset;
  }
};

}  // namespace

namespace {

/// Whether op is a call of the broker's (R33 refuses those once the storage failed), not
/// the test's clock, a scheduling point, a reopen or a fault of the disk.
bool broker_call(const Op& op) {
  return !std::holds_alternative<Advance>(op) && !std::holds_alternative<Yield>(op) &&
         !std::holds_alternative<Restart>(op) && !std::holds_alternative<Crash>(op) &&
         !std::holds_alternative<Fault>(op);
}

}  // namespace

Outcome ModelRunner::step(const Op& op) {
  Outcome out;
  try {
    if (broker_call(op)) model_.check_storage();
    out.value = std::visit(Apply{model_}, op);
  } catch (const model::Error& e) {
    out.error = e.code();
    out.value = Done{};
  }
  out.calls = model_.take_calls();
  return out;
}

std::vector<Outcome> run(const Script& script) {
  ModelRunner runner;
  std::vector<Outcome> out;
  for (const Op& op : script) out.push_back(runner.step(op));
  return out;
}

}  // namespace oplang
