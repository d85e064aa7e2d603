#include "oplang/byte_decoder.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>

#include "FuzzedDataProvider.h"

namespace fuzzing {
namespace {

const std::vector<std::string> kTopics = {"t0", "t1", "t2"};
const std::vector<std::string> kSubs = {"s0", "s1", "s2", "s3"};
const std::vector<std::string> kMembers = {"w0", "w1", "w2"};
const std::vector<std::string> kGroups = {"", "g0", "g1"};
const std::vector<model::Headers> kHeaders = {
    {}, {{"type", "created"}}, {{"type", "paid"}}, {{"type", "created"}, {"prio", "high"}}};
const std::vector<model::Millis> kTimeouts = {10, 20, 30};
const std::vector<model::Millis> kAdvances = {0, 1, 5, 10, 20, 30};
const std::vector<model::Millis> kWaits = {0, 1};
// R29: keys that spread over partitions; "polygenelubricants" is the Java hash -2^31.
const std::vector<std::string> kKeys = {"",        "k",       "order-0",           "order-1",
                                        "order-2", "order-3", "polygenelubricants"};

// Escape kind bytes (byte_decoder.h): no committed input reads one of them as a kind byte.
constexpr std::uint8_t kPollWait = 200;              // and 201
constexpr std::uint8_t kWaitIdle = 202;              //
constexpr std::uint8_t kWaitDelivered = 203;         //
constexpr std::uint8_t kIdempotentSubscribe = 204;   // and 205
constexpr std::uint8_t kSubscriptions = 206;         //
constexpr std::uint8_t kTopicsKind = 207;            //
constexpr std::uint8_t kEndOffset = 209;             // 208: a committed input reads it
constexpr std::uint8_t kOldestOffset = 210;          //
constexpr std::uint8_t kRestart = 211;               // durable runners only
constexpr std::uint8_t kCrash = 212;                 // a seed below kDamageSeeds, or a fault
constexpr std::uint8_t kDamageSeeds = 192;           // kCrash's bytes from here: damage (R21),
constexpr std::uint8_t kCorruptSeeds = 208;          // truncate below this, corrupt from it
constexpr std::uint8_t kFaultSeeds = 224;            // kCrash's bytes from here: fault (R33)
constexpr std::uint8_t kTerm = 213;                  // ack's fields (R23)
constexpr std::uint8_t kBoundedPull = 214;           // subscribe_pull's, then max_in_flight 0..3
constexpr std::uint8_t kTerminatingSubscribe = 215;  // and 216 idempotent: verdicts 0..4
constexpr std::uint8_t kDelayedNack = 217;           // ack's fields, then a delay (R24)
constexpr std::uint8_t kBackoffPull = 218;           // 214's, then 1..3 back-off waits (R24)
constexpr std::uint8_t kRedrive = 219;               // topic, sub (R25)
constexpr std::uint8_t kPurge = 221;                 // topic, sub (R25)
constexpr std::uint8_t kPause = 222;                 // topic, sub (R26)
constexpr std::uint8_t kResume = 223;                // topic, sub (R26)
constexpr std::uint8_t kLag = 224;                   // topic, sub (R27)
constexpr std::uint8_t kOffsetForTime = 225;         // topic, time 0..255 ms (R28)
constexpr std::uint8_t kSeekToTime = 226;            // topic, sub, time 0..255 ms (R28)
constexpr std::uint8_t kRedriveTo = 227;             // topic, sub, topic (R25)
constexpr std::uint8_t kBackoffSubscribe = 230;      // 215's, idempotent 0/1, 1..3 waits (R24)
constexpr std::uint8_t kPartitionedTopic = 231;      // topic, 0..4 messages, 2..4 partitions,
                                                     // partitioner 0/1 (R29)
constexpr std::uint8_t kPublishTo = 232;             // topic, partition 0..3, payload, key (R29)
constexpr std::uint8_t kOnPartition = 233;           // partition 0..2, then an op on topic-p
constexpr std::uint8_t kKeyedPublish = 234;          // publish's fields, a key from kKeys
constexpr std::uint8_t kPartitionsKind = 235;        // topic (R29)
constexpr std::uint8_t kOrderedPull = 236;           // 214's, then 0..3 back-off waits (R31)
constexpr std::uint8_t kJoinGroup = 237;             // form 0/1, topic, group, member, assignor
                                                     // 0..3; form 0: subscribe_pull's options,
                                                     // ordered 0/1; form 1 (push): filter, max,
                                                     // start, a script (5 verdicts), 0..3 waits
                                                     // (R32)
constexpr std::uint8_t kLeaveGroup = 238;            // topic, group, member (R32)
constexpr std::uint8_t kPollGroup = 239;             // topic, group, member, max 0..3 (R32)
constexpr std::uint8_t kGroupStats = 240;            // topic, group (R32)
constexpr std::uint8_t kMembership = 241;            // topic, group, member (R32)
constexpr std::uint8_t kWithGeneration = 243;        // 0 ack, 1 nack, 2 term, 3 extend, 4 delayed
                                                     // nack; a generation 0..255; then its fields
constexpr std::uint8_t kViaPublisher = 249;          // 234's fields, through a Publisher (R2)
constexpr std::uint8_t kResubscribe = 250;           // topic, sub, group, a script (5 verdicts),
                                                     // idempotent 0/1 (R20)
// (220, 228, 229, 242 and 244-248 are no escapes: committed inputs read them as kind bytes.)

/// Reads one-byte choices from the end of the input, FuzzedDataProvider's way.
class Reader {
 public:
  Reader(const std::uint8_t* data, std::size_t size) : in_(data, size) {}
  bool empty() { return in_.remaining_bytes() == 0; }
  std::uint8_t byte() { return in_.ConsumeIntegral<std::uint8_t>(); }
  std::size_t pick(std::size_t n) { return byte() % n; }
  template <class T>
  const T& from(const std::vector<T>& pool) {
    return pool[pick(pool.size())];
  }

 private:
  FuzzedDataProvider in_;
};

model::Start read_start(Reader& r) {
  const std::uint8_t kind = r.byte() % 3;
  const std::uint8_t offset = r.byte();
  if (kind == 1) return {model::Start::Kind::kBeginning, 0};
  if (kind == 2) return {model::Start::Kind::kOffset, offset};
  return {};
}

// `verdicts`: 4 in the frozen format; 5 (term too) behind kTerminatingSubscribe.
model::Script read_script(Reader& r, std::size_t verdicts = 4) {
  model::Script script(r.pick(5));
  for (auto& step : script) {
    step.verdict = static_cast<model::Verdict>(r.pick(verdicts));
    step.effect = static_cast<model::EffectKind>(r.pick(6));
    switch (step.effect) {
      case model::EffectKind::kUnsubscribe:
        step.topic = r.from(kTopics);
        step.name = r.from(kSubs);
        break;
      case model::EffectKind::kPublish:
        step.topic = r.from(kTopics);
        step.payload = "m" + std::to_string(r.byte());
        break;
      case model::EffectKind::kSeek:
        step.topic = r.from(kTopics);
        step.name = r.from(kSubs);
        step.offset = r.byte();
        break;
      default:
        break;
    }
  }
  return script;
}

oplang::Subscribe read_subscribe(Reader& r, std::size_t verdicts = 4) {
  oplang::Subscribe op;
  op.topic = r.from(kTopics);
  op.name = r.from(kSubs);
  op.filter = r.from(kHeaders);
  op.max_deliveries = r.pick(6);
  op.start = read_start(r);
  op.group = r.from(kGroups);
  op.script = read_script(r, verdicts);
  return op;
}

// kJoinGroup's push form, after its form byte (no byte of 0..255 is free for a kind of
// its own: committed inputs read every one that is no escape yet).
oplang::JoinGroupPush read_join_group_push(Reader& r) {
  oplang::JoinGroupPush op;
  op.topic = r.from(kTopics);
  op.group = r.from(kSubs);
  op.member = r.from(kMembers);
  op.assignor = static_cast<model::Assignor>(r.pick(4));
  op.filter = r.from(kHeaders);
  op.max_deliveries = static_cast<int>(r.pick(6));
  op.start = read_start(r);
  op.script = read_script(r, 5);
  op.backoff.resize(r.pick(4));
  for (model::Millis& wait : op.backoff) wait = r.from(kAdvances);
  return op;
}

oplang::SubscribePull read_subscribe_pull(Reader& r) {
  oplang::SubscribePull op;
  op.topic = r.from(kTopics);
  op.name = r.from(kSubs);
  op.filter = r.from(kHeaders);
  op.ack_timeout = r.from(kTimeouts);
  op.max_deliveries = r.pick(6);
  op.start = read_start(r);
  return op;
}

template <class T>
T read_ack_like(Reader& r) {
  T op{r.from(kTopics), r.from(kSubs), 0, {}};
  op.offset = r.byte();
  op.member = r.from(kMembers);
  return op;
}

oplang::Op read_op(Reader& r);

// R29: names partition p of the op's topic ("t0" becomes "t0-1").
oplang::Op on_partition(oplang::Op op, std::size_t p) {
  std::visit(
      [p](auto& o) {
        if constexpr (requires { o.topic; }) o.topic += "-" + std::to_string(p);
      },
      op);
  return op;
}

oplang::Op read_op(Reader& r) {
  using namespace oplang;  // NOLINT: op kinds
  const std::uint8_t kind = r.byte();
  switch (kind) {
    case kPartitionedTopic: {
      CreateTopic op{r.from(kTopics), r.pick(5), 0};
      op.partitions = static_cast<std::uint32_t>(2 + r.pick(3));
      op.partitioner =
          r.pick(2) == 1 ? model::Partitioner::kJavaHashCode : model::Partitioner::kMurmur2;
      return op;
    }
    case kPublishTo: {
      PublishTo op;
      op.topic = r.from(kTopics);
      op.partition = static_cast<std::uint32_t>(r.pick(4));
      op.payload = "m" + std::to_string(r.byte());
      op.key = r.from(kKeys);
      return op;
    }
    case kOnPartition: {
      const std::size_t p = r.pick(3);
      return on_partition(read_op(r), p);  // a chain of these makes t0-1-2: no such topic
    }
    case kKeyedPublish: {
      Publish op{r.from(kTopics), "m" + std::to_string(r.byte()), {}, {}};
      op.headers = r.from(kHeaders);
      op.key = r.from(kKeys);
      return op;
    }
    case kResubscribe: {
      Subscribe op;
      op.saved = true;
      op.topic = r.from(kTopics);
      op.name = r.from(kSubs);
      op.group = r.from(kGroups);
      op.script = read_script(r, 5);
      op.idempotent = r.pick(2) == 1;
      return op;
    }
    case kViaPublisher: {
      Publish op{r.from(kTopics), "m" + std::to_string(r.byte()), {}, {}};
      op.headers = r.from(kHeaders);
      op.key = r.from(kKeys);
      op.via_publisher = true;
      return op;
    }
    case kPartitionsKind:
      return Partitions{r.from(kTopics)};
    case kPollWait:
    case kPollWait + 1: {
      PollWait op{r.from(kTopics), r.from(kSubs), r.from(kMembers), 0, 0};
      op.max = r.pick(4);  // 0 is a typed error
      op.timeout = r.from(kWaits);
      return op;
    }
    case kWaitIdle:
      return WaitIdle{r.from(kWaits)};
    case kWaitDelivered:
      return WaitDelivered{r.from(kWaits)};
    case kIdempotentSubscribe:
    case kIdempotentSubscribe + 1: {
      Subscribe op = read_subscribe(r);
      op.idempotent = true;
      return op;
    }
    case kSubscriptions:
      return Subscriptions{r.from(kTopics)};
    case kTopicsKind:
      return Topics{};
    case kEndOffset:
      return EndOffset{r.from(kTopics)};
    case kOldestOffset:
      return OldestOffset{r.from(kTopics)};
    case kRestart:
      return Restart{};
    case kCrash: {
      // Its seed byte: below kDamageSeeds a crash, then a crash with damage (R21), from
      // kFaultSeeds a fault (R33) and its fields (no committed input reads a crash, so none
      // decodes differently).
      const std::uint8_t seed = r.byte();
      if (seed < kDamageSeeds) return Crash{seed};
      if (seed < kCorruptSeeds) return Crash{seed, Damage::kTruncate};
      if (seed < kFaultSeeds) return Crash{seed, Damage::kCorrupt};
      Fault op;
      op.call = static_cast<IoCall>(r.pick(8));
      op.nth = static_cast<std::uint32_t>(1 + r.pick(4));
      op.error = r.pick(2) == 1 ? DiskError::kEnospc : DiskError::kEio;
      return op;
    }
    case kTerm:
      return read_ack_like<Term>(r);
    case kBoundedPull:
    case kBackoffPull:
    case kOrderedPull: {
      SubscribePull op = read_subscribe_pull(r);
      op.max_in_flight = r.pick(4);
      if (kind == kBackoffPull) {
        op.backoff.resize(1 + r.pick(3));
        for (model::Millis& wait : op.backoff) wait = r.from(kAdvances);
      }
      if (kind == kOrderedPull) {
        op.ordered_by_key = true;
        op.backoff.resize(r.pick(4));
        for (model::Millis& wait : op.backoff) wait = r.from(kAdvances);
      }
      return op;
    }
    case kDelayedNack: {
      Nack op = read_ack_like<Nack>(r);
      op.delay = r.from(kAdvances);
      return op;
    }
    case kTerminatingSubscribe:
    case kTerminatingSubscribe + 1: {
      Subscribe op = read_subscribe(r, 5);
      op.idempotent = kind != kTerminatingSubscribe;
      return op;
    }
    case kBackoffSubscribe: {
      Subscribe op = read_subscribe(r, 5);
      op.idempotent = r.pick(2) == 1;
      op.backoff.resize(1 + r.pick(3));
      for (model::Millis& wait : op.backoff) wait = r.from(kAdvances);
      return op;
    }
    case kRedrive:
      return Redrive{r.from(kTopics), r.from(kSubs)};
    case kRedriveTo:
      return RedriveTo{r.from(kTopics), r.from(kSubs), r.from(kTopics)};
    case kPurge:
      return Purge{r.from(kTopics), r.from(kSubs)};
    case kPause:
      return Pause{r.from(kTopics), r.from(kSubs)};
    case kResume:
      return Resume{r.from(kTopics), r.from(kSubs)};
    case kLag:
      return GetLag{r.from(kTopics), r.from(kSubs)};
    case kOffsetForTime:
      return OffsetForTime{r.from(kTopics), r.byte()};
    case kSeekToTime:
      return SeekToTime{r.from(kTopics), r.from(kSubs), r.byte()};
    case kJoinGroup: {
      if (r.pick(2) == 1) return read_join_group_push(r);
      JoinGroup op;
      op.topic = r.from(kTopics);
      op.group = r.from(kSubs);
      op.member = r.from(kMembers);
      op.assignor = static_cast<model::Assignor>(r.pick(4));
      op.filter = r.from(kHeaders);
      op.ack_timeout = r.from(kTimeouts);
      op.max_deliveries = static_cast<int>(r.pick(6));
      op.start = read_start(r);
      op.ordered_by_key = r.pick(2) == 1;
      return op;
    }
    case kLeaveGroup:
      return LeaveGroup{r.from(kTopics), r.from(kSubs), r.from(kMembers)};
    case kPollGroup: {
      PollGroup op{r.from(kTopics), r.from(kSubs), r.from(kMembers), 0};
      op.max = r.pick(4);  // 0 is a typed error
      return op;
    }
    case kGroupStats:
      return GetGroupStats{r.from(kTopics), r.from(kSubs)};
    case kMembership:
      return GetMembership{r.from(kTopics), r.from(kSubs), r.from(kMembers)};
    case kWithGeneration: {
      const std::size_t which = r.pick(5);
      const std::uint64_t generation = r.byte();
      switch (which) {
        case 0: {
          Ack op = read_ack_like<Ack>(r);
          op.generation = generation;
          return op;
        }
        case 2: {
          Term op = read_ack_like<Term>(r);
          op.generation = generation;
          return op;
        }
        case 3: {
          Extend op{r.from(kTopics), r.from(kSubs), 0, {}, 0};
          op.offset = r.byte();
          op.member = r.from(kMembers);
          op.extension = r.from(kAdvances);
          op.generation = generation;
          return op;
        }
        default: {
          Nack op = read_ack_like<Nack>(r);
          if (which == 4) op.delay = r.from(kAdvances);
          op.generation = generation;
          return op;
        }
      }
    }
    default:
      break;
  }
  switch (kind % 16) {
    case 0: {
      CreateTopic op{r.from(kTopics), r.pick(5), 0};
      op.retention_bytes = r.pick(16);
      return op;
    }
    case 1:
      return DeleteTopic{r.from(kTopics)};
    case 2: {
      Publish op{r.from(kTopics), "m" + std::to_string(r.byte()), {}, {}};
      op.headers = r.from(kHeaders);
      op.key = r.byte() % 4 == 0 ? "k" : "";
      return op;
    }
    case 3:
      return read_subscribe(r);
    case 4:
      return read_subscribe_pull(r);
    case 5:
      return Unsubscribe{r.from(kTopics), r.from(kSubs)};
    case 6: {
      Seek op{r.from(kTopics), r.from(kSubs), 0};
      op.offset = r.byte();
      return op;
    }
    case 7:
      return Drain{};
    case 8: {
      Poll op{r.from(kTopics), r.from(kSubs), r.from(kMembers), 0};
      op.max = r.pick(4);  // 0 is a typed error
      return op;
    }
    case 9:
      return read_ack_like<Ack>(r);
    case 10:
      return read_ack_like<Nack>(r);
    case 11: {
      Extend op{r.from(kTopics), r.from(kSubs), 0, {}, 0};
      op.offset = r.byte();
      op.member = r.from(kMembers);
      op.extension = r.from(kAdvances);
      return op;
    }
    case 12:
      return Expire{};
    case 13:
      return Advance{r.from(kAdvances)};
    case 14:
      return GetStats{r.from(kTopics), r.from(kSubs)};
    default:
      return GetDeadLetters{r.from(kTopics), r.from(kSubs)};
  }
}

}  // namespace

oplang::Script decode_ops(const std::uint8_t* data, std::size_t size, std::size_t max_ops) {
  Reader r(data, size);
  oplang::Script script;
  while (!r.empty() && script.size() < max_ops) script.push_back(read_op(r));
  return script;
}

namespace {

/// Writes the choices decode_ops will read, in reading order; reversed at the end.
class Writer {
 public:
  void byte(std::size_t b) { bytes_.push_back(static_cast<std::uint8_t>(b)); }
  // Maps a name to its pool index in first-seen order (per pool).
  void name(const std::string& value, const std::vector<std::string>& pool) {
    auto& seen = seen_[&pool];
    auto it = seen.find(value);
    if (it == seen.end()) {
      std::size_t next = seen.size();
      if (&pool == &kGroups && !value.empty()) next = std::max<std::size_t>(next, 1);
      if (value.empty()) next = 0;
      it = seen.emplace(value, next % pool.size()).first;
    }
    byte(it->second);
  }
  template <class T>
  void index_of(const T& value, const std::vector<T>& pool) {
    auto it = std::find(pool.begin(), pool.end(), value);
    byte(it == pool.end() ? 0 : static_cast<std::size_t>(it - pool.begin()));
  }
  void payload(const std::string& p) {
    auto it = payloads_.find(p);
    if (it == payloads_.end()) it = payloads_.emplace(p, payloads_.size() % 256).first;
    byte(it->second);
  }
  std::vector<std::uint8_t> done() {
    std::reverse(bytes_.begin(), bytes_.end());
    return bytes_;
  }

 private:
  std::vector<std::uint8_t> bytes_;
  std::map<const void*, std::map<std::string, std::size_t>> seen_;
  std::map<std::string, std::size_t> payloads_;
};

void write_start(Writer& w, const model::Start& s) {
  w.byte(s.kind == model::Start::Kind::kBeginning ? 1
         : s.kind == model::Start::Kind::kOffset  ? 2
                                                  : 0);
  w.byte(s.offset);
}

struct OpWriter {
  Writer& w;
  void operator()(const oplang::CreateTopic& op) {
    if (op.partitions > 1) {
      w.byte(kPartitionedTopic), w.name(op.name, kTopics), w.byte(op.retention_messages);
      w.byte(op.partitions - 2);
      w.byte(op.partitioner == model::Partitioner::kJavaHashCode ? 1 : 0);
      return;
    }
    w.byte(0), w.name(op.name, kTopics), w.byte(op.retention_messages), w.byte(op.retention_bytes);
  }
  void operator()(const oplang::PublishTo& op) {
    w.byte(kPublishTo), w.name(op.topic, kTopics), w.byte(op.partition), w.payload(op.payload);
    w.index_of(op.key, kKeys);
  }
  void operator()(const oplang::Partitions& op) {
    w.byte(kPartitionsKind), w.name(op.topic, kTopics);
  }
  void operator()(const oplang::DeleteTopic& op) { w.byte(1), w.name(op.name, kTopics); }
  void operator()(const oplang::Publish& op) {
    if (op.via_publisher) {
      w.byte(kViaPublisher), w.name(op.topic, kTopics), w.payload(op.payload);
      w.index_of(op.headers, kHeaders), w.index_of(op.key, kKeys);
      return;
    }
    const bool pooled = op.key.empty() || op.key == "k";
    w.byte(pooled ? 2 : kKeyedPublish), w.name(op.topic, kTopics), w.payload(op.payload);
    w.index_of(op.headers, kHeaders);
    if (pooled) {
      w.byte(op.key.empty() ? 1 : 0);
    } else {
      w.index_of(op.key, kKeys);
    }
  }
  void operator()(const oplang::Subscribe& op) {
    if (op.saved) {
      w.byte(kResubscribe), w.name(op.topic, kTopics), w.name(op.name, kSubs),
          w.name(op.group, kGroups);
      write_script(op.script);
      w.byte(op.idempotent ? 1 : 0);
      return;
    }
    const bool terminates = std::any_of(op.script.begin(), op.script.end(), [](const auto& step) {
      return step.verdict == model::Verdict::kTerminate;
    });
    const std::size_t kind = !op.backoff.empty() ? kBackoffSubscribe
                             : terminates        ? kTerminatingSubscribe + (op.idempotent ? 1 : 0)
                             : op.idempotent     ? kIdempotentSubscribe
                                                 : 3;
    w.byte(kind), w.name(op.topic, kTopics), w.name(op.name, kSubs),
        w.index_of(op.filter, kHeaders);
    w.byte(op.max_deliveries), write_start(w, op.start), w.name(op.group, kGroups);
    write_script(op.script);
    if (kind == kBackoffSubscribe) {
      w.byte(op.idempotent ? 1 : 0), w.byte(op.backoff.size() - 1);
      for (model::Millis wait : op.backoff) w.index_of(wait, kAdvances);
    }
  }

  void operator()(const oplang::SubscribePull& op) {
    const std::size_t kind = op.ordered_by_key       ? kOrderedPull
                             : !op.backoff.empty()   ? kBackoffPull
                             : op.max_in_flight != 0 ? kBoundedPull
                                                     : 4;
    w.byte(kind), w.name(op.topic, kTopics), w.name(op.name, kSubs),
        w.index_of(op.filter, kHeaders);
    w.index_of(op.ack_timeout, kTimeouts), w.byte(op.max_deliveries), write_start(w, op.start);
    if (kind != 4) w.byte(op.max_in_flight);
    if (kind == kBackoffPull) {
      w.byte(op.backoff.size() - 1);
      for (model::Millis wait : op.backoff) w.index_of(wait, kAdvances);
    }
    if (kind == kOrderedPull) {
      w.byte(op.backoff.size());
      for (model::Millis wait : op.backoff) w.index_of(wait, kAdvances);
    }
  }
  void operator()(const oplang::Unsubscribe& op) {
    w.byte(5), w.name(op.topic, kTopics), w.name(op.name, kSubs);
  }
  void operator()(const oplang::Seek& op) {
    w.byte(6), w.name(op.topic, kTopics), w.name(op.name, kSubs), w.byte(op.offset);
  }
  void operator()(const oplang::Drain&) { w.byte(7); }
  void operator()(const oplang::Poll& op) {
    w.byte(8), w.name(op.topic, kTopics), w.name(op.sub, kSubs), w.name(op.member, kMembers),
        w.byte(op.max);
  }
  // R32: an answer with a generation goes behind kWithGeneration and its sub-kind.
  template <class T>
  std::size_t generation_prefix(std::size_t kind, std::size_t which, const T& op) {
    if (op.generation == 0) return kind;
    w.byte(kWithGeneration), w.byte(which), w.byte(op.generation);
    return SIZE_MAX;
  }
  template <class T>
  void answer(std::size_t kind, const T& op) {
    if (kind != SIZE_MAX) w.byte(kind);
    w.name(op.topic, kTopics), w.name(op.sub, kSubs), w.byte(op.offset),
        w.name(op.member, kMembers);
  }
  void operator()(const oplang::Ack& op) { answer(generation_prefix(9, 0, op), op); }
  void operator()(const oplang::Nack& op) {
    answer(generation_prefix(op.delay ? kDelayedNack : 10, op.delay ? 4 : 1, op), op);
    if (op.delay) w.index_of(*op.delay, kAdvances);
  }
  void operator()(const oplang::Term& op) { answer(generation_prefix(kTerm, 2, op), op); }
  void operator()(const oplang::Extend& op) {
    answer(generation_prefix(11, 3, op), op), w.index_of(op.extension, kAdvances);
  }
  void operator()(const oplang::JoinGroup& op) {
    w.byte(kJoinGroup), w.byte(0), w.name(op.topic, kTopics), w.name(op.group, kSubs),
        w.name(op.member, kMembers), w.byte(static_cast<std::size_t>(op.assignor));
    w.index_of(op.filter, kHeaders), w.index_of(op.ack_timeout, kTimeouts);
    w.byte(op.max_deliveries), write_start(w, op.start), w.byte(op.ordered_by_key ? 1 : 0);
  }
  void write_script(const model::Script& script) {
    w.byte(script.size());
    for (const auto& step : script) {
      // A stall has no byte of its own (sequentially it changes nothing): written as none.
      const model::EffectKind effect =
          step.effect == model::EffectKind::kStall ? model::EffectKind::kNone : step.effect;
      w.byte(static_cast<std::size_t>(step.verdict)), w.byte(static_cast<std::size_t>(effect));
      if (step.effect == model::EffectKind::kUnsubscribe)
        w.name(step.topic, kTopics), w.name(step.name, kSubs);
      if (step.effect == model::EffectKind::kPublish)
        w.name(step.topic, kTopics), w.payload(step.payload);
      if (step.effect == model::EffectKind::kSeek) {
        w.name(step.topic, kTopics), w.name(step.name, kSubs), w.byte(step.offset);
      }
    }
  }
  void operator()(const oplang::JoinGroupPush& op) {
    w.byte(kJoinGroup), w.byte(1), w.name(op.topic, kTopics), w.name(op.group, kSubs),
        w.name(op.member, kMembers), w.byte(static_cast<std::size_t>(op.assignor));
    w.index_of(op.filter, kHeaders), w.byte(op.max_deliveries), write_start(w, op.start);
    write_script(op.script);
    w.byte(op.backoff.size());
    for (model::Millis wait : op.backoff) w.index_of(wait, kAdvances);
  }
  void operator()(const oplang::LeaveGroup& op) {
    w.byte(kLeaveGroup), w.name(op.topic, kTopics), w.name(op.group, kSubs),
        w.name(op.member, kMembers);
  }
  void operator()(const oplang::PollGroup& op) {
    w.byte(kPollGroup), w.name(op.topic, kTopics), w.name(op.group, kSubs),
        w.name(op.member, kMembers), w.byte(op.max);
  }
  void operator()(const oplang::GetGroupStats& op) {
    w.byte(kGroupStats), w.name(op.topic, kTopics), w.name(op.group, kSubs);
  }
  void operator()(const oplang::GetMembership& op) {
    w.byte(kMembership), w.name(op.topic, kTopics), w.name(op.group, kSubs),
        w.name(op.member, kMembers);
  }
  void operator()(const oplang::Expire&) { w.byte(12); }
  void operator()(const oplang::Advance& op) { w.byte(13), w.index_of(op.ms, kAdvances); }
  void operator()(const oplang::GetStats& op) {
    w.byte(14), w.name(op.topic, kTopics), w.name(op.name, kSubs);
  }
  void operator()(const oplang::GetDeadLetters& op) {
    w.byte(15), w.name(op.topic, kTopics), w.name(op.name, kSubs);
  }
  void operator()(const oplang::PollWait& op) {
    w.byte(kPollWait), w.name(op.topic, kTopics), w.name(op.sub, kSubs),
        w.name(op.member, kMembers), w.byte(op.max), w.index_of(op.timeout, kWaits);
  }
  void operator()(const oplang::WaitIdle& op) { w.byte(kWaitIdle), w.index_of(op.timeout, kWaits); }
  void operator()(const oplang::WaitDelivered& op) {
    w.byte(kWaitDelivered), w.index_of(op.timeout, kWaits);
  }
  void operator()(const oplang::Subscriptions& op) {
    w.byte(kSubscriptions), w.name(op.topic, kTopics);
  }
  void operator()(const oplang::Topics&) { w.byte(kTopicsKind); }
  void operator()(const oplang::EndOffset& op) { w.byte(kEndOffset), w.name(op.topic, kTopics); }
  void operator()(const oplang::Restart&) { w.byte(kRestart); }
  void operator()(const oplang::Crash& op) {
    switch (op.damage) {
      case oplang::Damage::kNone:
        w.byte(kCrash), w.byte(static_cast<std::uint8_t>(op.seed % kDamageSeeds));
        break;
      case oplang::Damage::kTruncate:
        w.byte(kCrash), w.byte(static_cast<std::uint8_t>(kDamageSeeds + op.seed % 16));
        break;
      case oplang::Damage::kCorrupt:
        w.byte(kCrash), w.byte(static_cast<std::uint8_t>(kCorruptSeeds + op.seed % 16));
        break;
    }
  }
  void operator()(const oplang::Fault& op) {
    w.byte(kCrash), w.byte(kFaultSeeds), w.byte(static_cast<std::uint8_t>(op.call)),
        w.byte(static_cast<std::uint8_t>((op.nth - 1) % 4)),
        w.byte(op.error == oplang::DiskError::kEnospc ? 1 : 0);
  }
  void operator()(const oplang::OldestOffset& op) {
    w.byte(kOldestOffset), w.name(op.topic, kTopics);
  }
  void named(std::size_t kind, const std::string& topic, const std::string& name) {
    w.byte(kind), w.name(topic, kTopics), w.name(name, kSubs);
  }
  void operator()(const oplang::Redrive& op) { named(kRedrive, op.topic, op.name); }
  void operator()(const oplang::RedriveTo& op) {
    named(kRedriveTo, op.topic, op.name), w.name(op.to, kTopics);
  }
  void operator()(const oplang::Purge& op) { named(kPurge, op.topic, op.name); }
  void operator()(const oplang::Pause& op) { named(kPause, op.topic, op.name); }
  void operator()(const oplang::Resume& op) { named(kResume, op.topic, op.name); }
  void operator()(const oplang::GetLag& op) { named(kLag, op.topic, op.name); }
  void operator()(const oplang::OffsetForTime& op) {
    w.byte(kOffsetForTime), w.name(op.topic, kTopics), w.byte(static_cast<std::uint8_t>(op.time));
  }
  void operator()(const oplang::SeekToTime& op) {
    named(kSeekToTime, op.topic, op.name), w.byte(static_cast<std::uint8_t>(op.time));
  }
  // Not decoded (concurrent programs only): nothing is written for it.
  void operator()(const oplang::Yield&) {}
};

}  // namespace

std::vector<std::uint8_t> encode_ops(const oplang::Script& script) {
  Writer w;
  OpWriter ow{w};
  for (oplang::Op op : script) {
    // R29: an op on partition p (0..2) of a topic is that op on the topic behind a prefix.
    std::visit(
        [&w](auto& o) {
          if constexpr (requires { o.topic; }) {
            const std::size_t dash = o.topic.rfind('-');
            if (dash == std::string::npos || dash + 2 != o.topic.size()) return;
            const char p = o.topic.back();
            if (p < '0' || p > '2') return;
            w.byte(kOnPartition), w.byte(static_cast<std::size_t>(p - '0'));
            o.topic.resize(dash);
          }
        },
        op);
    std::visit(ow, op);
  }
  return w.done();
}

}  // namespace fuzzing
