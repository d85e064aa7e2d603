// The Redis Streams target (conformance/redis_target.h) on hiredis.
#include "conformance/redis_target.h"

#include <hiredis/hiredis.h>

#include <algorithm>
#include <limits>
#include <optional>
#include <stdexcept>
#include <thread>
#include <tuple>
#include <type_traits>
#include <utility>
#include <variant>

#include "conformance/redis_server.h"
#include "model/errors.h"
#include "model_time.h"
#include "redis_scripts.h"

namespace conformance {

namespace {

using model::Error;
using model::ErrorCode;

// The idle time a returned (nacked or expired) entry is given: far past any ack timeout the
// target uses (those are capped below it), so the next XAUTOCLAIM takes it back, and still
// a delivery time after 1970 on the server's clock.
constexpr long long kReturnedIdleMs = 1'000'000'000'000LL;
// Connecting, and every command (a script included), may take this long before the server
// counts as failed.
constexpr timeval kConnectTimeout{2, 0};
constexpr timeval kCommandTimeout{5, 0};
// A call that finds its connection lost (a server killed or restarted under a fault run)
// connects again for at most this long, every kReconnectEvery, before the engine counts as
// failed. The call that saw the connection drop is never retried: it failed (its effect,
// if any, is unknown to the caller), and only the next call reconnects.
constexpr auto kReconnectFor = std::chrono::seconds(10);
constexpr auto kReconnectEvery = std::chrono::milliseconds(50);
// The most one poll asks for: XAUTOCLAIM refuses a COUNT near LONG_MAX, and no run has a
// backlog anywhere near this.
constexpr std::size_t kMaxPoll = 100000;

struct ReplyFree {
  void operator()(redisReply* r) const { freeReplyObject(r); }
};
using Reply = std::unique_ptr<redisReply, ReplyFree>;

// Runs one command (binary-safe arguments). Throws TargetFailure if the connection failed
// or the server answered with an error, but Error(kUnknownSubscription) for the engine's own
// NOGROUP (its stream or group is gone although the adapter made them: the engine lost them,
// say in a failover, and says so; the answer is passed on, not hidden).
Reply command(redisContext* c, const std::vector<std::string>& args, const std::string& what) {
  std::vector<const char*> argv;
  std::vector<std::size_t> lens;
  for (const std::string& a : args) {
    argv.push_back(a.data());
    lens.push_back(a.size());
  }
  auto* r = static_cast<redisReply*>(
      redisCommandArgv(c, static_cast<int>(args.size()), argv.data(), lens.data()));
  if (r == nullptr) throw TargetFailure(what + ": " + (c->err != 0 ? c->errstr : "no reply"));
  Reply reply(r);
  if (reply->type == REDIS_REPLY_ERROR) {
    const std::string error(reply->str, reply->len);
    if (error.starts_with("NOGROUP")) throw Error(ErrorCode::kUnknownSubscription);
    throw TargetFailure(what + ": " + error);
  }
  return reply;
}

std::string text(const redisReply* r) {
  if (r == nullptr || (r->type != REDIS_REPLY_STRING && r->type != REDIS_REPLY_STATUS)) {
    throw TargetFailure("redis: expected a string reply");
  }
  return std::string(r->str, r->len);
}

long long integer(const redisReply* r) {
  if (r == nullptr || r->type != REDIS_REPLY_INTEGER) {
    throw TargetFailure("redis: expected an integer reply");
  }
  return r->integer;
}

// A number the adapter wrote into a dead-letter entry; TargetFailure if it is not one.
long long number(const std::string& field, const std::string& value) {
  try {
    return std::stoll(value);
  } catch (const std::exception&) {
    throw TargetFailure("redis: dead letter field " + field + " is not a number: " + value);
  }
}

// The elements of an array reply (none for nil).
std::vector<const redisReply*> elements(const redisReply* r) {
  if (r == nullptr || r->type == REDIS_REPLY_NIL) return {};
  if (r->type != REDIS_REPLY_ARRAY) throw TargetFailure("redis: expected an array reply");
  return {r->element, r->element + r->elements};
}

// Names become [A-Za-z0-9_.-] with every other byte (':' and '%' included) as %HH:
// injective, so `<prefix>:<topic>:dlq:<sub>` never names another topic's key.
std::string encode(const std::string& name) {
  static const char* hex = "0123456789ABCDEF";
  std::string out;
  for (const char c : name) {
    const auto u = static_cast<unsigned char>(c);
    if ((u >= 'A' && u <= 'Z') || (u >= 'a' && u <= 'z') || (u >= '0' && u <= '9') || u == '-' ||
        u == '_' || u == '.') {
      out.push_back(c);
    } else {
      out.push_back('%');
      out.push_back(hex[u >> 4]);
      out.push_back(hex[u & 0xF]);
    }
  }
  return out;
}

}  // namespace

void RedisTarget::ContextFree::operator()(redisContext* c) const { redisFree(c); }

RedisTarget::RedisTarget(const std::string& url, std::string prefix, model::Millis unit_ms)
    : prefix_(encode(prefix)), unit_ms_(unit_ms) {
  if (unit_ms_ <= 0) throw std::invalid_argument("RedisTarget: unit_ms must be positive");
  if (url.rfind("redis-sentinel://", 0) == 0) {
    std::tie(sentinels_, master_) = redis_sentinel_url(url);
  } else {
    std::tie(host_, port_) = redis_host_port(url);
  }
  connect();
}

RedisTarget::RedisTarget(WorkerOf of)
    : host_(of.parent.host_),
      port_(of.parent.port_),
      sentinels_(of.parent.sentinels_),
      master_(of.parent.master_),
      prefix_(of.parent.prefix_),
      unit_ms_(of.parent.unit_ms_),
      now_(of.parent.now_),
      start_(of.parent.start_),
      wall_start_(of.parent.wall_start_),
      topics_(of.parent.topics_),
      topic_order_(of.parent.topic_order_),
      owner_(false) {
  connect();
}

std::unique_ptr<Target> RedisTarget::worker() {
  return std::unique_ptr<Target>(new RedisTarget(WorkerOf{*this}));
}

void RedisTarget::connect() {
  if (!sentinels_.empty()) {
    // Where the primary is now, as the first sentinel that answers says.
    std::string asked;
    bool found = false;
    for (const auto& [host, port] : sentinels_) {
      std::unique_ptr<redisContext, ContextFree> s(
          redisConnectWithTimeout(host.c_str(), port, kConnectTimeout));
      asked += (asked.empty() ? "" : ", ") + host + ":" + std::to_string(port);
      if (!s || s->err != 0 || redisSetTimeout(s.get(), kConnectTimeout) != REDIS_OK) continue;
      Reply r(static_cast<redisReply*>(
          redisCommand(s.get(), "SENTINEL get-master-addr-by-name %s", master_.c_str())));
      if (r && r->type == REDIS_REPLY_ARRAY && r->elements == 2 &&
          r->element[0]->type == REDIS_REPLY_STRING && r->element[1]->type == REDIS_REPLY_STRING) {
        host_ = std::string(r->element[0]->str, r->element[0]->len);
        port_ = std::atoi(r->element[1]->str);
        found = true;
        break;
      }
    }
    if (!found) throw TargetFailure("no sentinel (" + asked + ") names the primary of " + master_);
  }
  ctx_.reset(redisConnectWithTimeout(host_.c_str(), port_, kConnectTimeout));
  const std::string where = host_ + ":" + std::to_string(port_);
  if (!ctx_) throw TargetFailure("connect to redis at " + where + ": out of memory");
  if (ctx_->err != 0) throw TargetFailure("connect to redis at " + where + ": " + ctx_->errstr);
  if (redisSetTimeout(ctx_.get(), kCommandTimeout) != REDIS_OK) {
    throw TargetFailure("redis: cannot set the command timeout");
  }
}

void RedisTarget::reconnect_if_lost() {
  if (ctx_ && ctx_->err == 0) return;
  const auto deadline = std::chrono::steady_clock::now() + kReconnectFor;
  std::string last;
  while (true) {
    try {
      connect();
      return;
    } catch (const TargetFailure& e) {
      last = e.what();
    }
    if (std::chrono::steady_clock::now() >= deadline) break;
    std::this_thread::sleep_for(kReconnectEvery);
  }
  throw TargetFailure("redis: no connection within 10 s (" + last + ")");
}

RedisTarget::~RedisTarget() {
  if (!owner_ || !ctx_ || ctx_->err != 0) return;
  std::vector<std::string> del = {"DEL"};
  for (const auto& [name, topic] : topics_) {
    del.push_back(topic.key);
    for (const auto& [sub_name, sub] : topic.subs) del.push_back(sub.dlq);
  }
  if (del.size() == 1) return;
  try {
    command(ctx_.get(), del, "DEL");
  } catch (const TargetFailure&) {
    // A server that died leaves nothing to clean; the run already reported it.
  }
}

bool RedisTarget::serves(const oplang::Op& op) const {
  return in_subset(op) || retention_by_messages(op) || std::holds_alternative<oplang::Seek>(op) ||
         std::holds_alternative<oplang::SeekToTime>(op) ||
         std::holds_alternative<oplang::GetLag>(op) || push_without_effects(op);
}

oplang::Outcome RedisTarget::step(const oplang::Op& op) {
  if (!serves(op)) throw std::invalid_argument("redis: op outside what the target serves");
  if (!owner_ && !std::holds_alternative<oplang::Poll>(op) &&
      !std::holds_alternative<oplang::Ack>(op) && !std::holds_alternative<oplang::Nack>(op)) {
    throw std::invalid_argument("redis: a worker serves poll, ack and nack only");
  }
  reconnect_if_lost();
  oplang::Outcome outcome;
  try {
    outcome.value = std::visit(
        [this, &outcome](const auto& o) -> oplang::Value {
          using T = std::decay_t<decltype(o)>;
          if constexpr (std::is_same_v<T, oplang::CreateTopic>) {
            return create_topic(o);
          } else if constexpr (std::is_same_v<T, oplang::DeleteTopic>) {
            return delete_topic(o);
          } else if constexpr (std::is_same_v<T, oplang::Publish>) {
            return publish(o);
          } else if constexpr (std::is_same_v<T, oplang::SubscribePull>) {
            return subscribe_pull(o);
          } else if constexpr (std::is_same_v<T, oplang::Subscribe>) {
            return subscribe(o);
          } else if constexpr (std::is_same_v<T, oplang::Drain>) {
            return drain(outcome.calls);
          } else if constexpr (std::is_same_v<T, oplang::Unsubscribe>) {
            return unsubscribe(o);
          } else if constexpr (std::is_same_v<T, oplang::Seek>) {
            return seek(o);
          } else if constexpr (std::is_same_v<T, oplang::SeekToTime>) {
            return seek_to_time(o);
          } else if constexpr (std::is_same_v<T, oplang::Poll>) {
            return poll(o);
          } else if constexpr (std::is_same_v<T, oplang::Ack>) {
            return oplang::BoolResult{settle(o.topic, o.sub, o.offset, o.member, "ack")};
          } else if constexpr (std::is_same_v<T, oplang::Nack>) {
            return oplang::BoolResult{settle(o.topic, o.sub, o.offset, o.member, "nack")};
          } else if constexpr (std::is_same_v<T, oplang::Term>) {
            return oplang::BoolResult{settle(o.topic, o.sub, o.offset, o.member, "term")};
          } else if constexpr (std::is_same_v<T, oplang::Extend>) {
            return extend(o);
          } else if constexpr (std::is_same_v<T, oplang::Advance>) {
            return advance(o);
          } else if constexpr (std::is_same_v<T, oplang::Expire>) {
            return expire();
          } else if constexpr (std::is_same_v<T, oplang::GetDeadLetters>) {
            return dead_letters(o);
          } else if constexpr (std::is_same_v<T, oplang::GetLag>) {
            return get_lag(o);
          } else {
            throw std::invalid_argument("redis: op outside the common subset");
          }
        },
        op);
  } catch (const TargetFailure& e) {
    // A primary turned replica answers writes READONLY: the next call asks again where the
    // primary is (with Sentinel) and connects there.
    if (std::string(e.what()).find("READONLY") != std::string::npos) ctx_.reset();
    throw;
  } catch (const Error& e) {
    outcome.error = e.code();
    outcome.value = oplang::Done{};
  }
  return outcome;
}

RedisTarget::Topic& RedisTarget::topic_or_throw(const std::string& name) {
  auto it = topics_.find(name);
  if (it == topics_.end()) throw Error(ErrorCode::kUnknownTopic);
  return it->second;
}

RedisTarget::Sub& RedisTarget::sub_or_throw(Topic& topic, const std::string& name) {
  auto it = topic.subs.find(name);
  if (it == topic.subs.end()) throw Error(ErrorCode::kUnknownSubscription);
  return it->second;
}

long long RedisTarget::timeout_ms(const Sub& sub) const {
  const long double ms = static_cast<long double>(sub.options.ack_timeout) * unit_ms_;
  // Capped under the returned mark (a timeout of 30 years real never passes in a run).
  return ms >= static_cast<long double>(kReturnedIdleMs) ? kReturnedIdleMs - 1
                                                         : static_cast<long long>(ms);
}

model::Offset RedisTarget::offset_of(const Topic& topic, const std::string& id) const {
  auto it = topic.offsets.find(id);
  if (it == topic.offsets.end()) throw TargetFailure("redis: unknown stream id " + id);
  return it->second;
}

model::Offset RedisTarget::offset_or_adopt(Topic& topic, const std::string& id) {
  if (auto it = topic.offsets.find(id); it != topic.offsets.end()) return it->second;
  const model::Offset offset = topic.ids.size();
  topic.ids.push_back(id);
  topic.offsets.emplace(id, offset);
  return offset;
}

oplang::Value RedisTarget::create_topic(const oplang::CreateTopic& op) {
  if (op.name.empty()) throw Error(ErrorCode::kInvalidArgument);
  if (topics_.contains(op.name)) throw Error(ErrorCode::kDuplicateTopic);
  Topic topic;
  topic.key = prefix_ + ":" + encode(op.name);
  topic.maxlen = op.retention_messages;
  // The stream itself appears with its first entry or group; anything left under this
  // name by an earlier run goes.
  command(ctx_.get(), {"DEL", topic.key}, "DEL " + topic.key);
  topics_.emplace(op.name, std::move(topic));
  topic_order_.push_back(op.name);
  return oplang::Done{};
}

oplang::Value RedisTarget::delete_topic(const oplang::DeleteTopic& op) {
  Topic& topic = topic_or_throw(op.name);
  if (!topic.subs.empty()) throw Error(ErrorCode::kTopicInUse);
  command(ctx_.get(), {"DEL", topic.key}, "DEL " + topic.key);
  topics_.erase(op.name);
  std::erase(topic_order_, op.name);
  return oplang::Done{};
}

oplang::Value RedisTarget::publish(const oplang::Publish& op) {
  Topic& topic = topic_or_throw(op.topic);
  std::vector<std::string> args = {"XADD", topic.key};
  if (topic.maxlen > 0) {
    // Exact ("="): "~" trims whole radix-tree nodes only, and keeps more than N (R3).
    args.insert(args.end(), {"MAXLEN", "=", std::to_string(topic.maxlen)});
  }
  args.insert(args.end(), {"*", "p", op.payload});
  for (const auto& [key, value] : op.headers) {
    args.push_back("h:" + key);
    args.push_back(value);
  }
  const std::string id = text(command(ctx_.get(), args, "XADD " + topic.key).get());
  const model::Offset offset = topic.ids.size();
  topic.ids.push_back(id);
  topic.offsets.emplace(id, offset);
  return oplang::OffsetResult{offset};
}

oplang::Value RedisTarget::subscribe_pull(const oplang::SubscribePull& op) {
  if (op.name.empty() || op.ack_timeout <= 0 || op.ack_timeout > model::kMaxDuration ||
      op.max_deliveries < 0) {
    throw Error(ErrorCode::kInvalidArgument);
  }
  Topic& topic = topic_or_throw(op.topic);
  const Options options{op.filter, op.ack_timeout, op.max_deliveries, op.start};
  if (auto it = topic.subs.find(op.name); it != topic.subs.end()) {
    pull_only(it->second);
    if (it->second.options == options) return oplang::Done{};
    throw Error(ErrorCode::kOptionsMismatch);
  }
  Sub sub;
  sub.options = options;
  make_group(topic, op.name, std::move(sub));
  return oplang::Done{};
}

oplang::Value RedisTarget::subscribe(const oplang::Subscribe& op) {
  if (op.name.empty() || op.max_deliveries < 0) throw Error(ErrorCode::kInvalidArgument);
  Topic& topic = topic_or_throw(op.topic);
  if (topic.subs.contains(op.name)) throw Error(ErrorCode::kDuplicateSubscription);
  // Trimming would take entries a push subscription never offered from under it while a
  // drain is not running: not served (the generator keeps push to unbounded topics).
  if (topic.maxlen > 0)
    throw std::invalid_argument("redis: a push subscription on a bounded topic");
  Sub sub;
  // A push offer has no deadline: an ack timeout no run reaches (timeout_ms caps it).
  sub.options = Options{op.filter, model::kMaxDuration, op.max_deliveries, op.start};
  sub.push = true;
  sub.script = op.script;
  make_group(topic, op.name, std::move(sub));
  return oplang::Done{};
}

void RedisTarget::pull_only(const Sub& sub) {
  if (sub.push) throw Error(ErrorCode::kWrongKind);
}

void RedisTarget::make_group(Topic& topic, const std::string& name, Sub sub) {
  sub.group = encode(name);
  sub.dlq = topic.key + ":dlq:" + sub.group;
  command(ctx_.get(), {"DEL", sub.dlq}, "DEL " + sub.dlq);
  // At the end the group's read counter is told (every entry added so far), so XINFO GROUPS
  // knows its lag at once; from the beginning it is left unknown, and the server estimates
  // it from the entries it keeps until the group's first read (lag_counts_trimmed).
  std::vector<std::string> create = {"XGROUP", "CREATE", topic.key, sub.group};
  if (sub.options.start.kind == model::Start::Kind::kBeginning) {
    create.insert(create.end(), {"0", "MKSTREAM"});
  } else {
    create.insert(create.end(), {"$", "MKSTREAM", "ENTRIESREAD", std::to_string(topic.ids.size())});
  }
  command(ctx_.get(), create, "XGROUP CREATE " + topic.key + " " + sub.group);
  topic.subs.emplace(name, std::move(sub));
  topic.sub_order.push_back(name);
}

oplang::Value RedisTarget::drain(std::vector<model::HandlerCall>& calls) {
  std::size_t confirmations = 0;
  for (const std::string& topic_name : topic_order_) {
    Topic& topic = topics_.at(topic_name);
    for (const std::string& name : topic.sub_order) {
      Sub& sub = topic.subs.at(name);
      if (!sub.push) continue;
      // Until the server has no entry for it, or its handler fails (R8). Every round but
      // the last confirms an entry, so a server that offers more rounds than the stream
      // has entries misbehaves.
      for (std::size_t round = 0;; ++round) {
        if (round > topic.ids.size()) {
          throw TargetFailure("drain: the server offered more entries than the stream has");
        }
        const std::vector<model::Received> got = poll_script(topic, sub, name, 1);
        if (got.empty()) break;
        const model::Received& m = got.front();
        const model::Step step =
            sub.next_step < sub.script.size() ? sub.script[sub.next_step] : model::Step{};
        sub.next_step += 1;
        calls.push_back(model::HandlerCall{topic_name, name, m.offset, m.payload, m.attempt, ""});
        if (step.verdict == model::Verdict::kConfirm) {
          if (!settle_script(topic, sub, m.offset, name, "ack")) {
            throw TargetFailure("drain: the server did not take the ack of an entry just read");
          }
          confirmations += 1;
          continue;
        }
        const bool term = step.verdict == model::Verdict::kTerminate;
        if (!settle_script(topic, sub, m.offset, name, term ? "term" : "nack",
                           model::failure_reason(step.verdict))) {
          throw TargetFailure("drain: the server did not take the nack of an entry just read");
        }
        break;  // R8: a failure ends this subscription's turn
      }
    }
  }
  return oplang::CountResult{confirmations};
}

oplang::Value RedisTarget::unsubscribe(const oplang::Unsubscribe& op) {
  Topic& topic = topic_or_throw(op.topic);
  auto it = topic.subs.find(op.name);
  if (it == topic.subs.end()) return oplang::BoolResult{false};
  command(ctx_.get(), {"XGROUP", "DESTROY", topic.key, it->second.group},
          "XGROUP DESTROY " + topic.key);
  command(ctx_.get(), {"DEL", it->second.dlq}, "DEL " + it->second.dlq);
  topic.subs.erase(it);
  std::erase(topic.sub_order, op.name);
  return oplang::BoolResult{true};
}

oplang::Value RedisTarget::seek(const oplang::Seek& op) {
  Topic& topic = topic_or_throw(op.topic);
  Sub& sub = sub_or_throw(topic, op.name);
  // The range as the server keeps it: from its first entry's offset (the end when it has
  // none) to the end.
  const model::Offset end = topic.ids.size();
  model::Offset oldest = end;
  const Reply first =
      command(ctx_.get(), {"XRANGE", topic.key, "-", "+", "COUNT", "1"}, "XRANGE " + topic.key);
  if (const std::vector<const redisReply*> e = elements(first.get()); !e.empty()) {
    const std::vector<const redisReply*> f = elements(e[0]);
    if (f.empty()) throw TargetFailure("XRANGE: malformed entry");
    oldest = offset_of(topic, text(f[0]));
  }
  if (op.offset < oldest || op.offset > end) throw Error(ErrorCode::kOffsetOutOfRange);
  set_cursor(topic, sub, op.offset);
  return oplang::Done{};
}

void RedisTarget::set_cursor(const Topic& topic, const Sub& sub, model::Offset offset) {
  // The group's last-delivered id: the entry before the offset ("0" before the first), and
  // its read counter: every entry up to it (without it the server knows no lag for an id
  // between the first and the last entry).
  const std::string id = offset == 0 ? "0" : topic.ids[offset - 1];
  command(ctx_.get(),
          {"XGROUP", "SETID", topic.key, sub.group, id, "ENTRIESREAD", std::to_string(offset)},
          "XGROUP SETID " + topic.key + " " + sub.group);
}

oplang::Value RedisTarget::seek_to_time(const oplang::SeekToTime& op) {
  if (op.time > now_) throw Error(ErrorCode::kInvalidArgument);
  Topic& topic = topic_or_throw(op.topic);
  Sub& sub = sub_or_throw(topic, op.name);
  // Stream ids carry the server's clock in whole milliseconds: an entry added at or after
  // the model time's wall-clock instant has an id at or after the instant's millisecond.
  const auto instant = wall_instant(wall_start_, op.time, unit_ms_);
  const long long ms =
      std::chrono::floor<std::chrono::milliseconds>(instant.time_since_epoch()).count();
  model::Offset offset = topic.ids.size();
  const Reply first =
      command(ctx_.get(),
              {"XRANGE", topic.key, std::to_string(std::max(ms, 0LL)) + "-0", "+", "COUNT", "1"},
              "XRANGE " + topic.key);
  if (const std::vector<const redisReply*> e = elements(first.get()); !e.empty()) {
    const std::vector<const redisReply*> f = elements(e[0]);
    if (f.empty()) throw TargetFailure("XRANGE: malformed entry");
    offset = offset_of(topic, text(f[0]));
  }
  set_cursor(topic, sub, offset);
  return oplang::OffsetResult{offset};
}

oplang::Value RedisTarget::poll(const oplang::Poll& op) {
  if (op.max == 0 || op.member.empty()) throw Error(ErrorCode::kInvalidArgument);
  Topic& topic = topic_or_throw(op.topic);
  Sub& sub = sub_or_throw(topic, op.sub);
  pull_only(sub);
  return poll_script(topic, sub, op.member, op.max);
}

std::vector<model::Received> RedisTarget::poll_script(Topic& topic, const Sub& sub,
                                                      const std::string& member, std::size_t max) {
  std::vector<std::string> args = {"EVAL",
                                   redis_scripts::with_bury(redis_scripts::kPoll),
                                   "2",
                                   topic.key,
                                   sub.dlq,
                                   sub.group,
                                   member,
                                   std::to_string(timeout_ms(sub)),
                                   std::to_string(sub.options.max_deliveries),
                                   std::to_string(std::min(max, kMaxPoll)),
                                   std::to_string(now_)};
  for (const auto& [key, value] : sub.options.filter) {
    args.push_back(key);
    args.push_back(value);
  }
  const Reply reply = command(ctx_.get(), args, "poll script on " + topic.key);
  std::vector<model::Received> out;
  for (const redisReply* e : elements(reply.get())) {
    const std::vector<const redisReply*> f = elements(e);
    if (f.size() != 3) throw TargetFailure("poll script: malformed entry");
    out.push_back(model::Received{offset_or_adopt(topic, text(f[0])), text(f[2]),
                                  static_cast<int>(integer(f[1])), now_ + sub.options.ack_timeout});
  }
  return out;
}

bool RedisTarget::settle(const std::string& topic_name, const std::string& sub_name,
                         model::Offset offset, const std::string& member, const char* action) {
  Topic& topic = topic_or_throw(topic_name);
  Sub& sub = sub_or_throw(topic, sub_name);
  pull_only(sub);
  return settle_script(topic, sub, offset, member, action);
}

bool RedisTarget::settle_script(const Topic& topic, const Sub& sub, model::Offset offset,
                                const std::string& member, const char* action,
                                const std::string& reason) {
  if (offset >= topic.ids.size()) return false;  // never published: nobody holds it
  const Reply reply =
      command(ctx_.get(),
              {"EVAL", redis_scripts::with_bury(redis_scripts::kSettle), "2", topic.key, sub.dlq,
               sub.group, member, topic.ids[offset], std::to_string(timeout_ms(sub)), action,
               std::to_string(sub.options.max_deliveries), std::to_string(now_),
               std::to_string(kReturnedIdleMs), reason},
              std::string(action) + " script on " + topic.key);
  return integer(reply.get()) == 1;
}

oplang::Value RedisTarget::extend(const oplang::Extend& op) {
  if (op.extension <= 0 || op.extension > model::kMaxDuration) {
    throw Error(ErrorCode::kInvalidArgument);
  }
  Sub& sub = sub_or_throw(topic_or_throw(op.topic), op.sub);
  pull_only(sub);
  if (op.extension != sub.options.ack_timeout) {
    throw std::invalid_argument("redis: extend by the subscription's ack timeout only");
  }
  return oplang::BoolResult{settle(op.topic, op.sub, op.offset, op.member, "extend")};
}

oplang::Value RedisTarget::advance(const oplang::Advance& op) {
  if (op.ms < 0) throw Error(ErrorCode::kInvalidArgument);
  // Sleep to the model's time on one schedule from the start: the calls in between took
  // real time too, and that must not add up across a script.
  now_ += op.ms;
  std::this_thread::sleep_until(start_ + std::chrono::nanoseconds(to_nanos(now_, unit_ms_)));
  return oplang::Done{};
}

oplang::Value RedisTarget::expire() {
  std::vector<model::Expired> out;
  for (const std::string& name : topic_order_) {
    Topic& topic = topics_.at(name);
    for (const std::string& sub_name : topic.sub_order) {
      const Sub& sub = topic.subs.at(sub_name);
      const Reply reply = command(
          ctx_.get(),
          {"EVAL", redis_scripts::with_bury(redis_scripts::kExpire), "2", topic.key, sub.dlq,
           sub.group, std::to_string(timeout_ms(sub)), std::to_string(sub.options.max_deliveries),
           std::to_string(now_), std::to_string(kReturnedIdleMs)},
          "expire script on " + topic.key);
      for (const redisReply* e : elements(reply.get())) {
        const std::vector<const redisReply*> f = elements(e);
        if (f.size() != 2) throw TargetFailure("expire script: malformed entry");
        out.push_back(
            model::Expired{name, sub_name, offset_of(topic, text(f[0])), integer(f[1]) == 1});
      }
    }
  }
  return out;
}

oplang::Value RedisTarget::get_lag(const oplang::GetLag& op) {
  Topic& topic = topic_or_throw(op.topic);
  Sub& sub = sub_or_throw(topic, op.name);
  const Reply reply =
      command(ctx_.get(), {"XINFO", "GROUPS", topic.key}, "XINFO GROUPS " + topic.key);
  for (const redisReply* group : elements(reply.get())) {
    const std::vector<const redisReply*> f = elements(group);
    std::optional<std::string> name;
    std::optional<long long> pending;
    const redisReply* lag = nullptr;
    for (std::size_t i = 0; i + 1 < f.size(); i += 2) {
      const std::string field = text(f[i]);
      if (field == "name") name = text(f[i + 1]);
      if (field == "pending") pending = integer(f[i + 1]);
      if (field == "lag") lag = f[i + 1];
    }
    if (name != sub.group) continue;
    if (!pending || lag == nullptr) throw TargetFailure("XINFO GROUPS: no pending or lag field");
    if (lag->type == REDIS_REPLY_NIL) {
      throw TargetFailure("XINFO GROUPS: the server knows no lag for group " + sub.group);
    }
    return model::Lag{static_cast<std::uint64_t>(*pending + integer(lag)), 0};
  }
  throw TargetFailure("XINFO GROUPS: no group " + sub.group);
}

oplang::Value RedisTarget::dead_letters(const oplang::GetDeadLetters& op) {
  Topic& topic = topic_or_throw(op.topic);
  Sub& sub = sub_or_throw(topic, op.name);
  const Reply reply = command(ctx_.get(), {"XRANGE", sub.dlq, "-", "+"}, "XRANGE " + sub.dlq);
  std::vector<model::DeadLetter> out;
  for (const redisReply* entry : elements(reply.get())) {
    const std::vector<const redisReply*> parts = elements(entry);
    if (parts.size() != 2) throw TargetFailure("XRANGE: malformed entry");
    const std::vector<const redisReply*> fields = elements(parts[1]);
    model::DeadLetter d;
    d.topic = op.topic;
    d.subscription = op.name;
    for (std::size_t i = 0; i + 1 < fields.size(); i += 2) {
      const std::string field = text(fields[i]);
      const std::string value = text(fields[i + 1]);
      if (field == "id") {
        d.offset = offset_of(topic, value);
      } else if (field == "attempts") {
        d.attempts = static_cast<int>(number(field, value));
      } else if (field == "reason") {
        d.reason = value;
      } else if (field == "died_at") {
        d.died_at = number(field, value);
      } else if (field == "p") {
        d.payload = value;
      } else if (field.starts_with("h:")) {
        d.headers[field.substr(2)] = value;
      }
    }
    out.push_back(std::move(d));
  }
  return out;
}

model::Millis RedisTarget::lag() const {
  const auto now = std::chrono::steady_clock::now();
  const model::Millis client =
      std::chrono::duration_cast<std::chrono::milliseconds>(now - start_).count() / unit_ms_ - now_;
  // The engine's own lag, measured: a PING's round trip now (a server starved of CPU
  // answers late, and its idle times run on while it does).
  if (!ctx_ || ctx_->err != 0) return client;
  freeReplyObject(redisCommand(ctx_.get(), "PING"));
  const auto rtt = std::chrono::steady_clock::now() - now;
  return std::max(client,
                  std::chrono::duration_cast<std::chrono::milliseconds>(rtt).count() / unit_ms_);
}

}  // namespace conformance
