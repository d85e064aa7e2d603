#include "op_generators.h"

#include <algorithm>

namespace props {
namespace {

namespace g = rc::gen;

const std::vector<std::string> kTopics = {"t0", "t1", "t2"};
const std::vector<std::string> kSubs = {"s0", "s1", "s2", "s3"};
const std::vector<std::string> kMembers = {"w0", "w1", "w2"};
const std::vector<std::string> kGroups = {"g0", "g1"};

template <class T>
T pick(const std::vector<T>& xs) {
  return *g::elementOf(xs);
}

model::Headers gen_headers() {
  return *g::weightedOneOf<model::Headers>({
      {3, g::just(model::Headers{})},
      {2, g::just(model::Headers{{"type", "created"}})},
      {2, g::just(model::Headers{{"type", "paid"}})},
      {1, g::just(model::Headers{{"type", "created"}, {"prio", "high"}})},
  });
}

model::Headers gen_filter() {
  return *g::weightedOneOf<model::Headers>({
      {4, g::just(model::Headers{})},
      {2, g::just(model::Headers{{"type", "created"}})},
      {1, g::just(model::Headers{{"prio", "high"}})},
  });
}

int gen_max_deliveries() { return *g::weightedOneOf<int>({{3, g::inRange(1, 4)}, {1, g::just(0)}, {1, g::just(5)}}); }

model::Start gen_start(const Hints& h, const std::string& topic) {
  switch (*g::inRange(0, 6)) {
    case 0: return {model::Start::Kind::kBeginning, 0};
    case 1: return {model::Start::Kind::kOffset, h.edge_offset(topic)};
    default: return {};
  }
}

model::Millis gen_timeout() { return *g::elementOf(std::vector<model::Millis>{10, 20, 30}); }

}  // namespace

void Hints::observe(const oplang::Op& op) {
  if (auto* c = std::get_if<oplang::CreateTopic>(&op)) {
    if (!topics.count(c->name)) topics[c->name] = TopicHint{0, c->retention_messages, {}};
  } else if (auto* d = std::get_if<oplang::DeleteTopic>(&op)) {
    (void)d;  // deletion usually fails (TopicInUse): keep the hint
  } else if (auto* p = std::get_if<oplang::Publish>(&op)) {
    if (topics.count(p->topic)) ++topics[p->topic].end;
    ++payloads;
  } else if (auto* s = std::get_if<oplang::SubscribePull>(&op)) {
    if (topics.count(s->topic)) topics[s->topic].timeouts.push_back(s->ack_timeout);
  } else if (auto* a = std::get_if<oplang::Advance>(&op)) {
    now += a->ms;
  }
}

model::Offset Hints::edge_offset(const std::string& topic) const {
  auto it = topics.find(topic);
  const model::Offset end = it == topics.end() ? 0 : it->second.end;
  const std::size_t keep = it == topics.end() ? 0 : it->second.retention;
  const model::Offset oldest = keep > 0 && end > keep ? end - keep : 0;
  const std::vector<model::Offset> edges = {oldest == 0 ? 0 : oldest - 1, oldest, oldest + 1,
                                            end == 0 ? 0 : end - 1, end, end + 1,
                                            oldest + (end - oldest) / 2};
  return *g::elementOf(edges);
}

std::string gen_topic(const Hints& h) {
  std::vector<std::string> known;
  for (const auto& [name, hint] : h.topics) known.push_back(name);
  if (known.empty() || *g::inRange(0, 8) == 0) return pick(kTopics);
  return pick(known);
}

std::string gen_sub_name() { return pick(kSubs); }
std::string gen_member() { return pick(kMembers); }

model::Script gen_script(const Hints& h) {
  const int length = *g::inRange(0, 5);
  model::Script script;
  for (int i = 0; i < length; ++i) {
    model::Step step;
    step.verdict = *g::weightedOneOf<model::Verdict>({
        {3, g::just(model::Verdict::kConfirm)},
        {2, g::just(model::Verdict::kReject)},
        {1, g::just(model::Verdict::kThrowStd)},
        {1, g::just(model::Verdict::kThrowOther)},
    });
    switch (*g::inRange(0, 12)) {
      case 0: step.effect = model::EffectKind::kUnsubscribeSelf; break;
      case 1:
        step.effect = model::EffectKind::kUnsubscribe;
        step.topic = gen_topic(h);
        step.name = gen_sub_name();
        break;
      case 2:
        step.effect = model::EffectKind::kPublish;
        step.topic = gen_topic(h);
        step.payload = "in" + std::to_string(h.payloads + i);
        break;
      case 3:
        step.effect = model::EffectKind::kSeek;
        step.topic = gen_topic(h);
        step.name = gen_sub_name();
        step.offset = h.edge_offset(step.topic);
        break;
      case 4: step.effect = model::EffectKind::kDrain; break;
      default: break;
    }
    script.push_back(step);
  }
  return script;
}

template <>
oplang::Op gen_op<oplang::CreateTopic>(const Hints&) {
  oplang::CreateTopic op{pick(kTopics), 0, 0};
  switch (*g::inRange(0, 4)) {
    case 0: op.retention_messages = *g::inRange<std::size_t>(1, 4); break;
    case 1: op.retention_bytes = *g::inRange<std::size_t>(1, 12); break;
    default: break;
  }
  return op;
}

template <>
oplang::Op gen_op<oplang::DeleteTopic>(const Hints& h) {
  return oplang::DeleteTopic{gen_topic(h)};
}

template <>
oplang::Op gen_op<oplang::Publish>(const Hints& h) {
  oplang::Publish op;
  op.topic = gen_topic(h);
  op.payload = "m" + std::to_string(h.payloads);
  op.headers = gen_headers();
  if (*g::inRange(0, 4) == 0) op.key = pick(kMembers);
  return op;
}

template <>
oplang::Op gen_op<oplang::Subscribe>(const Hints& h) {
  oplang::Subscribe op;
  op.topic = gen_topic(h);
  op.name = gen_sub_name();
  op.filter = gen_filter();
  op.max_deliveries = gen_max_deliveries();
  op.start = gen_start(h, op.topic);
  if (*g::inRange(0, 4) == 0) {
    op.group = pick(kGroups);
    op.filter = {};
    op.max_deliveries = 3;
    op.start = {};
  }
  op.script = gen_script(h);
  return op;
}

template <>
oplang::Op gen_op<oplang::SubscribePull>(const Hints& h) {
  oplang::SubscribePull op;
  op.topic = gen_topic(h);
  op.name = gen_sub_name();
  op.filter = gen_filter();
  op.ack_timeout = gen_timeout();
  op.max_deliveries = gen_max_deliveries();
  op.start = gen_start(h, op.topic);
  return op;
}

template <>
oplang::Op gen_op<oplang::Unsubscribe>(const Hints& h) {
  return oplang::Unsubscribe{gen_topic(h), gen_sub_name()};
}

template <>
oplang::Op gen_op<oplang::Seek>(const Hints& h) {
  oplang::Seek op{gen_topic(h), gen_sub_name(), 0};
  op.offset = h.edge_offset(op.topic);
  return op;
}

template <>
oplang::Op gen_op<oplang::Drain>(const Hints&) {
  return oplang::Drain{};
}

template <>
oplang::Op gen_op<oplang::Poll>(const Hints& h) {
  return oplang::Poll{gen_topic(h), gen_sub_name(), gen_member(), *g::inRange<std::size_t>(1, 4)};
}

// Acks aim at recent offsets, so they often hit a held message (or its neighbour).
template <class T>
T gen_ack_like(const Hints& h) {
  T op;
  op.topic = gen_topic(h);
  op.sub = gen_sub_name();
  op.member = gen_member();
  auto it = h.topics.find(op.topic);
  const model::Offset end = it == h.topics.end() ? 0 : it->second.end;
  op.offset = end == 0 ? 0 : *g::inRange<model::Offset>(end > 4 ? end - 4 : 0, end);
  return op;
}

template <>
oplang::Op gen_op<oplang::Ack>(const Hints& h) {
  return gen_ack_like<oplang::Ack>(h);
}

template <>
oplang::Op gen_op<oplang::Nack>(const Hints& h) {
  return gen_ack_like<oplang::Nack>(h);
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

// Advances by the exact timeouts in use, so deadlines are often hit on the tick.
template <>
oplang::Op gen_op<oplang::Advance>(const Hints& h) {
  std::vector<model::Millis> steps = {0, 1, 5, 10, 20, 30};
  for (const auto& [name, hint] : h.topics) {
    for (model::Millis t : hint.timeouts) steps.push_back(t);
  }
  return oplang::Advance{*g::elementOf(steps)};
}

template <>
oplang::Op gen_op<oplang::GetStats>(const Hints& h) {
  return oplang::GetStats{gen_topic(h), *g::elementOf(std::vector<std::string>{"s0", "s1", "s2", "s3"})};
}

template <>
oplang::Op gen_op<oplang::GetDeadLetters>(const Hints& h) {
  return oplang::GetDeadLetters{gen_topic(h), gen_sub_name()};
}

}  // namespace props
