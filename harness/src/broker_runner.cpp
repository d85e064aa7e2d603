// The broker runner: the same ops as the model runner, against broker::Broker.
#include "harness/broker_runner.h"

#include <iterator>
#include <map>
#include <optional>
#include <random>
#include <stdexcept>

#include "broker/idempotent.h"

namespace harness {

model::ErrorCode to_model(broker::ErrorCode code) {
  using B = broker::ErrorCode;
  using M = model::ErrorCode;
  switch (code) {
    case B::kUnknownTopic:
      return M::kUnknownTopic;
    case B::kDuplicateTopic:
      return M::kDuplicateTopic;
    case B::kTopicInUse:
      return M::kTopicInUse;
    case B::kUnknownSubscription:
      return M::kUnknownSubscription;
    case B::kDuplicateSubscription:
      return M::kDuplicateSubscription;
    case B::kOptionsMismatch:
      return M::kOptionsMismatch;
    case B::kWrongKind:
      return M::kWrongKind;
    case B::kOffsetOutOfRange:
      return M::kOffsetOutOfRange;
    case B::kInvalidArgument:
      return M::kInvalidArgument;
    case B::kReentrantDrain:
      return M::kReentrantDrain;
    case B::kNotSynchronous:
      return M::kNotSynchronous;
    case B::kIoError:
      return M::kIoError;
    case B::kCorruptLog:
      return M::kCorruptLog;
    case B::kStorageLocked:
      return M::kStorageLocked;
    case B::kNotBrokerStorage:
      return M::kNotBrokerStorage;
    case B::kUnsupportedFormat:
      return M::kUnsupportedFormat;
    case B::kPartitionOutOfRange:
      return M::kPartitionOutOfRange;
  }
  throw std::logic_error("unknown broker::ErrorCode");
}

namespace {

broker::StartPosition to_broker(const model::Start& s) {
  switch (s.kind) {
    case model::Start::Kind::kEnd:
      return broker::StartPosition::end();
    case model::Start::Kind::kBeginning:
      return broker::StartPosition::beginning();
    case model::Start::Kind::kOffset:
      return broker::StartPosition::at(s.offset);
  }
  return broker::StartPosition::end();
}

model::Millis to_model(broker::Time t) { return t.time_since_epoch().count(); }

// R11: the broker's answer as the model names it, outcome by outcome.
oplang::Value to_model(broker::AckResult r) {
  using B = broker::AckOutcome;
  using M = model::AckOutcome;
  switch (r.outcome) {
    case B::kAccepted:
      return model::AckResult{M::kAccepted};
    case B::kStaleGeneration:
      return model::AckResult{M::kStaleGeneration};
    case B::kUnknownOffset:
      return model::AckResult{M::kUnknownOffset};
    case B::kAlreadySettled:
      return model::AckResult{M::kAlreadySettled};
    case B::kNotHolder:
      return model::AckResult{M::kNotHolder};
    case B::kLate:
      return model::AckResult{M::kLate};
  }
  throw std::logic_error("unknown broker::AckOutcome");
}

broker::Time to_broker(model::Millis t) { return broker::at(broker::Millis{t}); }

// The op language names a pulled message by its topic, subscription, offset and member.
broker::Receipt receipt(const std::string& topic, const std::string& sub, model::Offset offset,
                        const std::string& member, std::uint64_t generation = 0) {
  return broker::Receipt{topic, sub, member, offset, generation};
}

// A holder keeps its message alive however long it holds it (R3): a handed-out pointer that
// owns nothing is a finding (it reads freed memory once retention lets the message go).
const broker::MessagePtr& owned(const broker::MessagePtr& m) {
  if (m.use_count() == 0) {
    throw std::logic_error("a message at offset " + std::to_string(m->offset()) +
                           " was handed out by a pointer that does not keep it alive");
  }
  return m;
}

// Every Received must carry the receipt that names it (else a finding, not an outcome).
std::vector<model::Received> to_model(const std::vector<broker::Received>& list,
                                      const oplang::Poll& poll) {
  std::vector<model::Received> out;
  for (const broker::Received& r : list) {
    owned(r.message);
    if (r.receipt != receipt(poll.topic, poll.sub, r.message->offset(), poll.member)) {
      throw std::logic_error("poll returned a receipt that does not name its message");
    }
    out.push_back(
        {r.message->offset(), std::string(r.message->payload()), r.attempt, to_model(r.deadline)});
  }
  return out;
}

// R32: poll_group's receipts name the partition's topic, the group and the generation.
std::vector<model::Received> to_model(const std::vector<broker::Received>& list,
                                      const oplang::PollGroup& poll) {
  std::vector<model::Received> out;
  for (const broker::Received& r : list) {
    owned(r.message);
    if (r.receipt != receipt(r.receipt.topic, poll.group, r.message->offset(), poll.member,
                             r.receipt.generation)) {
      throw std::logic_error("poll_group returned a receipt that does not name its message");
    }
    out.push_back({r.message->offset(), std::string(r.message->payload()), r.attempt,
                   to_model(r.deadline), r.receipt.topic, r.receipt.generation});
  }
  return out;
}

model::Membership to_model(const broker::Membership& m) { return {m.generation, m.partitions}; }

model::GroupStats to_model(const broker::GroupStats& g) {
  model::GroupStats out{g.generation, g.members, g.assignment, {}};
  for (const broker::PartitionStats& p : g.partitions) {
    out.partitions.push_back({p.partition,
                              p.topic,
                              p.owner,
                              p.end,
                              p.committed,
                              {p.lag.messages, p.lag.oldest_age.count()}});
  }
  return out;
}

broker::Assignor to_broker(model::Assignor a) {
  switch (a) {
    case model::Assignor::kRange:
      return broker::Assignor::kRange;
    case model::Assignor::kRoundRobin:
      return broker::Assignor::kRoundRobin;
    case model::Assignor::kSticky:
      return broker::Assignor::kSticky;
    case model::Assignor::kCooperativeSticky:
      return broker::Assignor::kCooperativeSticky;
  }
  return broker::Assignor::kRange;
}

std::vector<model::Expired> to_model(const std::vector<broker::Expired>& list) {
  std::vector<model::Expired> out;
  for (const broker::Expired& e : list) {
    out.push_back({e.topic, e.subscription, e.offset, e.dead_lettered});
  }
  return out;
}

std::vector<model::DeadLetter> to_model(const std::vector<broker::DeadLetter>& list) {
  std::vector<model::DeadLetter> out;
  for (const broker::DeadLetter& d : list) {
    owned(d.message);
    out.push_back({d.topic, d.subscription, d.message->offset(), std::string(d.message->payload()),
                   d.attempts, d.reason, to_model(d.died_at), d.message->headers(),
                   std::string(d.message->key())});
  }
  return out;
}

model::Stats to_model(const broker::SubscriptionStats& s) {
  return {s.committed,   s.cursor,    s.backlog,       s.in_flight, s.delivered,
          s.redelivered, s.confirmed, s.dead_lettered, s.skipped,   s.filtered,
          s.redriven,    s.purged,    s.paused};
}

model::Lag to_model(const broker::Lag& l) { return {l.messages, l.oldest_age.count()}; }

}  // namespace

// Calls the broker for one op and returns its value; broker::Error propagates.
struct BrokerRunner::Apply {
  BrokerRunner& r;
  broker::Broker& b;
  broker::Time now() const { return r.clock_->now(); }
  // The runner's Publisher for topic, made now if it has none (throws UnknownTopic).
  broker::Publisher& publisher(const std::string& topic) const {
    auto it = r.publishers_.find(topic);
    if (it == r.publishers_.end()) it = r.publishers_.emplace(topic, b.publisher(topic)).first;
    return it->second;
  }

  oplang::Value operator()(const oplang::CreateTopic& o) const {
    broker::TopicOptions options{o.retention_messages, o.retention_bytes};
    options.partitions = o.partitions;
    options.partitioner = o.partitioner == model::Partitioner::kJavaHashCode
                              ? broker::Partitioner::kJavaHashCode
                              : broker::Partitioner::kMurmur2;
    if (o.if_absent) return oplang::BoolResult{b.create_topic_if_absent(o.name, options)};
    b.create_topic(o.name, options);
    return oplang::Done{};
  }
  oplang::Value operator()(const oplang::DeleteTopic& o) const {
    b.delete_topic(o.name);
    return oplang::Done{};
  }
  oplang::Value operator()(const oplang::Publish& o) const {
    const broker::Placement p = o.via_publisher
                                    ? publisher(o.topic).send(o.payload, o.headers, o.key)
                                    : b.send(o.topic, o.payload, o.headers, o.key);
    if (b.partitions(o.topic) == 1) return oplang::OffsetResult{p.offset};
    return oplang::OffsetResult{p.offset, p.partition};
  }
  oplang::Value operator()(const oplang::PublishTo& o) const {
    return oplang::OffsetResult{b.publish_to(o.topic, o.partition, o.payload, o.headers, o.key)};
  }
  oplang::Value operator()(const oplang::Partitions& o) const {
    return oplang::PartitionsResult{b.partitions(o.topic)};
  }
  oplang::Value operator()(const oplang::Subscribe& o) const {
    auto handler = std::make_shared<Handler>(Handler{o.topic, o.name, o.script, 0});
    BrokerRunner* runner = &r;
    broker::PushOptions options;
    options.header_filter = o.filter;
    options.max_deliveries = o.max_deliveries;
    options.start = to_broker(o.start);
    options.group = o.group;
    options.durable_attempts = o.durable_attempts;
    for (model::Millis wait : o.backoff) options.backoff.push_back(broker::Millis{wait});
    broker::Handler scripted = [runner, handler](const broker::Delivery& d) {
      return runner->handle(*handler, d);
    };
    if (o.idempotent) {
      // The wrapper answers a repeat without calling `scripted`: that offer is recorded here.
      scripted = [runner, handler,
                  wrapped = broker::idempotent(std::move(scripted))](const broker::Delivery& d) {
        const std::size_t before = runner->calls_.size();
        const bool confirmed = wrapped(d);
        if (runner->calls_.size() == before) runner->record_repeat(*handler, d);
        return confirmed;
      };
    }
    if (o.saved) {  // R20: the listing's names; the broker takes the saved options
      const bool group = !o.group.empty();
      b.resubscribe({o.topic, group ? o.group : o.name, group}, std::move(scripted),
                    group ? o.name : "");
      return oplang::Done{};
    }
    b.subscribe(o.topic, o.name, std::move(scripted), options);
    return oplang::Done{};
  }
  oplang::Value operator()(const oplang::SubscribePull& o) const {
    b.subscribe_pull(o.topic, o.name, pull_options(o));
    return oplang::Done{};
  }
  template <typename T>
  static broker::PullOptions pull_options(const T& o) {
    broker::PullOptions options;
    options.header_filter = o.filter;
    options.ack_timeout = broker::Millis{o.ack_timeout};
    options.max_deliveries = o.max_deliveries;
    options.start = to_broker(o.start);
    options.max_in_flight = o.max_in_flight;
    options.ordered_by_key = o.ordered_by_key;
    options.durable_attempts = o.durable_attempts;
    for (model::Millis wait : o.backoff) options.backoff.push_back(broker::Millis{wait});
    return options;
  }
  oplang::Value operator()(const oplang::JoinGroup& o) const {
    return to_model(
        b.join_group(o.topic, o.group, o.member, {to_broker(o.assignor), pull_options(o)}));
  }
  oplang::Value operator()(const oplang::JoinGroupPush& o) const {
    auto handler = std::make_shared<Handler>(Handler{o.topic, o.member, o.script, 0});
    BrokerRunner* runner = &r;
    broker::GroupOptions options;
    options.assignor = to_broker(o.assignor);
    options.push.header_filter = o.filter;
    options.push.max_deliveries = o.max_deliveries;
    options.push.start = to_broker(o.start);
    for (model::Millis wait : o.backoff) options.push.backoff.push_back(broker::Millis{wait});
    // The member's handler runs on whichever partition it owns: "self" is that partition's.
    broker::Handler scripted = [runner, handler](const broker::Delivery& d) {
      handler->topic = *d.topic;
      return runner->handle(*handler, d);
    };
    return to_model(b.join_group(o.topic, o.group, o.member, std::move(scripted), options));
  }
  oplang::Value operator()(const oplang::LeaveGroup& o) const {
    return oplang::BoolResult{b.leave_group(o.topic, o.group, o.member)};
  }
  oplang::Value operator()(const oplang::PollGroup& o) const {
    return to_model(b.poll_group(o.topic, o.group, o.member, o.max, now()), o);
  }
  oplang::Value operator()(const oplang::GetMembership& o) const {
    return to_model(b.membership(o.topic, o.group, o.member));
  }
  oplang::Value operator()(const oplang::GetGroupStats& o) const {
    return to_model(b.group_stats(o.topic, o.group));
  }
  oplang::Value operator()(const oplang::Unsubscribe& o) const {
    return oplang::BoolResult{b.unsubscribe(o.topic, o.name)};
  }
  oplang::Value operator()(const oplang::Seek& o) const {
    b.seek(o.topic, o.name, o.offset);
    return oplang::Done{};
  }
  oplang::Value operator()(const oplang::Drain&) const { return oplang::CountResult{b.drain()}; }
  oplang::Value operator()(const oplang::Poll& o) const {
    return to_model(b.poll(o.topic, o.sub, o.member, o.max, now()), o);
  }
  oplang::Value operator()(const oplang::Ack& o) const {
    return to_model(b.ack(receipt(o.topic, o.sub, by_offset(o), o.member, o.generation), now()));
  }
  oplang::Value operator()(const oplang::Nack& o) const {
    const broker::Receipt r = receipt(o.topic, o.sub, by_offset(o), o.member, o.generation);
    return to_model(o.delay ? b.nack(r, now(), broker::Millis{*o.delay}) : b.nack(r, now()));
  }
  oplang::Value operator()(const oplang::Redrive& o) const {
    return oplang::MovedResult{b.redrive(o.topic, o.name)};
  }
  oplang::Value operator()(const oplang::RedriveTo& o) const {
    return oplang::OffsetsResult{b.redrive_to(o.topic, o.name, o.to)};
  }
  oplang::Value operator()(const oplang::Purge& o) const {
    return oplang::MovedResult{b.purge_dead_letters(o.topic, o.name)};
  }
  oplang::Value operator()(const oplang::Pause& o) const {
    return oplang::BoolResult{b.pause(o.topic, o.name)};
  }
  oplang::Value operator()(const oplang::Resume& o) const {
    return oplang::BoolResult{b.resume(o.topic, o.name)};
  }
  oplang::Value operator()(const oplang::GetLag& o) const {
    return to_model(b.lag(o.topic, o.name, now()));
  }
  oplang::Value operator()(const oplang::OffsetForTime& o) const {
    return oplang::OffsetResult{b.offset_for_time(o.topic, broker::at(broker::Millis{o.time}))};
  }
  oplang::Value operator()(const oplang::SeekToTime& o) const {
    return oplang::OffsetResult{
        b.seek_to_time(o.topic, o.name, broker::at(broker::Millis{o.time}))};
  }
  oplang::Value operator()(const oplang::Term& o) const {
    return to_model(b.term(receipt(o.topic, o.sub, by_offset(o), o.member, o.generation), now()));
  }
  oplang::Value operator()(const oplang::Extend& o) const {
    return to_model(b.extend(receipt(o.topic, o.sub, by_offset(o), o.member, o.generation), now(),
                             broker::Millis{o.extension}));
  }
  oplang::Value operator()(const oplang::Expire&) const { return to_model(b.expire(now())); }
  oplang::Value operator()(const oplang::Advance& o) const {
    r.clock_->advance(broker::Millis{o.ms});
    return oplang::Done{};
  }
  oplang::Value operator()(const oplang::GetStats& o) const {
    return to_model(b.stats(o.topic, o.name));
  }
  oplang::Value operator()(const oplang::GetDeadLetters& o) const {
    return to_model(b.dead_letters(o.topic, o.name));
  }
  oplang::Value operator()(const oplang::Yield&) const { return oplang::Done{}; }
  oplang::Value operator()(const oplang::Subscriptions& o) const {
    return oplang::NamesResult{b.subscriptions(o.topic)};
  }
  oplang::Value operator()(const oplang::Topics& o) const {
    if (!o.waiting) return oplang::NamesResult{b.topics()};
    std::vector<std::string> names;  // as the model spells them
    for (const broker::WaitingSubscription& w : b.waiting_for_handler()) {
      names.push_back(w.topic + "/" + w.name + (w.group ? " group" : ""));
    }
    return oplang::NamesResult{std::move(names)};
  }
  // poll_wait polls at the broker's clock: the runner's ManualClock, the model's `now`.
  oplang::Value operator()(const oplang::PollWait& o) const {
    return to_model(b.poll_wait(o.topic, o.sub, o.member, o.max, broker::Millis{o.timeout}),
                    oplang::Poll{o.topic, o.sub, o.member, o.max});
  }
  oplang::Value operator()(const oplang::WaitIdle& o) const {
    return oplang::BoolResult{b.wait_idle(broker::Millis{o.timeout})};
  }
  oplang::Value operator()(const oplang::WaitDelivered& o) const {
    return oplang::BoolResult{b.wait_delivered(broker::Millis{o.timeout})};
  }
  oplang::Value operator()(const oplang::EndOffset& o) const {
    return oplang::OffsetResult{b.end_offset(o.topic)};
  }
  oplang::Value operator()(const oplang::OldestOffset& o) const {
    return oplang::OffsetResult{b.oldest_offset(o.topic)};
  }
  // step() runs these itself: they replace the broker.
  oplang::Value operator()(const oplang::Restart&) const { return oplang::Done{}; }
  oplang::Value operator()(const oplang::Crash&) const { return oplang::Done{}; }
  oplang::Value operator()(const oplang::Fault& o) const {
    if (!r.disk_) throw std::logic_error("fault needs the simulated disk (a durable runner)");
    using Call = broker::sim::SimFileSystem::Call;
    static constexpr Call kCalls[] = {Call::kOpen,   Call::kAppend, Call::kSync,     Call::kSyncDir,
                                      Call::kRename, Call::kRemove, Call::kTruncate, Call::kExtend};
    r.disk_->fail_next(kCalls[static_cast<std::size_t>(o.call)], o.nth,
                       o.error == oplang::DiskError::kEnospc ? std::errc::no_space_on_device
                                                             : std::errc::io_error);
    return oplang::Done{};
  }

  // A sequential script names offsets; `oldest` / `all` exist only in fiber programs.
  template <typename T>
  static model::Offset by_offset(const T& o) {
    if (o.which != oplang::Which::kOffset) {
      throw std::invalid_argument("oldest / all are for concurrent programs, not scripts");
    }
    return o.offset;
  }
};

BrokerRunner::BrokerRunner()
    : clock_(std::make_shared<broker::ManualClock>(to_broker(0))),
      broker_(std::make_unique<broker::Broker>(
          broker::BrokerOptions::synchronous().with_clock(clock_))) {}

BrokerRunner::BrokerRunner(DurableSetup setup)
    : clock_(std::make_shared<broker::ManualClock>(to_broker(0))), setup_(std::move(setup)) {
  if (setup_->directory.empty()) {
    disk_ = setup_->disk ? setup_->disk : std::make_shared<broker::sim::SimFileSystem>();
  }
  broker_ = open();
}

BrokerRunner::~BrokerRunner() = default;

std::unique_ptr<broker::Broker> BrokerRunner::open() {
  broker::StorageOptions o;
  // A null file system is the real one.
  o.directory = setup_->directory.empty() ? "/store" : setup_->directory;
  o.file_system = disk_;
  o.publish_sync = setup_->publish_sync;
  o.commit_sync = setup_->commit_sync;
  o.segment_bytes = setup_->segment_bytes;
  o.journal_compact_bytes = setup_->journal_compact_bytes;
  o.repair = setup_->repair;
  return std::make_unique<broker::Broker>(
      broker::BrokerOptions::synchronous().with_clock(clock_).with_storage(o));
}

void BrokerRunner::reopen(const oplang::Op& op) {
  if (!setup_) throw std::logic_error("restart and crash need a durable runner (DurableSetup)");
  const auto* crash = std::get_if<oplang::Crash>(&op);
  if (crash != nullptr && !disk_) {
    throw std::logic_error("crash needs the simulated disk: kill the process on a real one");
  }
  // A fault that has not fired is forgotten (also by the close): it is for the calls
  // between two reopens.
  if (disk_) disk_->disarm_failures();
  publishers_.clear();  // before their broker
  broker_.reset();      // its handlers die with it
  if (crash != nullptr) {
    broker::sim::SimFileSystem::CrashOptions cut;
    cut.seed = crash->seed;
    disk_->crash(cut);
  }
  broker_ = open();
}

namespace {

// The base offset of a segment file "<dir>/<base>.seg" (nullopt for any other file).
std::optional<broker::Offset> segment_base(const std::string& path) {
  if (!path.ends_with(".seg")) return std::nullopt;
  const std::size_t from = path.rfind('/') + 1;
  const std::string digits = path.substr(from, path.size() - 4 - from);
  if (digits.empty() || digits.find_first_not_of("0123456789") != std::string::npos)
    return std::nullopt;
  return std::stoull(digits);
}

}  // namespace

oplang::CutResult BrokerRunner::reopen_damaged(const oplang::Crash& crash) {
  if (!setup_ || !disk_)
    throw std::logic_error("crash needs a durable runner on the simulated disk");
  // The power cut and a first reopen, which decides what the cut kept (and an undecided
  // call, R33): every log's end then, and a clean close. The damage comes after, at rest.
  reopen(oplang::Crash{crash.seed});
  std::map<std::string, broker::Offset> ends;
  for (const std::string& name : broker_->topics()) {
    const std::uint32_t parts = broker_->partitions(name);
    for (std::uint32_t p = 0; p < parts; ++p) {
      const std::string log = parts > 1 ? broker::partition_name(name, p) : name;
      ends[log] = broker_->end_offset(log);
    }
  }
  broker_.reset();
  // The damage, drawn from the seed: a topic directory, then its newest segment (truncate)
  // or any of its segments (corrupt), then a byte (and a bit).
  std::mt19937_64 rng(crash.seed);
  std::map<std::string, std::map<broker::Offset, std::string>> segments;  // by directory
  for (const std::string& f : disk_->files()) {
    if (auto base = segment_base(f)) segments[f.substr(0, f.rfind('/'))][*base] = f;
  }
  oplang::CutResult out;
  if (!segments.empty()) {
    const auto& segs =
        std::next(segments.begin(), static_cast<long>(rng() % segments.size()))->second;
    auto seg = crash.damage == oplang::Damage::kTruncate
                   ? std::prev(segs.end())
                   : std::next(segs.begin(), static_cast<long>(rng() % segs.size()));
    out.file = seg->second;
    out.damaged = seg->first;
    out.newest = segs.rbegin()->first;
    const std::uint64_t size = disk_->size(seg->second);
    if (size > 0) {
      const std::uint64_t at = rng() % size;
      if (crash.damage == oplang::Damage::kTruncate) {
        disk_->cut(seg->second, at);
      } else {
        disk_->flip_bit(seg->second, at, static_cast<int>(rng() % 8));
      }
    }
  }
  try {
    broker_ = open();
  } catch (const broker::Error& e) {
    if (e.code() != broker::ErrorCode::kCorruptLog) throw;
    out.corrupt = true;
    const bool repair = setup_->repair;
    setup_->repair = true;  // R21: the operator's way on
    try {
      broker_ = open();
    } catch (...) {
      setup_->repair = repair;
      throw;
    }
    setup_->repair = repair;
  }
  out.noticed = out.corrupt || !broker_->recovery().truncations.empty();
  for (const auto& [log, before] : ends) {
    const broker::Offset after = broker_->end_offset(log);
    if (after < before) {
      out.topic = log;
      out.end = after;
      out.oldest = broker_->oldest_offset(log);
      break;
    }
  }
  return out;
}

oplang::Outcome BrokerRunner::step(const oplang::Op& op) {
  oplang::Outcome out;
  calls_.clear();
  calls_alive_ = 0;
  if (!broker_) throw std::logic_error("the durable broker could not be opened again");
  try {
    if (const auto* c = std::get_if<oplang::Crash>(&op);
        c != nullptr && c->damage != oplang::Damage::kNone) {
      out.value = reopen_damaged(*c);
      return out;
    }
    if (std::holds_alternative<oplang::Restart>(op) || std::holds_alternative<oplang::Crash>(op)) {
      reopen(op);
      out.value = oplang::Done{};
      return out;
    }
    out.value = std::visit(Apply{*this, *broker_}, op);
  } catch (const broker::Error& e) {
    out.error = to_model(e.code());
    out.value = oplang::Done{};
  }
  out.calls.swap(calls_);
  return out;
}

oplang::Outcome BrokerRunner::step_pull(const oplang::Op& op) {
  if (!std::holds_alternative<oplang::Poll>(op) && !std::holds_alternative<oplang::Ack>(op) &&
      !std::holds_alternative<oplang::Nack>(op)) {
    throw std::invalid_argument("step_pull runs poll, ack and nack only");
  }
  if (!broker_) throw std::logic_error("the durable broker could not be opened again");
  oplang::Outcome out;
  try {
    out.value = std::visit(Apply{*this, *broker_}, op);
  } catch (const broker::Error& e) {
    out.error = to_model(e.code());
    out.value = oplang::Done{};
  }
  return out;
}

// Script: record the call, run the step's side effect, then end with its verdict.
bool BrokerRunner::handle(Handler& handler, const broker::Delivery& delivery) {
  if (!disk_ || !disk_->crashed()) ++calls_alive_;
  calls_.push_back({*delivery.topic, handler.name, delivery.message->offset(),
                    std::string(delivery.message->payload()), delivery.attempt, ""});
  const std::size_t index = calls_.size() - 1;
  const model::Step step =
      handler.next_step < handler.script.size() ? handler.script[handler.next_step] : model::Step{};
  handler.next_step += 1;
  std::string effect = run_effect(step, handler);
  calls_[index].effect = std::move(effect);
  return oplang::end_with<broker::Terminate>(step.verdict);
}

void BrokerRunner::record_repeat(const Handler& handler, const broker::Delivery& delivery) {
  calls_.push_back({*delivery.topic, handler.name, delivery.message->offset(),
                    std::string(delivery.message->payload()), delivery.attempt,
                    "idempotent -> repeat"});
}

std::string BrokerRunner::run_effect(const model::Step& step, const Handler& handler) {
  using model::EffectKind;
  broker::Broker& b = *broker_;
  try {
    switch (step.effect) {
      case EffectKind::kNone:
        return "";
      case EffectKind::kUnsubscribeSelf:
        return model::effect_result(step.effect,
                                    b.unsubscribe(handler.topic, handler.name) ? "true" : "false");
      case EffectKind::kUnsubscribe:
        return model::effect_result(step.effect,
                                    b.unsubscribe(step.topic, step.name) ? "true" : "false");
      case EffectKind::kPublish:
        return model::effect_result(step.effect,
                                    std::to_string(b.publish(step.topic, step.payload)));
      case EffectKind::kSeek:
        b.seek(step.topic, step.name, step.offset);
        return model::effect_result(step.effect, "ok");
      case EffectKind::kDrain:
        return model::effect_result(step.effect, std::to_string(b.drain()));
      case EffectKind::kStall:  // sequentially a stall changes nothing (oplang/script.h)
        return model::effect_result(step.effect, "ok");
    }
  } catch (const broker::Error& e) {
    return model::effect_result(step.effect, model::to_string(to_model(e.code())));
  }
  return "";
}

bool needs_storage(const oplang::Script& script) {
  for (const oplang::Op& op : script) {
    if (std::holds_alternative<oplang::Restart>(op) || std::holds_alternative<oplang::Crash>(op) ||
        std::holds_alternative<oplang::Fault>(op)) {
      return true;
    }
  }
  return false;
}

std::unique_ptr<BrokerRunner> runner_for(const oplang::Script& script) {
  return needs_storage(script) ? std::make_unique<BrokerRunner>(DurableSetup{})
                               : std::make_unique<BrokerRunner>();
}

std::vector<oplang::Outcome> run_broker(const oplang::Script& script) {
  BrokerRunner runner;
  std::vector<oplang::Outcome> out;
  for (const oplang::Op& op : script) out.push_back(runner.step(op));
  return out;
}

std::vector<oplang::Outcome> run_broker(const oplang::Script& script, const DurableSetup& setup) {
  BrokerRunner runner(setup);
  std::vector<oplang::Outcome> out;
  for (const oplang::Op& op : script) out.push_back(runner.step(op));
  return out;
}

}  // namespace harness
