#include "option_pairs.h"

#include <algorithm>
#include <variant>

namespace props {
namespace {

const std::vector<std::string> kPull = {"filter",           "max_in_flight", "ordered", "backoff",
                                        "durable_attempts", "retention",     "paused",  "redriven",
                                        "seeked",           "keyed"};
const std::vector<std::string> kPush = {"filter",     "group",     "backoff", "durable_attempts",
                                        "idempotent", "retention", "paused",  "redriven",
                                        "seeked",     "keyed"};

std::string pair_name(bool pull, const std::string& a, const std::string& b) {
  return std::string(pull ? "pull " : "push ") + std::min(a, b) + "+" + std::max(a, b);
}

}  // namespace

std::vector<std::string> OptionPairs::expected() {
  // A group's members share one set of options, and the generator gives groups no filter,
  // back-off list or durable attempts (op_generators.cpp, gen_op<Subscribe>).
  const std::set<std::string> never = {pair_name(false, "group", "filter"),
                                       pair_name(false, "group", "backoff"),
                                       pair_name(false, "group", "durable_attempts")};
  std::vector<std::string> out;
  for (bool pull : {true, false}) {
    const auto& features = pull ? kPull : kPush;
    for (std::size_t i = 0; i < features.size(); ++i)
      for (std::size_t j = i + 1; j < features.size(); ++j)
        if (const std::string p = pair_name(pull, features[i], features[j]); !never.count(p))
          out.push_back(p);
  }
  return out;
}

bool OptionPairs::retained(const std::string& topic) const {
  if (retained_.count(topic)) return true;
  const std::size_t dash = topic.rfind('-');  // a partition "t-N" of a partitioned topic
  return dash != std::string::npos && retained_.count(topic.substr(0, dash)) > 0;
}

void OptionPairs::delivered(const std::pair<std::string, std::string>& key) {
  auto it = subs_.find(key);
  if (it == subs_.end()) return;
  const Sub& s = it->second;
  for (auto a = s.features.begin(); a != s.features.end(); ++a)
    for (auto b = std::next(a); b != s.features.end(); ++b)
      reached_.insert(pair_name(s.pull, *a, *b));
}

void OptionPairs::observe(const oplang::Op& op, const oplang::Outcome& outcome) {
  using Key = std::pair<std::string, std::string>;
  const bool ok = !outcome.error;
  if (const auto* o = std::get_if<oplang::CreateTopic>(&op); o && ok) {
    if (o->retention_messages > 0 || o->retention_bytes > 0) retained_.insert(o->name);
  } else if (const auto* o = std::get_if<oplang::DeleteTopic>(&op); o && ok) {
    retained_.erase(o->name);
    std::erase_if(subs_, [&](const auto& e) { return e.first.first == o->name; });
  } else if (const auto* o = std::get_if<oplang::SubscribePull>(&op); o && ok) {
    Sub s{true, {}, {}};
    if (!o->filter.empty()) s.features.insert("filter");
    if (o->max_in_flight > 0) s.features.insert("max_in_flight");
    if (o->ordered_by_key) s.features.insert("ordered");
    if (!o->backoff.empty()) s.features.insert("backoff");
    if (o->durable_attempts) s.features.insert("durable_attempts");
    if (retained(o->topic)) s.features.insert("retention");
    subs_.try_emplace({o->topic, o->name}, std::move(s));
  } else if (const auto* o = std::get_if<oplang::Subscribe>(&op); o && ok) {
    Sub s{false, {}, o->group};
    if (!o->filter.empty()) s.features.insert("filter");
    if (!o->group.empty()) s.features.insert("group");
    if (!o->backoff.empty()) s.features.insert("backoff");
    if (o->durable_attempts) s.features.insert("durable_attempts");
    if (o->idempotent) s.features.insert("idempotent");
    if (retained(o->topic)) s.features.insert("retention");
    subs_.try_emplace({o->topic, o->name}, std::move(s));
  } else if (const auto* o = std::get_if<oplang::Unsubscribe>(&op); o && ok) {
    subs_.erase({o->topic, o->name});
  }
  // What happened to a subscription (by its name; a group's controls reach its members).
  auto mark = [&](const std::string& topic, const std::string& name, const char* feature) {
    for (auto& [key, s] : subs_)
      if (key.first == topic && (key.second == name || s.group == name)) s.features.insert(feature);
  };
  if (const auto* o = std::get_if<oplang::Pause>(&op); o && ok) mark(o->topic, o->name, "paused");
  if (const auto* o = std::get_if<oplang::Seek>(&op); o && ok) mark(o->topic, o->name, "seeked");
  if (const auto* o = std::get_if<oplang::SeekToTime>(&op); o && ok)
    mark(o->topic, o->name, "seeked");
  if (const auto* o = std::get_if<oplang::Redrive>(&op)) {
    const auto* moved = std::get_if<oplang::MovedResult>(&outcome.value);
    if (moved && moved->count > 0) mark(o->topic, o->name, "redriven");
  }
  if (const auto* o = std::get_if<oplang::Publish>(&op); o && ok && !o->key.empty()) {
    for (auto& [key, s] : subs_)
      if (key.first == o->topic || key.first.rfind(o->topic + "-", 0) == 0)
        s.features.insert("keyed");
  }
  // Deliveries: a poll that got something, a handler call.
  if (const auto* o = std::get_if<oplang::Poll>(&op)) {
    const auto* got = std::get_if<std::vector<model::Received>>(&outcome.value);
    if (got != nullptr && !got->empty()) delivered({o->topic, o->sub});
  }
  if (const auto* o = std::get_if<oplang::PollWait>(&op)) {
    const auto* got = std::get_if<std::vector<model::Received>>(&outcome.value);
    if (got != nullptr && !got->empty()) delivered({o->topic, o->sub});
  }
  for (const auto& call : outcome.calls) delivered(Key{call.topic, call.subscription});
}

}  // namespace props
