#include "op_generators.h"

#include <algorithm>
#include <tuple>
#include <utility>

#include "uniform.h"

namespace props {
namespace {

namespace g = rc::gen;

const std::vector<std::string> kTopics = {"t0", "t1", "t2"};
const std::vector<std::string> kSubs = {"s0", "s1", "s2", "s3"};
const std::vector<std::string> kMembers = {"w0", "w1", "w2"};
const std::vector<std::string> kGroups = {"g0", "g1"};
// R29: keys that spread over partitions under both partitioners; "polygenelubricants" is the
// Java hash Math.abs leaves negative.
const std::vector<std::string> kKeys = {"w0",      "order-0", "order-1",
                                        "order-2", "order-3", "polygenelubricants"};

template <class T>
T pick(const std::vector<T>& xs) {
  return *g::elementOf(xs);
}

// The UTF-8 encoding of code point cp (surrogates too: an ill-formed sequence).
std::string utf8_of(std::uint32_t cp) {
  std::string out;
  const auto put = [&out](std::uint32_t b) { out += static_cast<char>(b); };
  if (cp < 0x80) {
    put(cp);
  } else if (cp < 0x800) {
    put(0xC0 | cp >> 6), put(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    put(0xE0 | cp >> 12), put(0x80 | (cp >> 6 & 0x3F)), put(0x80 | (cp & 0x3F));
  } else {
    put(0xF0 | cp >> 18), put(0x80 | (cp >> 12 & 0x3F)), put(0x80 | (cp >> 6 & 0x3F)),
        put(0x80 | (cp & 0x3F));
  }
  return out;
}

// 1 to 4 pieces, each any byte (NUL and 0x80-0xFF included), the UTF-8 of a code point of
// any plane, such a sequence cut short (ill-formed), or an ASCII letter: what R29's
// partitioners and the text format must take bit for bit.
std::string gen_bytes() {
  std::string out;
  const int pieces = *uniform_in(1, 5);
  for (int i = 0; i < pieces; ++i) {
    switch (*uniform_in(0, 4)) {
      case 0:
        out += static_cast<char>(*uniform_in(0, 256));
        break;
      case 1:
        out += utf8_of(*uniform_in<std::uint32_t>(0x80, 0x110000));
        break;
      case 2: {
        const std::string whole = utf8_of(*uniform_in<std::uint32_t>(0x80, 0x110000));
        out += whole.substr(0, *uniform_in<std::size_t>(1, whole.size()));
        break;
      }
      default:
        out += static_cast<char>('a' + *uniform_in(0, 26));
    }
  }
  return out;
}

// R29, R31: a key: half the named ones (ASCII, Java's negative hashes), half from the whole
// byte range.
std::string gen_key() { return one_in(2) ? pick(kKeys) : gen_bytes(); }

// A payload: mostly "m<N>", some with bytes of the whole range after it, a few long.
std::string gen_payload(const Hints& h) {
  std::string out = "m" + std::to_string(h.payloads);
  if (one_in(4)) out += gen_bytes();
  if (one_in(16)) out += std::string(static_cast<std::size_t>(*uniform_in(200, 600)), 'x');
  return out;
}

// Headers a filter matches, and near misses: a value that extends the filter's (a prefix
// comparison would take it), one with a NUL after it, a non-ASCII one, a name of any bytes.
model::Headers gen_headers() {
  return *g::weightedOneOf<model::Headers>({
      {6, g::just(model::Headers{})},
      {4, g::just(model::Headers{{"type", "created"}})},
      {4, g::just(model::Headers{{"type", "paid"}})},
      {2, g::just(model::Headers{{"type", "created"}, {"prio", "high"}})},
      {1, g::just(model::Headers{{"type", "created-late"}})},
      {1, g::just(model::Headers{{"type", std::string("created\0", 8)}})},
      {1, g::just(model::Headers{{"type",
                                  "cr\xc3\xa9"
                                  "\xe9"
                                  "ated"},
                                 {"prio", "higher"}})},
      {1, g::just(model::Headers{{std::string("\xfe\0n", 3), "\xff"}, {"type", "paid"}})},
  });
}

model::Headers gen_filter() {
  return *g::weightedOneOf<model::Headers>({
      {4, g::just(model::Headers{})},
      {2, g::just(model::Headers{{"type", "created"}})},
      {1, g::just(model::Headers{{"prio", "high"}})},
  });
}

// Small limits on purpose: dead letters need max_deliveries failed offers.
int gen_max_deliveries() {
  return *g::weightedOneOf<int>(
      {{3, g::just(1)}, {3, g::just(2)}, {1, g::just(3)}, {1, g::just(0)}, {1, g::just(5)}});
}

model::Start gen_start(const Hints& h, const std::string& topic) {
  switch (*uniform_in(0, 6)) {
    case 0:
      return {model::Start::Kind::kBeginning, 0};
    case 1:
      return {model::Start::Kind::kOffset, h.edge_offset(topic)};
    default:
      return {};
  }
}

model::Millis gen_timeout() { return *g::elementOf(std::vector<model::Millis>{10, 20, 30}); }

}  // namespace

void Hints::observe(const oplang::Op& op) {
  const oplang::Outcome outcome = runner.step(op);
  if (const auto* p = std::get_if<oplang::Pause>(&op); p && !outcome.error)
    paused.emplace(p->topic, p->name);
  if (const auto* r = std::get_if<oplang::Resume>(&op)) paused.erase({r->topic, r->name});
  if (const auto* u = std::get_if<oplang::Unsubscribe>(&op)) paused.erase({u->topic, u->name});
  if (std::holds_alternative<oplang::Restart>(op) || std::holds_alternative<oplang::Crash>(op))
    paused.clear();  // R26: a restart resumes
  if (const auto* p = std::get_if<oplang::Publish>(&op)) {
    ++payloads;
    if (!p->key.empty()) last_key = p->key;
  }
  if (const auto* s = std::get_if<oplang::Subscribe>(&op); s && !s->saved) {
    subscribes[s->topic + "/" + s->name] = *s;
    if (!s->group.empty()) subscribes[s->topic + "/" + s->group] = *s;
  }
  if (const auto* j = std::get_if<oplang::JoinGroupPush>(&op))
    push_joins[j->topic + "/" + j->group] = *j;
}

model::Offset Hints::edge_offset(const std::string& topic) const {
  model::Offset oldest = 0;
  model::Offset end = 0;
  try {
    oldest = model().oldest_offset(topic);
    end = model().end_offset(topic);
  } catch (const model::Error&) {
  }
  const std::vector<model::Offset> edges = {oldest == 0 ? 0 : oldest - 1, oldest, oldest + 1,
                                            end == 0 ? 0 : end - 1,       end,    end + 1,
                                            oldest + (end - oldest) / 2};
  return *g::elementOf(edges);
}

std::string gen_topic(const Hints& h) {
  const std::vector<std::string> known = h.model().topics();
  if (known.empty() || one_in(8)) return pick(kTopics);
  return pick(known);
}

std::string gen_sub_name(const Hints& h, const std::string& topic) {
  std::vector<std::string> known;
  try {
    known = h.model().subscriptions(topic);
  } catch (const model::Error&) {
  }
  if (known.empty() || one_in(5)) return pick(kSubs);
  return pick(known);
}

std::string gen_pull_name(const Hints& h, const std::string& topic) {
  const std::vector<std::string> pulls = h.model().pull_names(topic);
  if (pulls.empty() || one_in(6)) return gen_sub_name(h, topic);
  return pick(pulls);
}

std::string gen_position_name(const Hints& h, const std::string& topic) {
  // R29: a partitioned topic answers stats and lag for a name every partition has, a
  // consumer group's: a third of the time, a group of the topic if it has one.
  std::vector<std::string> consumer;
  for (const model::Model::GroupView& g : h.model().consumer_groups()) {
    if (g.topic == topic) consumer.push_back(g.name);
  }
  if (!consumer.empty() && one_in(3)) return pick(consumer);
  if (!one_in(4)) return gen_sub_name(h, topic);
  const std::vector<std::string> groups = h.model().group_names(topic);
  if (groups.empty() || one_in(4)) return pick(kGroups);
  return pick(groups);
}

bool is_group_name(const std::string& name) {
  return std::find(kGroups.begin(), kGroups.end(), name) != kGroups.end();
}

std::string gen_member() { return pick(kMembers); }

model::Script gen_script(const Hints& h) {
  const int length = *uniform_in(0, 5);
  model::Script script;
  for (int i = 0; i < length; ++i) {
    model::Step step;
    step.verdict = *g::weightedOneOf<model::Verdict>({
        {3, g::just(model::Verdict::kConfirm)},
        {2, g::just(model::Verdict::kReject)},
        {1, g::just(model::Verdict::kThrowStd)},
        {1, g::just(model::Verdict::kThrowOther)},
        {1, g::just(model::Verdict::kTerminate)},
    });
    switch (*uniform_in(0, 12)) {
      case 0:
        step.effect = model::EffectKind::kUnsubscribeSelf;
        break;
      case 1:
        step.effect = model::EffectKind::kUnsubscribe;
        step.topic = gen_topic(h);
        step.name = gen_sub_name(h, step.topic);
        break;
      case 2:
        step.effect = model::EffectKind::kPublish;
        step.topic = gen_topic(h);
        step.payload = "in" + std::to_string(h.payloads + i);
        break;
      case 3:
        step.effect = model::EffectKind::kSeek;
        step.topic = gen_topic(h);
        step.name = gen_position_name(h, step.topic);
        step.offset = h.edge_offset(step.topic);
        break;
      case 4:
        step.effect = model::EffectKind::kDrain;
        break;
      default:
        break;
    }
    script.push_back(step);
  }
  return script;
}

template <>
oplang::Op gen_op<oplang::CreateTopic>(const Hints& h) {
  oplang::CreateTopic op{pick(kTopics), 0, 0};
  // R29: now and then a plain topic named like a partition, so names collide both ways.
  if (one_in(10)) op.name = "t0-1";
  // R29: a third of the topics are partitioned (a count of 0 or past the bound, rarely).
  if (one_in(3)) {
    op.partitions = *g::weightedOneOf<std::uint32_t>(
        {{4, g::just(2u)}, {3, g::just(3u)}, {1, g::just(0u)}, {1, g::just(1025u)}});
    if (one_in(2)) op.partitioner = model::Partitioner::kJavaHashCode;
  }
  switch (*uniform_in(0, 4)) {
    case 0:
      op.retention_messages = *uniform_in<std::size_t>(1, 4);
      break;
    case 1:
      op.retention_bytes = *uniform_in<std::size_t>(1, 12);
      break;
    default:
      break;
  }
  if (h.always.count("retention") && op.retention_messages == 0 && op.retention_bytes == 0)
    op.retention_messages = *uniform_in<std::size_t>(2, 5);
  // R1: a quarter are create_topic_if_absent, often of a name already taken (same options
  // or others: the draws above repeat often).
  if (one_in(4)) op.if_absent = true;
  return op;
}

template <>
oplang::Op gen_op<oplang::DeleteTopic>(const Hints& h) {
  return oplang::DeleteTopic{gen_topic(h)};
}

// Publishes go mostly where someone listens: a topic with subscriptions, or a partitioned
// topic one of whose partitions has some (R29).
std::string gen_publish_topic(const Hints& h) {
  std::vector<std::string> listened;
  for (const auto& t : h.model().topics()) {
    const std::uint32_t n = h.model().partitions(t);
    for (std::uint32_t p = 0; p < n; ++p) {
      if (!h.model().subscriptions(n > 1 ? t + "-" + std::to_string(p) : t).empty()) {
        listened.push_back(t);
        break;
      }
    }
  }
  return !listened.empty() && !one_in(3) ? pick(listened) : gen_topic(h);
}

template <>
oplang::Op gen_op<oplang::Publish>(const Hints& h) {
  oplang::Publish op;
  op.topic = gen_publish_topic(h);
  op.payload = gen_payload(h);
  op.headers = gen_headers();
  // R29 routes by the key, R31 orders by it: half the publishes have one, half of those the
  // last one again, so a key's messages follow each other.
  if (one_in(2)) {
    op.key = !h.last_key.empty() && one_in(2) ? h.last_key : gen_key();
  }
  // Half through the runner's Publisher for the topic, which outlives deletes and
  // re-creations of it (R2: the same outcome as by name). The mixes list publish twice, so
  // publish_via is as common as any other kind.
  op.via_publisher = one_in(2);
  return op;
}

// R29: an explicit partition, one past the last now and then.
template <>
oplang::Op gen_op<oplang::PublishTo>(const Hints& h) {
  oplang::PublishTo op;
  op.topic = gen_publish_topic(h);
  op.partition = static_cast<std::uint32_t>(*uniform_in(0, 4));
  op.payload = gen_payload(h);
  op.headers = gen_headers();
  if (one_in(3)) op.key = gen_key();
  return op;
}

template <>
oplang::Op gen_op<oplang::Partitions>(const Hints& h) {
  return oplang::Partitions{gen_topic(h)};
}

template <>
oplang::Op gen_op<oplang::Subscribe>(const Hints& h) {
  oplang::Subscribe op;
  op.topic = gen_topic(h);
  // Half the time after a restart: resume a push subscription or rejoin a group with the
  // options it was saved with (R20), and a new handler script: repeating them, or half of
  // those times by resubscribe, which takes them from the broker.
  const std::vector<std::string> dormant = h.model().dormant_names(op.topic);
  if (!dormant.empty() && one_in(2)) {
    auto it = h.subscribes.find(op.topic + "/" + pick(dormant));
    if (it != h.subscribes.end()) {
      op = it->second;
      if (!op.group.empty()) op.name = pick(kSubs);
      op.script = gen_script(h);
      if (one_in(2)) {  // only the names, the script and idempotent count
        op.filter = {};
        op.max_deliveries = 5;
        op.start = {};
        op.backoff = {};
        op.durable_attempts = false;
        op.saved = true;
      }
      return op;
    }
  }
  // Now and then a resubscribe of any name, waiting or not (UnknownSubscription, R20).
  if (one_in(16)) {
    op.name = pick(kSubs);
    if (one_in(2)) op.group = pick(kGroups);
    op.script = gen_script(h);
    op.saved = true;
    return op;
  }
  op.name = pick(kSubs);
  op.filter = gen_filter();
  op.max_deliveries = gen_max_deliveries();
  op.start = gen_start(h, op.topic);
  if (one_in(4)) {
    op.group = pick(kGroups);
    op.filter = {};
    op.max_deliveries = 3;
    op.start = {};
  }
  if (h.always.count("group") && op.group.empty()) {
    op.group = pick(kGroups);
    op.filter = {};
    op.max_deliveries = 3;
    op.start = {};
  }
  op.script = gen_script(h);
  op.idempotent = one_in(3) || h.always.count("idempotent");  // repeats need seeks back
  // R24: a quarter of the new single subscriptions wait between failed offers (groups keep
  // one set of options, so their joins agree); drains skip them until the clock passes it.
  if (op.group.empty() && one_in(4)) {
    op.backoff = *g::container<std::vector<model::Millis>>(
        *uniform_in<std::size_t>(1, 3), g::elementOf(std::vector<model::Millis>{0, 5, 10, 30}));
    if (one_in(20)) op.backoff.back() = -1;  // InvalidArgument
  }
  op.durable_attempts = op.group.empty() && one_in(3);  // R34 (groups: one set of options)
  if (op.group.empty()) {  // the option swarm's (groups keep one set of options)
    if (h.always.count("filter") && op.filter.empty()) op.filter = {{"type", "created"}};
    if (h.always.count("backoff") && op.backoff.empty())
      op.backoff = {*uniform_in<model::Millis>(1, 11)};
    if (h.always.count("durable_attempts")) op.durable_attempts = true;
  }
  return op;
}

template <>
oplang::Op gen_op<oplang::SubscribePull>(const Hints& h) {
  oplang::SubscribePull op;
  op.topic = gen_topic(h);
  op.name = pick(kSubs);
  op.filter = gen_filter();
  op.ack_timeout = gen_timeout();
  op.max_deliveries = gen_max_deliveries();
  op.start = gen_start(h, op.topic);
  // R22: mostly unbounded; else a bound of 1-2 that polls of up to 3 run into, and now and
  // then one past kMaxInFlight (InvalidArgument).
  switch (*uniform_in(0, 10)) {
    case 0:
    case 1:
      op.max_in_flight = 1;
      break;
    case 2:
      op.max_in_flight = 2;
      break;
    case 3:
      op.max_in_flight =
          *g::elementOf(std::vector<std::size_t>{model::kMaxInFlight, model::kMaxInFlight + 1});
      break;
    default:
      break;
  }
  // R24: now and then a back-off list of 1-3 waits (a negative one: InvalidArgument).
  if (one_in(4)) {
    op.backoff = *g::container<std::vector<model::Millis>>(
        *uniform_in<std::size_t>(1, 4), g::elementOf(std::vector<model::Millis>{0, 5, 10, 30}));
    if (one_in(20)) op.backoff.back() = -1;
  }
  // R31: half the subscriptions ordered, half of those reading from the beginning.
  op.ordered_by_key = one_in(2);
  if (op.ordered_by_key && one_in(2)) op.start = {model::Start::Kind::kBeginning, 0};
  op.durable_attempts = one_in(3);  // R34: attempts saved before hand-out
  // The option swarm's.
  if (h.always.count("filter") && op.filter.empty()) op.filter = {{"type", "created"}};
  if (h.always.count("max_in_flight") && op.max_in_flight == 0)
    op.max_in_flight = *uniform_in<std::size_t>(1, 3);
  if (h.always.count("ordered")) op.ordered_by_key = true;
  if (h.always.count("backoff") && op.backoff.empty())
    op.backoff = {*uniform_in<model::Millis>(1, 11)};
  if (h.always.count("durable_attempts")) op.durable_attempts = true;
  return op;
}

// Now and then on a pool topic that does not exist (UnknownTopic, R9), else as usual.
template <>
oplang::Op gen_op<oplang::Unsubscribe>(const Hints& h) {
  std::vector<std::string> unknown;
  const std::vector<std::string> known = h.model().topics();
  for (const auto& t : kTopics) {
    if (std::find(known.begin(), known.end(), t) == known.end()) unknown.push_back(t);
  }
  const std::string topic = !unknown.empty() && one_in(4) ? pick(unknown) : gen_topic(h);
  return oplang::Unsubscribe{topic, gen_sub_name(h, topic)};
}

template <>
oplang::Op gen_op<oplang::Seek>(const Hints& h) {
  const std::string topic = gen_topic(h);
  oplang::Seek op{topic, gen_position_name(h, topic), 0};
  op.offset = h.edge_offset(op.topic);
  return op;
}

template <>
oplang::Op gen_op<oplang::Drain>(const Hints&) {
  return oplang::Drain{};
}

namespace {

// poll and poll_wait: now and then a bad argument (max 0, no member), so R14's order of
// InvalidArgument before the topic and name checks is compared too.
oplang::Poll gen_poll(const Hints& h) {
  std::string topic = gen_topic(h);
  std::string sub = gen_pull_name(h, topic);
  // Half the time a pull subscription with something waiting, if any: workers poll where
  // there is work, so holds, acks and R31's waiting keys come up often.
  if (one_in(2)) {
    std::vector<std::pair<std::string, std::string>> busy;
    for (const std::string& t : h.model().topics()) {
      for (const std::string& p : h.model().pull_names(t)) {
        if (h.model().has_waiting(t, p)) busy.emplace_back(t, p);
      }
    }
    if (!busy.empty()) std::tie(topic, sub) = pick(busy);
  }
  oplang::Poll op{topic, sub, gen_member(), *uniform_in<std::size_t>(1, 4)};
  switch (*uniform_in(0, 16)) {
    case 0:
      op.max = 0;
      break;
    case 1:
      op.member = "";
      break;
    default:
      break;
  }
  return op;
}

// Timeouts of 0 or 1 ms of real time: the synchronous broker gets nothing while it waits.
model::Millis gen_wait() {
  return *g::weightedOneOf<model::Millis>(
      {{3, g::just<model::Millis>(0)}, {1, g::just<model::Millis>(1)}});
}

}  // namespace

template <>
oplang::Op gen_op<oplang::Poll>(const Hints& h) {
  return gen_poll(h);
}

template <>
oplang::Op gen_op<oplang::PollWait>(const Hints& h) {
  const oplang::Poll p = gen_poll(h);
  return oplang::PollWait{p.topic, p.sub, p.member, p.max, gen_wait()};
}

template <>
oplang::Op gen_op<oplang::WaitIdle>(const Hints&) {
  return oplang::WaitIdle{gen_wait()};
}

template <>
oplang::Op gen_op<oplang::WaitDelivered>(const Hints&) {
  return oplang::WaitDelivered{gen_wait()};
}

// Acks aim at held messages and their holders most of the time (so they are accepted or
// refused for the interesting reason), else at a nearby offset and any member.
template <class T>
T gen_ack_like(const Hints& h) {
  T op;
  // R32: half the time, when a consumer group holds messages, one of them: mostly with its
  // current generation, else an older one (fenced unless a cooperative owner kept it).
  const auto groups = h.model().consumer_groups();
  if (!groups.empty() && one_in(2)) {
    const auto& v = *g::elementOf(groups);
    op.topic = *g::elementOf(v.parts);
    op.sub = v.name;
    const auto held = h.model().held(op.topic, op.sub);
    if (!held.empty()) {
      const auto& target = *g::elementOf(held);
      op.offset = target.offset;
      op.member = one_in(8) ? gen_member() : target.member;
      op.generation = v.generation;
      if (one_in(4) && v.generation > 0) op.generation = v.generation - 1;
      return op;
    }
  }
  op.topic = gen_topic(h);
  op.sub = gen_pull_name(h, op.topic);
  const auto held = h.model().held(op.topic, op.sub);
  if (!held.empty() && !one_in(4)) {
    const auto& target = *g::elementOf(held);
    op.offset = target.offset;
    op.member = one_in(5) ? gen_member() : target.member;
    return op;
  }
  op.member = gen_member();
  model::Offset end = 0;
  try {
    end = h.model().end_offset(op.topic);
  } catch (const model::Error&) {
  }
  op.offset = end == 0 ? 0 : *uniform_in<model::Offset>(end > 4 ? end - 4 : 0, end);
  return op;
}

template <>
oplang::Op gen_op<oplang::Ack>(const Hints& h) {
  return gen_ack_like<oplang::Ack>(h);
}

// R24: half the nacks ask for a delay (now and then a negative one: InvalidArgument).
template <>
oplang::Op gen_op<oplang::Nack>(const Hints& h) {
  oplang::Nack op = gen_ack_like<oplang::Nack>(h);
  if (one_in(2)) {
    op.delay = *g::elementOf(std::vector<model::Millis>{-1, 0, 5, 5, 10, 30});
  }
  return op;
}

template <>
oplang::Op gen_op<oplang::Term>(const Hints& h) {
  return gen_ack_like<oplang::Term>(h);
}

template <>
oplang::Op gen_op<oplang::Extend>(const Hints& h) {
  auto op = gen_ack_like<oplang::Extend>(h);
  op.extension = *g::elementOf(std::vector<model::Millis>{0, 5, 10, 30});
  return op;
}

template <>
oplang::Op gen_op<oplang::Expire>(const Hints&) {
  return oplang::Expire{};
}

// Advances to exact deadlines of held messages (ties) or by small steps.
template <>
oplang::Op gen_op<oplang::Advance>(const Hints& h) {
  std::vector<model::Millis> steps = {0, 1, 5, 10, 30};
  const model::Millis now = h.model().now();
  for (const auto& topic : h.model().topics()) {
    for (const auto& sub : h.model().pull_names(topic)) {
      for (const auto& held : h.model().held(topic, sub)) {
        if (held.deadline >= now) {
          steps.push_back(held.deadline - now);
          steps.push_back(held.deadline - now + 1);
        }
      }
    }
  }
  // R28: an injected clock may be set back, even before where it started; now and then it is.
  if (one_in(6)) return oplang::Advance{-*g::elementOf(std::vector<model::Millis>{1, 5, 30})};
  return oplang::Advance{*g::elementOf(steps)};
}

template <>
oplang::Op gen_op<oplang::GetStats>(const Hints& h) {
  const std::string topic = gen_topic(h);
  return oplang::GetStats{topic, gen_position_name(h, topic)};
}

template <>
oplang::Op gen_op<oplang::GetDeadLetters>(const Hints& h) {
  const std::string topic = gen_topic(h);
  return oplang::GetDeadLetters{topic, gen_position_name(h, topic)};
}

namespace {

// The observations' topic: a quarter of the time one that does not exist (a pool topic not
// created, else a name outside the pool), so UnknownTopic is compared too; else gen_topic.
std::string gen_observed_topic(const Hints& h) {
  if (!one_in(4)) return gen_topic(h);
  std::vector<std::string> unknown;
  const std::vector<std::string> known = h.model().topics();
  for (const auto& t : kTopics) {
    if (std::find(known.begin(), known.end(), t) == known.end()) unknown.push_back(t);
  }
  return unknown.empty() ? std::string("t9") : pick(unknown);
}

}  // namespace

template <>
oplang::Op gen_op<oplang::Subscriptions>(const Hints& h) {
  return oplang::Subscriptions{gen_observed_topic(h)};
}

template <>
oplang::Op gen_op<oplang::Topics>(const Hints&) {
  // Half are waiting_for_handler (R20): what a restart left without a handler, if any.
  return oplang::Topics{one_in(2)};
}

template <>
oplang::Op gen_op<oplang::EndOffset>(const Hints& h) {
  return oplang::EndOffset{gen_observed_topic(h)};
}

template <>
oplang::Op gen_op<oplang::OldestOffset>(const Hints& h) {
  return oplang::OldestOffset{gen_observed_topic(h)};
}

template <>
oplang::Op gen_op<oplang::Restart>(const Hints&) {
  return oplang::Restart{};
}

// The seed picks which unsynced bytes survive (torn tails); under `always` none matter.
// A third of the cuts also damage a segment at rest (R21): truncate or corrupt, the seed
// picking the file, the byte and the bit.
template <>
oplang::Op gen_op<oplang::Crash>(const Hints&) {
  const std::uint64_t seed = *uniform_in<std::uint64_t>(0, 1000);
  switch (*uniform_in(0, 6)) {
    case 0:
      return oplang::Crash{seed, oplang::Damage::kTruncate};
    case 1:
      return oplang::Crash{seed, oplang::Damage::kCorrupt};
    default:
      return oplang::Crash{seed};
  }
}

// R33: any kind of call, one of the next few of it, failing with EIO or a full disk. Syncs
// and appends come most often (every durable call makes them), then extends (a segment
// grows a step at a time, and a full disk meets it there); the rest are rarer calls (opens
// and renames at rolls and compactions, removals at retention and deletes).
template <>
oplang::Op gen_op<oplang::Fault>(const Hints&) {
  using oplang::IoCall;
  static constexpr IoCall kCalls[] = {IoCall::kSync,   IoCall::kSync,   IoCall::kAppend,
                                      IoCall::kAppend, IoCall::kOpen,   IoCall::kSyncDir,
                                      IoCall::kRename, IoCall::kRemove, IoCall::kTruncate,
                                      IoCall::kExtend, IoCall::kExtend};
  oplang::Fault f;
  f.call = kCalls[*uniform_in<std::size_t>(0, std::size(kCalls))];
  f.nth = *uniform_in<std::uint32_t>(1, 5);
  f.error = one_in(2) ? oplang::DiskError::kEnospc : oplang::DiskError::kEio;
  return f;
}

// R25-R28: the controls aim at existing subscriptions and groups (gen_position_name), now
// and then at unknown names and topics; the dead-letter ones mostly at a state that has
// dead letters.
namespace {

std::pair<std::string, std::string> gen_dead_letter_owner(const Hints& h) {
  if (!one_in(4)) {
    std::vector<std::pair<std::string, std::string>> owners;
    for (const std::string& topic : h.model().topics()) {
      for (const std::string& name : h.model().dead_letter_names(topic)) {
        owners.emplace_back(topic, name);
      }
    }
    if (!owners.empty()) return pick(owners);
  }
  const std::string topic = gen_topic(h);
  return {topic, gen_position_name(h, topic)};
}

}  // namespace

template <>
oplang::Op gen_op<oplang::Redrive>(const Hints& h) {
  const auto [topic, name] = gen_dead_letter_owner(h);
  return oplang::Redrive{topic, name};
}

template <>
oplang::Op gen_op<oplang::RedriveTo>(const Hints& h) {
  const auto [topic, name] = gen_dead_letter_owner(h);
  return oplang::RedriveTo{topic, name, gen_observed_topic(h)};
}

template <>
oplang::Op gen_op<oplang::Purge>(const Hints& h) {
  const auto [topic, name] = gen_dead_letter_owner(h);
  return oplang::Purge{topic, name};
}

template <>
oplang::Op gen_op<oplang::Pause>(const Hints& h) {
  const std::string topic = gen_topic(h);
  return oplang::Pause{topic, gen_position_name(h, topic)};
}

template <>
oplang::Op gen_op<oplang::Resume>(const Hints& h) {
  // Mostly a paused subscription, so what a pause held back is delivered after it.
  if (!h.paused.empty() && !one_in(4)) {
    const auto [topic, name] = *g::elementOf(
        std::vector<std::pair<std::string, std::string>>(h.paused.begin(), h.paused.end()));
    return oplang::Resume{topic, name};
  }
  const std::string topic = gen_topic(h);
  return oplang::Resume{topic, gen_position_name(h, topic)};
}

template <>
oplang::Op gen_op<oplang::GetLag>(const Hints& h) {
  const std::string topic = gen_topic(h);
  return oplang::GetLag{topic, gen_position_name(h, topic)};
}

namespace {

// A time point of the shared clock: mostly now or shortly before (publishes of the last few
// advances), sometimes 0, now and then one past now (InvalidArgument).
model::Millis gen_time(const Hints& h) {
  const model::Millis now = h.model().now();
  const int choice = *uniform_in(0, 10);
  if (choice == 0) return now + 1;
  if (choice == 1) return 0;
  return std::max<model::Millis>(0,
                                 now - *g::elementOf(std::vector<model::Millis>{0, 1, 5, 10, 30}));
}

}  // namespace

template <>
oplang::Op gen_op<oplang::OffsetForTime>(const Hints& h) {
  return oplang::OffsetForTime{gen_observed_topic(h), gen_time(h)};
}

template <>
oplang::Op gen_op<oplang::SeekToTime>(const Hints& h) {
  const std::string topic = gen_topic(h);
  const std::string name = gen_position_name(h, topic);
  return oplang::SeekToTime{topic, name, gen_time(h)};
}

namespace {

// R32: consumer group names: mostly their own ("c0", "c1"), now and then a subscription's,
// so a join adopts a pull subscription or runs into a push one (WrongKind).
const std::vector<std::string> kConsumerGroups = {"c0", "c1"};

// A group that exists (mostly), or a topic and group name that may not.
std::pair<std::string, std::string> gen_group(const Hints& h) {
  const auto groups = h.model().consumer_groups();
  if (!groups.empty() && !one_in(6)) {
    const auto& v = *g::elementOf(groups);
    return {v.topic, v.name};
  }
  return {gen_topic(h), one_in(4) ? pick(kSubs) : pick(kConsumerGroups)};
}

// A member of the group (mostly), or any pool member.
std::string gen_group_member(const Hints& h, const std::string& topic, const std::string& group) {
  for (const auto& v : h.model().consumer_groups()) {
    if (v.topic == topic && v.name == group && !v.members.empty() && !one_in(4)) {
      return *g::elementOf(v.members);
    }
  }
  return gen_member();
}

}  // namespace

// R32: joins to a group mostly repeat its options (so they succeed); first joins pick a
// partitioned topic most of the time.
template <>
oplang::Op gen_op<oplang::JoinGroup>(const Hints& h) {
  auto [topic, group] = gen_group(h);
  oplang::JoinGroup op;
  for (const auto& v : h.model().consumer_groups()) {
    if (v.topic != topic || v.name != group || one_in(8)) continue;
    op.assignor = v.assignor;
    op.filter = v.options.header_filter;
    op.ack_timeout = v.options.ack_timeout;
    op.max_deliveries = v.options.max_deliveries;
    op.start = v.options.start;
    op.max_in_flight = v.options.max_in_flight;
    op.backoff = v.options.backoff;
    op.ordered_by_key = v.options.ordered_by_key;
    op.durable_attempts = v.options.durable_attempts;
    op.topic = topic;
    op.group = group;
    op.member = gen_member();
    return op;
  }
  op.topic = topic;
  op.group = group;
  op.member = one_in(20) ? "" : gen_member();
  op.assignor = *g::elementOf(
      std::vector<model::Assignor>{model::Assignor::kRange, model::Assignor::kRoundRobin,
                                   model::Assignor::kSticky, model::Assignor::kCooperativeSticky});
  op.ack_timeout = gen_timeout();
  op.max_deliveries = gen_max_deliveries();
  op.start = one_in(2) ? model::Start{model::Start::Kind::kBeginning, 0} : gen_start(h, topic);
  if (one_in(4)) op.max_in_flight = 1;
  op.ordered_by_key = one_in(3);
  op.durable_attempts = one_in(3);  // R34
  return op;
}

// R32, push: joins to a push group mostly repeat its options; each member gets a script of
// its own (the verdicts a drain will meet on the partitions it owns).
template <>
oplang::Op gen_op<oplang::JoinGroupPush>(const Hints& h) {
  auto [topic, group] = gen_group(h);
  oplang::JoinGroupPush op;
  op.topic = topic;
  op.group = group;
  op.member = one_in(20) ? "" : gen_member();
  op.script = gen_script(h);
  for (const auto& v : h.model().consumer_groups()) {
    if (v.topic != topic || v.name != group || one_in(8)) continue;
    op.assignor = v.assignor;
    op.filter = v.push_options.header_filter;
    op.max_deliveries = v.push_options.max_deliveries;
    op.start = v.push_options.start;
    op.backoff = v.push_options.backoff;
    return op;
  }
  // After a restart, half the time: adopt the dormant state of that name (R20).
  if (auto it = h.push_joins.find(topic + "/" + group); it != h.push_joins.end() && one_in(2)) {
    op.filter = it->second.filter;
    op.max_deliveries = it->second.max_deliveries;
    op.start = it->second.start;
    op.backoff = it->second.backoff;
  } else {
    op.max_deliveries = gen_max_deliveries();
    op.start = one_in(2) ? model::Start{model::Start::Kind::kBeginning, 0} : gen_start(h, topic);
    if (one_in(6)) op.backoff = {*uniform_in<model::Millis>(1, 20)};
  }
  op.assignor = *g::elementOf(
      std::vector<model::Assignor>{model::Assignor::kRange, model::Assignor::kRoundRobin,
                                   model::Assignor::kSticky, model::Assignor::kCooperativeSticky});
  return op;
}

template <>
oplang::Op gen_op<oplang::LeaveGroup>(const Hints& h) {
  const auto [topic, group] = gen_group(h);
  return oplang::LeaveGroup{topic, group, gen_group_member(h, topic, group)};
}

template <>
oplang::Op gen_op<oplang::PollGroup>(const Hints& h) {
  const auto [topic, group] = gen_group(h);
  oplang::PollGroup op{topic, group, gen_group_member(h, topic, group),
                       *uniform_in<std::size_t>(1, 4)};
  if (one_in(16)) op.max = 0;
  return op;
}

template <>
oplang::Op gen_op<oplang::GetMembership>(const Hints& h) {
  const auto [topic, group] = gen_group(h);
  return oplang::GetMembership{topic, group, gen_group_member(h, topic, group)};
}

template <>
oplang::Op gen_op<oplang::GetGroupStats>(const Hints& h) {
  const auto [topic, group] = gen_group(h);
  return oplang::GetGroupStats{topic, group};
}

}  // namespace props
