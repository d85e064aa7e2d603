// The state a script leaves after a step (oplang/state_view.h).
#include "oplang/state_view.h"

#include <algorithm>
#include <cstdio>

#include "oplang/model_runner.h"
#include "oplang/trace.h"

namespace oplang {
namespace {

bool contains(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

// The kept messages of `topic`, read by a pull subscription of a name nobody uses that
// starts at the beginning and polls everything (on `copy`, which the caller throws away).
std::vector<LogCell> read_log(model::Model& copy, const std::string& topic, model::Offset oldest,
                              model::Offset end) {
  if (end <= oldest) return {};
  std::string probe = "\x01log";
  const std::vector<std::string> taken = copy.subscriptions(topic);
  const std::vector<std::string> pushes = copy.group_names(topic);
  const std::vector<std::string> dormant = copy.dormant_names(topic);
  while (contains(taken, probe) || contains(pushes, probe) || contains(dormant, probe)) {
    probe += '_';
  }
  model::PullOptions options;
  options.start.kind = model::Start::Kind::kBeginning;
  copy.subscribe_pull(topic, probe, options);
  std::vector<LogCell> out;
  for (const model::Received& r : copy.poll(topic, probe, "view", copy.now(), end - oldest)) {
    out.push_back(LogCell{r.offset, r.payload});
  }
  return out;
}

std::string kind_of(const model::Model& m, const std::string& topic, const std::string& name,
                    const std::vector<std::string>& waiting) {
  for (const model::Model::GroupView& g : m.consumer_groups()) {
    if (g.name == name && (g.topic == topic || contains(g.parts, topic))) return "consumer group";
  }
  if (contains(m.pull_names(topic), name)) return "pull";
  if (contains(m.group_names(topic), name)) return "push group";
  if (contains(waiting, topic + "/" + name)) return "no handler";
  return "push";
}

TopicView view_topic(const model::Model& m, model::Model& copy, const std::string& name,
                     const std::vector<std::string>& waiting) {
  TopicView t;
  t.name = name;
  t.partitions = m.partitions(name);
  // A partitioned topic has no log of its own (R29): the model may refuse these, or give
  // its partitions' totals; its partitions are topics of their own.
  try {
    t.oldest = m.oldest_offset(name);
  } catch (const model::Error&) {
  }
  try {
    t.end = m.end_offset(name);
  } catch (const model::Error&) {
  }
  if (t.partitions > 1 || !t.oldest || !t.end) return t;
  std::vector<std::string> names = m.subscriptions(name);
  for (const std::string& g : m.group_names(name)) {
    if (!contains(names, g)) names.push_back(g);
  }
  for (const std::string& sub : names) {
    SubscriptionView s;
    s.name = sub;
    s.kind = kind_of(m, name, sub, waiting);
    s.stats = copy.stats(name, sub);
    s.held = m.held(name, sub);
    s.retry_waits = m.retry_waits(name, sub);
    s.dead = copy.dead_letters(name, sub);
    t.subscriptions.push_back(std::move(s));
  }
  t.log = read_log(copy, name, *t.oldest, *t.end);
  return t;
}

// JSON, written by hand: a comma goes before every value or key that follows another.
class Json {
 public:
  Json& str(const std::string& s) {
    separate();
    out_ += '"';
    for (char c : s) {
      const auto u = static_cast<unsigned char>(c);
      if (c == '"' || c == '\\') {
        out_ += '\\';
        out_ += c;
      } else if (u < 0x20 || u >= 0x7f) {
        char buf[8];
        std::snprintf(buf, sizeof buf, "\\u%04x", u);
        out_ += buf;
      } else {
        out_ += c;
      }
    }
    out_ += '"';
    return *this;
  }
  Json& key(const char* k) {
    str(k);
    out_ += ':';
    after_key_ = true;
    return *this;
  }
  Json& num(long long n) { return value(std::to_string(n)); }
  Json& unum(unsigned long long n) { return value(std::to_string(n)); }
  Json& boolean(bool b) { return value(b ? "true" : "false"); }
  Json& open(char bracket) {
    separate();
    out_ += bracket;
    first_ = true;
    return *this;
  }
  Json& close(char bracket) {
    out_ += bracket;
    first_ = false;
    return *this;
  }
  [[nodiscard]] const std::string& out() const { return out_; }

 private:
  Json& value(const std::string& v) {
    separate();
    out_ += v;
    return *this;
  }
  void separate() {
    if (!first_ && !after_key_) out_ += ',';
    first_ = after_key_ = false;
  }
  std::string out_;
  bool first_ = true;       // nothing written yet in the object or array just opened
  bool after_key_ = false;  // a key was just written: its value follows
};

void write_stats(Json& j, const model::Stats& s) {
  j.key("committed").unum(s.committed).key("cursor").unum(s.cursor);
  j.key("backlog").unum(s.backlog).key("in_flight").unum(s.in_flight);
  j.key("delivered").unum(s.delivered).key("redelivered").unum(s.redelivered);
  j.key("confirmed").unum(s.confirmed).key("dead_lettered").unum(s.dead_lettered);
  j.key("skipped").unum(s.skipped).key("filtered").unum(s.filtered);
  j.key("redriven").unum(s.redriven).key("purged").unum(s.purged);
  j.key("paused").boolean(s.paused);
}

void write_subscription(Json& j, const SubscriptionView& s) {
  j.open('{').key("name").str(s.name).key("kind").str(s.kind);
  write_stats(j, s.stats);
  j.key("held").open('[');
  for (const auto& h : s.held) {
    j.open('{').key("offset").unum(h.offset).key("member").str(h.member);
    j.key("deadline").num(h.deadline).close('}');
  }
  j.close(']').key("retry_waits").open('[');
  for (model::Millis w : s.retry_waits) j.num(w);
  j.close(']').key("dead").open('[');
  for (const model::DeadLetter& d : s.dead) {
    j.open('{').key("offset").unum(d.offset).key("payload").str(d.payload);
    j.key("attempts").num(d.attempts).key("reason").str(d.reason);
    j.key("died_at").num(d.died_at).close('}');
  }
  j.close(']').close('}');
}

void write_topic(Json& j, const TopicView& t) {
  j.open('{').key("name").str(t.name).key("partitions").unum(t.partitions);
  if (t.oldest) j.key("oldest").unum(*t.oldest);
  if (t.end) j.key("end").unum(*t.end);
  j.key("log").open('[');
  for (const LogCell& c : t.log)
    j.open('{').key("offset").unum(c.offset).key("payload").str(c.payload).close('}');
  j.close(']').key("subscriptions").open('[');
  for (const SubscriptionView& s : t.subscriptions) write_subscription(j, s);
  j.close(']').close('}');
}

void write_group(Json& j, const model::Model::GroupView& g) {
  j.open('{').key("topic").str(g.topic).key("name").str(g.name);
  j.key("generation").unum(g.generation).key("push").boolean(g.push);
  j.key("members").open('[');
  for (const std::string& m : g.members) j.str(m);
  j.close(']').key("partitions").open('[');
  for (std::size_t p = 0; p < g.parts.size(); ++p) {
    j.open('{').key("topic").str(g.parts[p]);
    if (p < g.owners.size()) {
      j.key("owner").str(g.owners[p].first).key("since").unum(g.owners[p].second);
    }
    j.close('}');
  }
  j.close(']').close('}');
}

}  // namespace

StateView view(const model::Model& m) {
  model::Model copy = m;
  StateView out;
  out.now = m.now();
  out.waiting_for_handler = m.waiting_for_handler();
  out.groups = m.consumer_groups();
  for (const std::string& name : m.topics()) {
    out.topics.push_back(view_topic(m, copy, name, out.waiting_for_handler));
  }
  return out;
}

StateView state_after(const Script& script, std::size_t steps) {
  ModelRunner runner;
  for (std::size_t i = 0; i < steps && i < script.size(); ++i) run_step(runner, script[i]);
  StateView out = view(runner.model());
  out.step = std::min(steps, script.size());
  return out;
}

std::string to_json(const StateView& state) {
  Json j;
  j.open('{').key("step").unum(state.step).key("now").num(state.now);
  j.key("topics").open('[');
  for (const TopicView& t : state.topics) write_topic(j, t);
  j.close(']').key("groups").open('[');
  for (const auto& g : state.groups) write_group(j, g);
  j.close(']').key("waiting_for_handler").open('[');
  for (const std::string& w : state.waiting_for_handler) j.str(w);
  j.close(']').close('}');
  return j.out();
}

}  // namespace oplang
