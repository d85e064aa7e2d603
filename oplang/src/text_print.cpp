// Printing ops in the text form (see oplang/text.h).
#include <cstdio>
#include <sstream>

#include "oplang/text.h"

namespace oplang {
namespace {

bool is_word_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '.' || c == '-';
}

std::string quote(std::string_view v) {
  std::string out = "\"";
  for (char c : v) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '\r') {
      out += "\\r";
    } else if (u < 0x20 || u >= 0x7f) {
      char buf[5];
      std::snprintf(buf, sizeof buf, "\\x%02x", u);
      out += buf;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

std::string print_start(const Start& s) {
  switch (s.kind) {
    case Start::Kind::kEnd:
      return "end";
    case Start::Kind::kBeginning:
      return "begin";
    case Start::Kind::kOffset:
      return std::to_string(s.offset);
  }
  return "end";
}

// ` backoff=[a,b]`, or nothing for an empty list (R24).
std::string print_backoff(const std::vector<Millis>& backoff) {
  if (backoff.empty()) return "";
  std::string out = " backoff=[";
  for (std::size_t i = 0; i < backoff.size(); ++i) {
    out += (i > 0 ? "," : "") + std::to_string(backoff[i]);
  }
  return out + "]";
}

std::string print_headers(const Headers& h, const char* separator) {
  std::string out;
  bool first = true;
  for (const auto& [k, v] : h) {
    if (!first) out += separator;
    out += format_value(k) + "=" + format_value(v);
    first = false;
  }
  return out;
}

const char* print_verdict(model::Verdict v) {
  switch (v) {
    case model::Verdict::kConfirm:
      return "confirm";
    case model::Verdict::kReject:
      return "reject";
    case model::Verdict::kThrowStd:
      return "throw";
    case model::Verdict::kThrowOther:
      return "throw42";
    case model::Verdict::kTerminate:
      return "term";
  }
  return "confirm";
}

std::string print_step(const model::Step& s) {
  using model::EffectKind;
  std::string effect;
  switch (s.effect) {
    case EffectKind::kNone:
      return print_verdict(s.verdict);
    case EffectKind::kUnsubscribeSelf:
      effect = "unsubscribe";
      break;
    case EffectKind::kUnsubscribe:
      effect = "unsubscribe(" + format_value(s.topic) + "," + format_value(s.name) + ")";
      break;
    case EffectKind::kPublish:
      effect = "publish(" + format_value(s.topic) + "," + format_value(s.payload) + ")";
      break;
    case EffectKind::kSeek:
      effect = "seek(" + format_value(s.topic) + "," + format_value(s.name) + "," +
               std::to_string(s.offset) + ")";
      break;
    case EffectKind::kDrain:
      effect = "drain";
      break;
    case EffectKind::kStall:
      effect = "stall(" + std::to_string(s.ms) + ")";
      break;
  }
  if (s.verdict != model::Verdict::kConfirm) effect += std::string("+") + print_verdict(s.verdict);
  return effect;
}

struct Printer {
  std::string operator()(const CreateTopic& o) const {
    std::string out =
        (o.if_absent ? "create_topic_if_absent " : "create_topic ") + format_value(o.name);
    if (o.retention_messages) out += " messages=" + std::to_string(o.retention_messages);
    if (o.retention_bytes) out += " bytes=" + std::to_string(o.retention_bytes);
    if (o.partitions != 1) out += " partitions=" + std::to_string(o.partitions);
    if (o.partitioner == model::Partitioner::kJavaHashCode) out += " partitioner=java";
    return out;
  }
  std::string operator()(const DeleteTopic& o) const {
    return "delete_topic " + format_value(o.name);
  }
  std::string operator()(const Publish& o) const {
    return (o.via_publisher ? "publish_via " : "publish ") + format_value(o.topic) + " " +
           format_value(o.payload) + headers_and_key(o.headers, o.key);
  }
  std::string operator()(const PublishTo& o) const {
    return "publish_to " + format_value(o.topic) + " " + std::to_string(o.partition) + " " +
           format_value(o.payload) + headers_and_key(o.headers, o.key);
  }
  std::string operator()(const Partitions& o) const {
    return "partitions " + format_value(o.topic);
  }
  static std::string headers_and_key(const Headers& headers, const std::string& key) {
    std::string out;
    if (!headers.empty()) out += " " + print_headers(headers, " ");
    if (!key.empty()) out += " key:" + format_value(key);
    return out;
  }
  std::string operator()(const Subscribe& o) const {
    if (o.saved) {
      std::string out = "resubscribe " + format_value(o.topic) + " " + format_value(o.name);
      if (!o.group.empty()) out += " group=" + format_value(o.group);
      if (o.idempotent) out += " idempotent";
      return out + print_script(o.script);
    }
    std::string out = "subscribe " + format_value(o.topic) + " " + format_value(o.name);
    if (!o.filter.empty()) out += " filter=[" + print_headers(o.filter, ",") + "]";
    if (o.max_deliveries != 5) out += " max=" + std::to_string(o.max_deliveries);
    if (o.start != Start{}) out += " start=" + print_start(o.start);
    if (!o.group.empty()) out += " group=" + format_value(o.group);
    if (o.idempotent) out += " idempotent";
    if (o.durable_attempts) out += " durable_attempts";
    out += print_backoff(o.backoff);
    return out + print_script(o.script);
  }
  std::string operator()(const SubscribePull& o) const {
    return "subscribe_pull " + format_value(o.topic) + " " + format_value(o.name) + pull_options(o);
  }
  template <typename T>
  static std::string pull_options(const T& o) {
    std::string out;
    if (!o.filter.empty()) out += " filter=[" + print_headers(o.filter, ",") + "]";
    if (o.ack_timeout != 30000) out += " timeout=" + std::to_string(o.ack_timeout);
    if (o.max_deliveries != 5) out += " max=" + std::to_string(o.max_deliveries);
    if (o.start != Start{}) out += " start=" + print_start(o.start);
    if (o.max_in_flight != 0) out += " inflight=" + std::to_string(o.max_in_flight);
    if (o.ordered_by_key) out += " ordered";
    if (o.durable_attempts) out += " durable_attempts";
    return out + print_backoff(o.backoff);
  }
  std::string operator()(const Unsubscribe& o) const {
    return "unsubscribe " + format_value(o.topic) + " " + format_value(o.name);
  }
  std::string operator()(const Seek& o) const {
    return "seek " + format_value(o.topic) + " " + format_value(o.name) + " " +
           std::to_string(o.offset);
  }
  std::string operator()(const Drain&) const { return "drain"; }
  std::string operator()(const Poll& o) const {
    std::string out =
        "poll " + format_value(o.topic) + " " + format_value(o.sub) + " " + format_value(o.member);
    if (o.max != 1) out += " max=" + std::to_string(o.max);
    return out;
  }
  std::string answer(const char* verb, const std::string& topic, const std::string& sub,
                     Offset offset, Which which, const std::string& member) const {
    const std::string what = which == Which::kOldest ? "oldest"
                             : which == Which::kAll  ? "all"
                                                     : std::to_string(offset);
    return std::string(verb) + " " + format_value(topic) + " " + format_value(sub) + " " + what +
           " " + format_value(member);
  }
  static std::string gen(std::uint64_t generation) {
    return generation != 0 ? " gen=" + std::to_string(generation) : "";
  }
  std::string operator()(const Ack& o) const {
    return answer("ack", o.topic, o.sub, o.offset, o.which, o.member) + gen(o.generation);
  }
  std::string operator()(const Nack& o) const {
    return answer("nack", o.topic, o.sub, o.offset, o.which, o.member) +
           (o.delay ? " delay=" + std::to_string(*o.delay) : "") + gen(o.generation);
  }
  std::string operator()(const Term& o) const {
    return answer("term", o.topic, o.sub, o.offset, o.which, o.member) + gen(o.generation);
  }
  std::string operator()(const JoinGroupPush& o) const {
    std::string out = "join_group_push " + format_value(o.topic) + " " + format_value(o.group) +
                      " " + format_value(o.member) + print_assignor(o.assignor);
    if (!o.filter.empty()) out += " filter=[" + print_headers(o.filter, ",") + "]";
    if (o.max_deliveries != 5) out += " max=" + std::to_string(o.max_deliveries);
    if (o.start != Start{}) out += " start=" + print_start(o.start);
    out += print_backoff(o.backoff);
    return out + print_script(o.script);
  }
  static std::string print_assignor(model::Assignor a) {
    switch (a) {
      case model::Assignor::kRange:
        return "";
      case model::Assignor::kRoundRobin:
        return " assignor=round_robin";
      case model::Assignor::kSticky:
        return " assignor=sticky";
      case model::Assignor::kCooperativeSticky:
        return " assignor=cooperative";
    }
    return "";
  }
  static std::string print_script(const model::Script& script) {
    if (script.empty()) return "";
    std::string out = " script=[";
    for (std::size_t i = 0; i < script.size(); ++i) out += (i ? "," : "") + print_step(script[i]);
    return out + "]";
  }
  std::string operator()(const JoinGroup& o) const {
    return "join_group " + format_value(o.topic) + " " + format_value(o.group) + " " +
           format_value(o.member) + print_assignor(o.assignor) + pull_options(o);
  }
  std::string operator()(const LeaveGroup& o) const {
    return named("leave_group", o.topic, o.group) + " " + format_value(o.member);
  }
  std::string operator()(const PollGroup& o) const {
    return named("poll_group", o.topic, o.group) + " " + format_value(o.member) +
           (o.max != 1 ? " max=" + std::to_string(o.max) : "");
  }
  std::string operator()(const GetMembership& o) const {
    return named("membership", o.topic, o.group) + " " + format_value(o.member);
  }
  std::string operator()(const GetGroupStats& o) const {
    return named("group_stats", o.topic, o.group);
  }
  static std::string named(const char* verb, const std::string& topic, const std::string& name) {
    return std::string(verb) + " " + format_value(topic) + " " + format_value(name);
  }
  std::string operator()(const Redrive& o) const { return named("redrive", o.topic, o.name); }
  std::string operator()(const RedriveTo& o) const {
    return named("redrive_to", o.topic, o.name) + " " + format_value(o.to);
  }
  std::string operator()(const Purge& o) const {
    return named("purge_dead_letters", o.topic, o.name);
  }
  std::string operator()(const Pause& o) const { return named("pause", o.topic, o.name); }
  std::string operator()(const Resume& o) const { return named("resume", o.topic, o.name); }
  std::string operator()(const GetLag& o) const { return named("lag", o.topic, o.name); }
  std::string operator()(const OffsetForTime& o) const {
    return "offset_for_time " + format_value(o.topic) + " " + std::to_string(o.time);
  }
  std::string operator()(const SeekToTime& o) const {
    return named("seek_to_time", o.topic, o.name) + " " + std::to_string(o.time);
  }
  std::string operator()(const Extend& o) const {
    return answer("extend", o.topic, o.sub, o.offset, o.which, o.member) + " " +
           std::to_string(o.extension) + gen(o.generation);
  }
  std::string operator()(const Expire&) const { return "expire"; }
  std::string operator()(const Advance& o) const { return "advance " + std::to_string(o.ms); }
  std::string operator()(const GetStats& o) const {
    return "stats " + format_value(o.topic) + " " + format_value(o.name);
  }
  std::string operator()(const GetDeadLetters& o) const {
    return "dead_letters " + format_value(o.topic) + " " + format_value(o.name);
  }
  std::string operator()(const Yield& o) const {
    return o.count == 1 ? "yield" : "yield " + std::to_string(o.count);
  }
  std::string operator()(const Subscriptions& o) const {
    return "subscriptions " + format_value(o.topic);
  }
  std::string operator()(const Topics& o) const {
    return o.waiting ? "waiting_for_handler" : "topics";
  }
  std::string operator()(const PollWait& o) const {
    std::string out = "poll_wait " + format_value(o.topic) + " " + format_value(o.sub) + " " +
                      format_value(o.member);
    if (o.max != 1) out += " max=" + std::to_string(o.max);
    if (o.timeout != 0) out += " timeout=" + std::to_string(o.timeout);
    return out;
  }
  std::string operator()(const WaitIdle& o) const { return "wait_idle" + timeout(o.timeout); }
  std::string operator()(const WaitDelivered& o) const {
    return "wait_delivered" + timeout(o.timeout);
  }
  std::string operator()(const EndOffset& o) const { return "end_offset " + format_value(o.topic); }
  std::string operator()(const OldestOffset& o) const {
    return "oldest_offset " + format_value(o.topic);
  }
  std::string operator()(const Restart&) const { return "restart"; }
  std::string operator()(const Fault& o) const {
    std::string out = std::string("fault ") + name_of(o.call);
    if (o.nth != 1) out += " nth=" + std::to_string(o.nth);
    if (o.error != DiskError::kEio) out += std::string(" error=") + name_of(o.error);
    return out;
  }
  std::string operator()(const Crash& o) const {
    std::string out = o.seed == 0 ? "crash" : "crash seed=" + std::to_string(o.seed);
    if (o.damage == Damage::kTruncate) out += " truncate";
    if (o.damage == Damage::kCorrupt) out += " corrupt";
    return out;
  }
  static std::string timeout(Millis ms) { return ms == 0 ? "" : " timeout=" + std::to_string(ms); }
};

std::string print_policy(const SyncPolicy& p) {
  switch (p.kind) {
    case SyncPolicy::Kind::kAlways:
      return "always";
    case SyncPolicy::Kind::kNone:
      return "none";
    case SyncPolicy::Kind::kEvery:
      return "every(" + std::to_string(p.every) + ")";
  }
  return "always";
}

std::string print_dispatcher(const BrokerSpec& b);

std::string print_broker(const BrokerSpec& b) {
  std::string out = print_dispatcher(b);
  if (b.manual_clock) out += " clock=manual";
  if (b.auto_expire > 0) out += " auto_expire=" + std::to_string(b.auto_expire);
  if (!b.durable) return out;
  out += " durable";
  if (b.publish_sync != SyncPolicy{}) out += " publish_sync=" + print_policy(b.publish_sync);
  if (b.commit_sync != SyncPolicy{}) out += " commit_sync=" + print_policy(b.commit_sync);
  return out;
}

std::string print_dispatcher(const BrokerSpec& b) {
  using D = BrokerSpec::Dispatcher;
  const BrokerSpec defaults;
  switch (b.dispatcher) {
    case D::kSynchronous:
      return "broker sync";
    case D::kLane:
      return "broker lane" +
             (b.backoff != defaults.backoff ? " backoff=" + std::to_string(b.backoff) : "") +
             (b.shutdown ? " shutdown" : "");
    case D::kPool: {
      std::string out = "broker pool";
      if (b.threads != defaults.threads) out += " threads=" + std::to_string(b.threads);
      if (b.timeout != defaults.timeout) out += " timeout=" + std::to_string(b.timeout);
      if (b.backoff != defaults.backoff) out += " backoff=" + std::to_string(b.backoff);
      if (b.shutdown) out += " shutdown";
      return out;
    }
  }
  return "broker sync";
}

}  // namespace

std::string format_value(std::string_view value) {
  if (value.empty()) return quote(value);
  for (char c : value) {
    if (!is_word_char(c)) return quote(value);
  }
  return std::string(value);
}

std::string print(const Op& op) { return std::visit(Printer{}, op); }

const char* name_of(IoCall call) {
  switch (call) {
    case IoCall::kOpen:
      return "open";
    case IoCall::kAppend:
      return "append";
    case IoCall::kSync:
      return "sync";
    case IoCall::kSyncDir:
      return "sync_dir";
    case IoCall::kRename:
      return "rename";
    case IoCall::kRemove:
      return "remove";
    case IoCall::kTruncate:
      return "truncate";
    case IoCall::kExtend:
      return "extend";
  }
  return "?";
}

const char* name_of(DiskError error) { return error == DiskError::kEnospc ? "enospc" : "eio"; }

std::string print(const Step& step) { return print_step(step); }

std::string print(const Script& script) {
  std::string out;
  for (const Op& op : script) out += print(op) + "\n";
  return out;
}

std::string print(const Program& program) {
  std::string out = print_broker(program.broker) + "\n" + print(program.setup);
  for (const Fiber& f : program.fibers) {
    out += "fiber " + format_value(f.name) + "\n";
    for (const Op& op : f.ops) out += "  " + print(op) + "\n";
  }
  return out;
}

std::string print(const std::vector<Program>& programs) {
  std::string out;
  for (const Program& p : programs) out += print(p);
  return out;
}

}  // namespace oplang
