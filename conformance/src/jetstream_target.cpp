// The JetStream target (conformance/jetstream_target.h) on libnats.
#include "conformance/jetstream_target.h"

#include <nats/nats.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <limits>
#include <memory>
#include <stdexcept>
#include <thread>
#include <type_traits>
#include <variant>

#include "jetstream_pull.h"
#include "model/errors.h"
#include "model_time.h"

namespace conformance {

namespace {

using model::Error;
using model::ErrorCode;

// How long the server keeps a pull request that finds no message (no_wait with an expiry:
// nats-server answers at once when it has messages, with 408 after the last one): an empty
// poll costs about this much real time.
constexpr std::int64_t kFetchWaitMs = 15;
// The most messages one fetch asks for.
constexpr int kMaxBatch = 256;
// JetStream API calls (stream and consumer admin, publish acks, AckSync).
constexpr std::int64_t kApiWaitMs = 5000;
// A push consumer's AckWait: a push offer has no deadline (the handler answers it within the
// drain), so long enough that no delivery waiting for the next drain is redelivered.
constexpr std::int64_t kPushAckWaitNs = 24LL * 3600 * 1000000000;

// Bounds on loops that would only run away if the server misbehaved.
constexpr int kMaxFetchRounds = 100000;
constexpr int kMaxAdvisories = 100000;

std::string status_text(const char* what, natsStatus s, jsErrCode jerr) {
  std::string msg = std::string(what) + ": " + natsStatus_GetText(s);
  if (jerr != 0) msg += " (JetStream error code " + std::to_string(static_cast<int>(jerr)) + ")";
  // The thread's last error text, if it is about this status (it may be older otherwise).
  natsStatus last_status = NATS_OK;
  if (const char* last = nats_GetLastError(&last_status);
      last != nullptr && *last != '\0' && last_status == s) {
    msg += ": ";
    msg += last;
  }
  return msg;
}

void check(natsStatus s, const char* what, jsErrCode jerr = static_cast<jsErrCode>(0)) {
  if (s != NATS_OK) throw TargetFailure(status_text(what, s, jerr));
}

// Names become [A-Za-z0-9-] with every other byte (the '_' included) as _HH: injective, and
// valid in stream, consumer and subject names.
std::string encode(const std::string& name) {
  static const char* hex = "0123456789ABCDEF";
  std::string out;
  for (const char c : name) {
    const auto u = static_cast<unsigned char>(c);
    if ((u >= 'A' && u <= 'Z') || (u >= 'a' && u <= 'z') || (u >= '0' && u <= '9') || u == '-') {
      out.push_back(c);
    } else {
      out.push_back('_');
      out.push_back(hex[u >> 4]);
      out.push_back(hex[u & 0xF]);
    }
  }
  return out;
}

// What a NATS header can carry: a non-empty key of printable characters without ':', and a
// value without CR or LF.
void check_headers(const model::Headers& headers) {
  for (const auto& [key, value] : headers) {
    bool ok = !key.empty();
    for (const char c : key) {
      const auto u = static_cast<unsigned char>(c);
      if (u <= ' ' || u >= 127 || c == ':') ok = false;
    }
    if (value.find_first_of("\r\n") != std::string::npos) ok = false;
    if (!ok) throw std::invalid_argument("header \"" + key + "\" cannot be carried by NATS");
  }
}

// Sends an ack-protocol word through a delivery's reply subject as a request: the server
// answers once the consumer has processed it (as for AckSync), so the next poll sees its
// effect. Returns the request's status; throws TargetFailure if the delivery has no reply.
natsStatus answer_through(natsConnection* nc, natsMsg* delivery, const char* word) {
  const char* reply_to = natsMsg_GetReply(delivery);
  if (reply_to == nullptr) throw TargetFailure(std::string(word) + ": the message has no reply");
  natsMsg* reply = nullptr;
  const natsStatus s = natsConnection_RequestString(&reply, nc, reply_to, word, kApiWaitMs);
  natsMsg_Destroy(reply);
  return s;
}

// ns since the epoch as RFC 3339 in UTC with all nine fractional digits.
std::string rfc3339_utc(std::int64_t ns) {
  constexpr std::int64_t kBillion = 1000000000;
  std::int64_t secs = ns / kBillion;
  std::int64_t frac = ns % kBillion;
  if (frac < 0) {
    frac += kBillion;
    secs -= 1;
  }
  const std::time_t t = static_cast<std::time_t>(secs);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char date[32];
  std::strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%S", &tm);
  char out[48];
  std::snprintf(out, sizeof(out), "%s.%09lldZ", date, static_cast<long long>(frac));
  return out;
}

// The unsigned number after "key": in a flat JSON object (0 if absent).
std::uint64_t json_number(const std::string& json, const std::string& key) {
  const std::string quoted = "\"" + key + "\"";
  std::size_t pos = json.find(quoted);
  if (pos == std::string::npos) return 0;
  pos = json.find(':', pos + quoted.size());
  if (pos == std::string::npos) return 0;
  pos += 1;
  while (pos < json.size() && json[pos] == ' ') pos += 1;
  std::uint64_t value = 0;
  while (pos < json.size() && json[pos] >= '0' && json[pos] <= '9') {
    value = value * 10 + static_cast<std::uint64_t>(json[pos] - '0');
    pos += 1;
  }
  return value;
}

bool matches(natsMsg* msg, const model::Headers& filter) {
  for (const auto& [key, value] : filter) {
    const char* got = nullptr;
    const natsStatus s = natsMsgHeader_Get(msg, key.c_str(), &got);
    if (s == NATS_NOT_FOUND) return false;
    check(s, "natsMsgHeader_Get");
    if (got == nullptr || value != got) return false;
  }
  return true;
}

// The message's own headers (the server's Nats-* ones left out).
model::Headers headers_of(natsMsg* msg) {
  const char** keys = nullptr;
  int count = 0;
  model::Headers out;
  const natsStatus s = natsMsgHeader_Keys(msg, &keys, &count);
  if (s == NATS_NOT_FOUND) return out;
  check(s, "natsMsgHeader_Keys");
  for (int i = 0; i < count; ++i) {
    const std::string key = keys[i];
    const char* value = nullptr;
    if (key.starts_with("Nats-") || natsMsgHeader_Get(msg, keys[i], &value) != NATS_OK) continue;
    out[key] = value == nullptr ? "" : value;
  }
  std::free(static_cast<void*>(keys));
  return out;
}

std::string payload_of(natsMsg* msg) {
  const char* data = natsMsg_GetData(msg);
  const int len = natsMsg_GetDataLength(msg);
  return data == nullptr || len <= 0 ? std::string()
                                     : std::string(data, static_cast<std::size_t>(len));
}

}  // namespace

JetStreamTarget::JetStreamTarget(std::string url, std::string prefix, model::Millis unit_ms,
                                 bool reconnect, int replicas)
    : url_(std::move(url)),
      prefix_(encode(prefix)),
      unit_ms_(unit_ms),
      reconnect_(reconnect),
      replicas_(replicas) {
  if (unit_ms_ <= 0) throw std::invalid_argument("JetStreamTarget: unit_ms must be positive");
  connect();
}

JetStreamTarget::JetStreamTarget(WorkerOf of)
    : url_(of.parent.url_),
      prefix_(of.parent.prefix_),
      unit_ms_(of.parent.unit_ms_),
      reconnect_(of.parent.reconnect_),
      replicas_(of.parent.replicas_),
      now_(of.parent.now_),
      start_(of.parent.start_),
      wall_start_(of.parent.wall_start_),
      owner_(false) {
  connect();
  try {
    for (const auto& [name, parent_topic] : of.parent.topics_) {
      Topic& topic = topics_[name];
      topic.stream = parent_topic.stream;
      topic.subject = parent_topic.subject;
      for (const auto& [sub_name, parent_sub] : parent_topic.subs) {
        auto sub = std::make_unique<Sub>();
        sub->consumer = parent_sub->consumer;
        sub->options = parent_sub->options;
        sub->push = parent_sub->push;  // a worker polls: a push one answers WrongKind
        if (!sub->push) bind_pull(topic, *sub);
        topic.subs.emplace(sub_name, std::move(sub));
      }
    }
  } catch (...) {
    close();  // the constructor did not finish: no destructor runs
    throw;
  }
}

std::unique_ptr<Target> JetStreamTarget::worker() {
  return std::unique_ptr<Target>(new JetStreamTarget(WorkerOf{*this}));
}

void JetStreamTarget::connect() {
  natsOptions* opts = nullptr;
  natsStatus s = natsOptions_Create(&opts);
  // A list of servers (a cluster): the client picks one and reconnects to the others.
  std::vector<std::string> servers;
  for (std::size_t from = 0; from <= url_.size();) {
    const std::size_t comma = std::min(url_.find(',', from), url_.size());
    servers.push_back(url_.substr(from, comma - from));
    from = comma + 1;
  }
  std::vector<const char*> server_ptrs;
  for (const std::string& one : servers) server_ptrs.push_back(one.c_str());
  if (s == NATS_OK) {
    s = servers.size() == 1 ? natsOptions_SetURL(opts, url_.c_str())
                            : natsOptions_SetServers(opts, server_ptrs.data(),
                                                     static_cast<int>(server_ptrs.size()));
  }
  if (s == NATS_OK) s = natsOptions_SetTimeout(opts, 2000);
  // A lost connection is a failed engine, not something to paper over, unless a fault run
  // restarts the server on purpose: then the client reconnects (every 50 ms, 200 tries:
  // about 10 s) and a call made while it is away fails or times out on its own.
  if (s == NATS_OK) s = natsOptions_SetAllowReconnect(opts, reconnect_);
  if (s == NATS_OK && reconnect_) s = natsOptions_SetMaxReconnect(opts, 200);
  if (s == NATS_OK && reconnect_) s = natsOptions_SetReconnectWait(opts, 50);
  if (s == NATS_OK) s = natsConnection_Connect(&nc_, opts);
  natsOptions_Destroy(opts);
  check(s, ("connect to " + url_).c_str());
  jsOptions jo;
  jsOptions_Init(&jo);
  jo.Wait = kApiWaitMs;
  s = natsConnection_JetStream(&js_, nc_, &jo);
  if (s != NATS_OK) {
    const std::string text = status_text("JetStream context", s, static_cast<jsErrCode>(0));
    natsConnection_Destroy(nc_);
    throw TargetFailure(text);
  }
}

JetStreamTarget::~JetStreamTarget() { close(); }

void JetStreamTarget::close() {
  const bool connected = nc_ != nullptr && !natsConnection_IsClosed(nc_);
  for (auto& [name, topic] : topics_) {
    for (auto& [sub_name, sub] : topic.subs) destroy_sub(topic, *sub, false);
    topic.subs.clear();
    if (connected && owner_) js_DeleteStream(js_, topic.stream.c_str(), nullptr, nullptr);
  }
  topics_.clear();
  jsCtx_Destroy(js_);
  js_ = nullptr;
  if (nc_ != nullptr) {
    natsConnection_Close(nc_);
    natsConnection_Destroy(nc_);
    nc_ = nullptr;
  }
}

bool JetStreamTarget::serves(const oplang::Op& op) const {
  return in_subset(op) || retention_by_messages(op) || pull_with_max_in_flight(op) ||
         std::holds_alternative<oplang::Seek>(op) ||
         std::holds_alternative<oplang::SeekToTime>(op) || nack_with_delay(op) ||
         std::holds_alternative<oplang::GetLag>(op) || push_without_effects(op);
}

oplang::Outcome JetStreamTarget::step(const oplang::Op& op) {
  if (!serves(op)) throw std::invalid_argument("jetstream: op outside what the target serves");
  if (!owner_ && !std::holds_alternative<oplang::Poll>(op) &&
      !std::holds_alternative<oplang::Ack>(op) && !std::holds_alternative<oplang::Nack>(op)) {
    throw std::invalid_argument("jetstream: a worker serves poll, ack and nack only");
  }
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
            return ack(o);
          } else if constexpr (std::is_same_v<T, oplang::Nack>) {
            return nack(o);
          } else if constexpr (std::is_same_v<T, oplang::Term>) {
            return term(o);
          } else if constexpr (std::is_same_v<T, oplang::Extend>) {
            return extend(o);
          } else if constexpr (std::is_same_v<T, oplang::Advance>) {
            return advance(o);
          } else if constexpr (std::is_same_v<T, oplang::Expire>) {
            // The server expires held messages on its own clock.
            return std::vector<model::Expired>{};
          } else if constexpr (std::is_same_v<T, oplang::GetDeadLetters>) {
            return dead_letters(o);
          } else if constexpr (std::is_same_v<T, oplang::GetLag>) {
            return get_lag(o);
          } else {
            throw std::invalid_argument("jetstream: op outside the common subset");
          }
        },
        op);
  } catch (const Error& e) {
    outcome.error = e.code();
    outcome.value = oplang::Done{};
  }
  return outcome;
}

JetStreamTarget::Topic& JetStreamTarget::topic_or_throw(const std::string& name) {
  auto it = topics_.find(name);
  if (it == topics_.end()) throw Error(ErrorCode::kUnknownTopic);
  return it->second;
}

JetStreamTarget::Sub& JetStreamTarget::sub_or_throw(Topic& topic, const std::string& name) {
  auto it = topic.subs.find(name);
  if (it == topic.subs.end()) throw Error(ErrorCode::kUnknownSubscription);
  return *it->second;
}

oplang::Value JetStreamTarget::create_topic(const oplang::CreateTopic& op) {
  if (op.name.empty()) throw Error(ErrorCode::kInvalidArgument);
  if (topics_.contains(op.name)) throw Error(ErrorCode::kDuplicateTopic);
  Topic topic;
  topic.order = next_order_++;
  topic.stream = prefix_ + "_" + encode(op.name);
  topic.subject = prefix_ + "." + encode(op.name);
  const char* subjects[] = {topic.subject.c_str()};
  jsStreamConfig cfg;
  jsStreamConfig_Init(&cfg);
  cfg.Name = topic.stream.c_str();
  cfg.Subjects = subjects;
  cfg.SubjectsLen = 1;
  cfg.Storage = js_FileStorage;
  cfg.Replicas = replicas_;
  cfg.Retention = js_LimitsPolicy;  // MaxBytes and MaxAge stay unlimited
  if (op.retention_messages > 0) {
    cfg.MaxMsgs = static_cast<int64_t>(op.retention_messages);
    cfg.Discard = js_DiscardOld;
  }
  jsStreamInfo* info = nullptr;
  jsErrCode jerr = static_cast<jsErrCode>(0);
  const natsStatus s = js_AddStream(&info, js_, &cfg, nullptr, &jerr);
  jsStreamInfo_Destroy(info);
  check(s, ("js_AddStream " + topic.stream).c_str(), jerr);
  topics_.emplace(op.name, std::move(topic));
  return oplang::Done{};
}

std::string JetStreamTarget::stream_of(const std::string& topic) const {
  auto it = topics_.find(topic);
  return it == topics_.end() ? std::string() : it->second.stream;
}

oplang::Value JetStreamTarget::delete_topic(const oplang::DeleteTopic& op) {
  Topic& topic = topic_or_throw(op.name);
  if (!topic.subs.empty()) throw Error(ErrorCode::kTopicInUse);
  jsErrCode jerr = static_cast<jsErrCode>(0);
  check(js_DeleteStream(js_, topic.stream.c_str(), nullptr, &jerr),
        ("js_DeleteStream " + topic.stream).c_str(), jerr);
  topics_.erase(op.name);
  return oplang::Done{};
}

oplang::Value JetStreamTarget::publish(const oplang::Publish& op) {
  Topic& topic = topic_or_throw(op.topic);
  check_headers(op.headers);
  natsMsg* msg = nullptr;
  check(natsMsg_Create(&msg, topic.subject.c_str(), nullptr, op.payload.data(),
                       static_cast<int>(op.payload.size())),
        "natsMsg_Create");
  for (const auto& [key, value] : op.headers) {
    const natsStatus s = natsMsgHeader_Set(msg, key.c_str(), value.c_str());
    if (s != NATS_OK) {
      natsMsg_Destroy(msg);
      check(s, "natsMsgHeader_Set");
    }
  }
  jsPubAck* pa = nullptr;
  jsErrCode jerr = static_cast<jsErrCode>(0);
  const natsStatus s = js_PublishMsg(&pa, js_, msg, nullptr, &jerr);
  natsMsg_Destroy(msg);
  if (s != NATS_OK || pa == nullptr || pa->Sequence == 0) {
    jsPubAck_Destroy(pa);
    check(s == NATS_OK ? NATS_ERR : s, ("js_PublishMsg " + topic.subject).c_str(), jerr);
  }
  const model::Offset offset = pa->Sequence - 1;
  jsPubAck_Destroy(pa);
  return oplang::OffsetResult{offset};
}

void JetStreamTarget::add_consumer(const Topic& topic, const Sub& sub,
                                   std::optional<model::Offset> from,
                                   std::optional<std::int64_t> from_time) {
  jsConsumerConfig cc;
  jsConsumerConfig_Init(&cc);
  cc.Durable = sub.consumer.c_str();
  cc.AckPolicy = js_AckExplicit;
  cc.AckWait = to_nanos(sub.options.ack_timeout, unit_ms_);
  cc.MaxDeliver = sub.options.max_deliveries == 0 ? -1 : sub.options.max_deliveries;
  cc.DeliverPolicy =
      sub.options.start.kind == model::Start::Kind::kBeginning ? js_DeliverAll : js_DeliverNew;
  if (from) {
    cc.DeliverPolicy = js_DeliverByStartSequence;
    cc.OptStartSeq = *from + 1;
  }
  cc.FilterSubject = topic.subject.c_str();
  // R22: at most max_in_flight unacknowledged (0: any number).
  cc.MaxAckPending =
      sub.options.max_in_flight > 0 ? static_cast<int64_t>(sub.options.max_in_flight) : -1;
  // R8: a push consumer offers one message at a time, with no deadline of its own.
  const std::string deliver = sub.push ? deliver_subject(sub) : std::string();
  if (sub.push) {
    cc.DeliverSubject = deliver.c_str();
    cc.MaxAckPending = 1;
    cc.AckWait = kPushAckWaitNs;
  }
  if (from_time) {
    // libnats 3.4.1 writes a start time's fraction without its leading zeros (".05 s" as
    // ".5"), so this request is the adapter's own: the same configuration, on the wire.
    const std::string request =
        "{\"stream_name\":\"" + topic.stream + "\",\"config\":{\"durable_name\":\"" + sub.consumer +
        "\",\"deliver_policy\":\"by_start_time\",\"opt_start_time\":\"" + rfc3339_utc(*from_time) +
        "\",\"ack_policy\":\"explicit\",\"ack_wait\":" + std::to_string(cc.AckWait) +
        ",\"max_deliver\":" + std::to_string(cc.MaxDeliver) + ",\"filter_subject\":\"" +
        topic.subject + "\",\"max_ack_pending\":" + std::to_string(cc.MaxAckPending) +
        (sub.push ? ",\"deliver_subject\":\"" + deliver + "\"" : std::string()) + "}}";
    const std::string subject =
        "$JS.API.CONSUMER.DURABLE.CREATE." + topic.stream + "." + sub.consumer;
    natsMsg* reply = nullptr;
    check(natsConnection_Request(&reply, nc_, subject.c_str(), request.data(),
                                 static_cast<int>(request.size()), kApiWaitMs),
          ("consumer create " + sub.consumer).c_str());
    const std::string answer = payload_of(reply);
    natsMsg_Destroy(reply);
    if (answer.find("\"error\"") != std::string::npos) {
      throw TargetFailure("consumer create " + sub.consumer + ": " + answer);
    }
    return;
  }
  jsConsumerInfo* ci = nullptr;
  jsErrCode jerr = static_cast<jsErrCode>(0);
  const natsStatus s = js_AddConsumer(&ci, js_, topic.stream.c_str(), &cc, nullptr, &jerr);
  jsConsumerInfo_Destroy(ci);
  check(s, ("js_AddConsumer " + sub.consumer).c_str(), jerr);
}

oplang::Value JetStreamTarget::seek(const oplang::Seek& op) {
  Topic& topic = topic_or_throw(op.topic);
  Sub& sub = sub_or_throw(topic, op.name);
  // The range is the stream's as the server reports it: [first - 1, last] in offsets.
  jsStreamInfo* si = nullptr;
  jsErrCode jerr = static_cast<jsErrCode>(0);
  check(js_GetStreamInfo(&si, js_, topic.stream.c_str(), nullptr, &jerr), "js_GetStreamInfo", jerr);
  const std::uint64_t first = si->State.FirstSeq;
  const std::uint64_t last = si->State.LastSeq;
  jsStreamInfo_Destroy(si);
  const model::Offset oldest = first == 0 ? last : first - 1;
  if (op.offset < oldest || op.offset > last) throw Error(ErrorCode::kOffsetOutOfRange);
  make_again(op.topic, op.name, topic, sub, op.offset, std::nullopt);
  return oplang::Done{};
}

oplang::Value JetStreamTarget::get_lag(const oplang::GetLag& op) {
  Topic& topic = topic_or_throw(op.topic);
  Sub& sub = sub_or_throw(topic, op.name);
  jsConsumerInfo* ci = nullptr;
  jsErrCode jerr = static_cast<jsErrCode>(0);
  check(js_GetConsumerInfo(&ci, js_, topic.stream.c_str(), sub.consumer.c_str(), nullptr, &jerr),
        "js_GetConsumerInfo", jerr);
  const model::Lag lag{
      ci->NumPending + static_cast<std::uint64_t>(std::max<std::int64_t>(0, ci->NumAckPending)), 0};
  jsConsumerInfo_Destroy(ci);
  return lag;
}

oplang::Value JetStreamTarget::seek_to_time(const oplang::SeekToTime& op) {
  if (op.time > now_) throw Error(ErrorCode::kInvalidArgument);
  Topic& topic = topic_or_throw(op.topic);
  Sub& sub = sub_or_throw(topic, op.name);
  const auto instant = wall_instant(wall_start_, op.time, unit_ms_);
  const std::int64_t ns =
      std::chrono::duration_cast<std::chrono::nanoseconds>(instant.time_since_epoch()).count();
  make_again(op.topic, op.name, topic, sub, std::nullopt, ns);
  // Where the server starts: the stream sequence before the first one it will deliver.
  jsConsumerInfo* ci = nullptr;
  jsErrCode jerr = static_cast<jsErrCode>(0);
  check(js_GetConsumerInfo(&ci, js_, topic.stream.c_str(), sub.consumer.c_str(), nullptr, &jerr),
        "js_GetConsumerInfo", jerr);
  const model::Offset offset = ci->Delivered.Stream;
  jsConsumerInfo_Destroy(ci);
  return oplang::OffsetResult{offset};
}

void JetStreamTarget::make_again(const std::string& topic_name, const std::string& name,
                                 Topic& topic, Sub& sub, std::optional<model::Offset> from,
                                 std::optional<std::int64_t> from_time) {
  // Under a new name: what the old consumer held, its redeliveries and delivery counts go
  // with it, and an answer through a delivery from before reaches no consumer (the server
  // has no responder for it).
  jsErrCode jerr = static_cast<jsErrCode>(0);
  check(js_DeleteConsumer(js_, topic.stream.c_str(), sub.consumer.c_str(), nullptr, &jerr),
        "js_DeleteConsumer", jerr);
  drain_advisories(topic_name, name, sub, 0);
  sub.pull.reset();
  close_deliveries(sub);  // what the old consumer pushed goes with it
  natsSubscription_Unsubscribe(sub.advisories);
  natsSubscription_Destroy(sub.advisories);
  sub.advisories = nullptr;
  sub.seeks += 1;
  // "_S" cannot occur in an encoded name ('_' is always followed by two hex digits).
  sub.consumer = encode(name) + "_S" + std::to_string(sub.seeks);
  open_consumer(topic, sub, from, from_time);
}

void JetStreamTarget::open_consumer(const Topic& topic, Sub& sub, std::optional<model::Offset> from,
                                    std::optional<std::int64_t> from_time) {
  // Subscribe to the advisories first, so none can be missed: every consumer advisory of
  // this consumer (drain_advisories keeps MAX_DELIVERIES and MSG_TERMINATED).
  const std::string advisory = "$JS.EVENT.ADVISORY.CONSUMER.*." + topic.stream + "." + sub.consumer;
  check(natsConnection_SubscribeSync(&sub.advisories, nc_, advisory.c_str()),
        ("subscribe " + advisory).c_str());
  // A push consumer's deliveries: subscribed before the consumer exists, so none is missed.
  if (sub.push) {
    const std::string deliver = deliver_subject(sub);
    const natsStatus s = natsConnection_SubscribeSync(&sub.deliveries, nc_, deliver.c_str());
    if (s != NATS_OK) {
      natsSubscription_Destroy(sub.advisories);
      sub.advisories = nullptr;
      check(s, ("subscribe " + deliver).c_str());
    }
  }
  try {
    add_consumer(topic, sub, from, from_time);
  } catch (const TargetFailure&) {
    close_deliveries(sub);
    natsSubscription_Destroy(sub.advisories);
    sub.advisories = nullptr;
    throw;
  }
  if (sub.push) return;
  try {
    bind_pull(topic, sub);
  } catch (const TargetFailure&) {
    jsErrCode jerr = static_cast<jsErrCode>(0);
    js_DeleteConsumer(js_, topic.stream.c_str(), sub.consumer.c_str(), nullptr, &jerr);
    natsSubscription_Destroy(sub.advisories);
    sub.advisories = nullptr;
    throw;
  }
}

oplang::Value JetStreamTarget::subscribe_pull(const oplang::SubscribePull& op) {
  if (op.name.empty() || op.ack_timeout <= 0 || op.ack_timeout > model::kMaxDuration ||
      op.max_deliveries < 0) {
    throw Error(ErrorCode::kInvalidArgument);
  }
  Topic& topic = topic_or_throw(op.topic);
  const Options options{op.filter, op.ack_timeout, op.max_deliveries, op.start, op.max_in_flight};
  if (auto it = topic.subs.find(op.name); it != topic.subs.end()) {
    pull_only(*it->second);
    if (it->second->options == options) return oplang::Done{};
    throw Error(ErrorCode::kOptionsMismatch);
  }
  check_headers(op.filter);

  auto sub = std::make_unique<Sub>();
  sub->order = next_order_++;
  sub->consumer = encode(op.name);
  sub->options = options;

  open_consumer(topic, *sub, std::nullopt);
  topic.subs.emplace(op.name, std::move(sub));
  return oplang::Done{};
}

oplang::Value JetStreamTarget::subscribe(const oplang::Subscribe& op) {
  if (op.name.empty() || op.max_deliveries < 0) throw Error(ErrorCode::kInvalidArgument);
  Topic& topic = topic_or_throw(op.topic);
  if (topic.subs.contains(op.name)) throw Error(ErrorCode::kDuplicateSubscription);
  // Retention would discard what a push consumer already delivered and the client keeps for
  // the next drain: not served (the generator keeps push to unbounded topics).
  jsStreamInfo* si = nullptr;
  jsErrCode jerr = static_cast<jsErrCode>(0);
  check(js_GetStreamInfo(&si, js_, topic.stream.c_str(), nullptr, &jerr), "js_GetStreamInfo", jerr);
  const bool bounded = si->Config != nullptr && si->Config->MaxMsgs > 0;
  jsStreamInfo_Destroy(si);
  if (bounded) throw std::invalid_argument("jetstream: a push subscription on a bounded topic");
  check_headers(op.filter);
  auto sub = std::make_unique<Sub>();
  sub->order = next_order_++;
  sub->push = true;
  sub->script = op.script;
  sub->consumer = encode(op.name);
  sub->options = Options{op.filter, 0, op.max_deliveries, op.start, 0};
  open_consumer(topic, *sub, std::nullopt);
  topic.subs.emplace(op.name, std::move(sub));
  return oplang::Done{};
}

std::string JetStreamTarget::deliver_subject(const Sub& sub) const {
  // No stream's subject starts with "_PUSH." (those are `<prefix>.<name>`).
  return "_PUSH." + prefix_ + "." + sub.consumer;
}

void JetStreamTarget::close_deliveries(Sub& sub) {
  if (sub.deliveries == nullptr) return;
  natsSubscription_Unsubscribe(sub.deliveries);
  natsSubscription_Destroy(sub.deliveries);
  sub.deliveries = nullptr;
}

void JetStreamTarget::pull_only(const Sub& sub) {
  if (sub.push) throw Error(ErrorCode::kWrongKind);
}

oplang::Value JetStreamTarget::drain(std::vector<model::HandlerCall>& calls) {
  std::vector<std::pair<std::uint64_t, std::string>> topics;
  for (const auto& [name, topic] : topics_) topics.emplace_back(topic.order, name);
  std::sort(topics.begin(), topics.end());
  std::size_t confirmations = 0;
  for (const auto& [order, topic_name] : topics) {
    Topic& topic = topics_.at(topic_name);
    std::vector<std::pair<std::uint64_t, std::string>> subs;
    for (const auto& [name, sub] : topic.subs) {
      if (sub->push) subs.emplace_back(sub->order, name);
    }
    std::sort(subs.begin(), subs.end());
    for (const auto& [sub_order, name] : subs) {
      confirmations += serve(topic_name, topic, name, *topic.subs.at(name), calls);
    }
  }
  return oplang::CountResult{confirmations};
}

std::size_t JetStreamTarget::serve(const std::string& topic_name, Topic& topic,
                                   const std::string& name, Sub& sub,
                                   std::vector<model::HandlerCall>& calls) {
  std::size_t confirmations = 0;
  for (int round = 0; round < kMaxFetchRounds; ++round) {
    natsMsg* raw = nullptr;
    // A sync subscription's NextMsg with timeout 0 only looks at what has arrived; with
    // nothing there, the server says whether more is on its way.
    natsStatus s = natsSubscription_NextMsg(&raw, sub.deliveries, 0);
    if (s == NATS_TIMEOUT) {
      if (nothing_pending(topic, sub)) return confirmations;
      s = natsSubscription_NextMsg(&raw, sub.deliveries, kApiWaitMs);
    }
    check(s, "push delivery NextMsg");
    const NatsMsgPtr msg(raw);
    jsMsgMetaData* meta = nullptr;
    check(natsMsg_GetMetaData(&meta, msg.get()), "natsMsg_GetMetaData");
    const model::Offset offset = meta->Sequence.Stream - 1;
    const int attempt = static_cast<int>(meta->NumDelivered);
    jsMsgMetaData_Destroy(meta);
    if (!matches(msg.get(), sub.options.filter)) {  // R5: filtered out, confirmed at once
      check(answer_through(nc_, msg.get(), "+ACK"), "+ACK request (filtered)");
      continue;
    }
    std::string payload = payload_of(msg.get());
    sub.payloads[offset] = payload;
    sub.headers[offset] = headers_of(msg.get());
    const model::Step step =
        sub.next_step < sub.script.size() ? sub.script[sub.next_step] : model::Step{};
    sub.next_step += 1;
    calls.push_back(model::HandlerCall{topic_name, name, offset, std::move(payload), attempt, ""});
    const char* word = step.verdict == model::Verdict::kConfirm     ? "+ACK"
                       : step.verdict == model::Verdict::kTerminate ? "+TERM"
                                                                    : "-NAK";
    const std::size_t dead_before = sub.dead.size();
    check(answer_through(nc_, msg.get(), word), (std::string(word) + " request (push)").c_str());
    if (step.verdict == model::Verdict::kConfirm) {
      confirmations += 1;
      continue;
    }
    if (step.verdict == model::Verdict::kTerminate) {
      await_dead_letter(topic_name, name, sub, dead_before, offset);
    }
    return confirmations;  // R8: a failure ends this subscription's turn
  }
  throw TargetFailure("drain: the push consumer never ran dry");
}

bool JetStreamTarget::nothing_pending(const Topic& topic, const Sub& sub) {
  jsConsumerInfo* ci = nullptr;
  jsErrCode jerr = static_cast<jsErrCode>(0);
  check(js_GetConsumerInfo(&ci, js_, topic.stream.c_str(), sub.consumer.c_str(), nullptr, &jerr),
        "js_GetConsumerInfo", jerr);
  const bool none = ci->NumPending == 0 && ci->NumAckPending <= 0;
  jsConsumerInfo_Destroy(ci);
  return none;
}

void JetStreamTarget::bind_pull(const Topic& topic, Sub& sub) {
  sub.pull = std::make_unique<JetStreamPull>(nc_, topic.stream, sub.consumer);
}

void JetStreamTarget::destroy_sub(Topic& topic, Sub& sub, bool delete_consumer) {
  for (auto& [offset, members] : sub.given) {
    for (auto& [member, msg] : members) natsMsg_Destroy(msg);
  }
  sub.given.clear();
  sub.pull.reset();
  close_deliveries(sub);
  if (sub.advisories != nullptr) {
    natsSubscription_Unsubscribe(sub.advisories);
    natsSubscription_Destroy(sub.advisories);
    sub.advisories = nullptr;
  }
  if (delete_consumer) {
    jsErrCode jerr = static_cast<jsErrCode>(0);
    check(js_DeleteConsumer(js_, topic.stream.c_str(), sub.consumer.c_str(), nullptr, &jerr),
          ("js_DeleteConsumer " + sub.consumer).c_str(), jerr);
  }
}

oplang::Value JetStreamTarget::unsubscribe(const oplang::Unsubscribe& op) {
  Topic& topic = topic_or_throw(op.topic);
  auto it = topic.subs.find(op.name);
  if (it == topic.subs.end()) return oplang::BoolResult{false};
  std::unique_ptr<Sub> sub = std::move(it->second);
  topic.subs.erase(it);
  destroy_sub(topic, *sub, true);
  return oplang::BoolResult{true};
}

void JetStreamTarget::drain_advisories(const std::string& topic_name, const std::string& name,
                                       Sub& sub, std::int64_t wait_ms) {
  if (sub.advisories == nullptr) return;  // a worker: the target reads them
  for (int i = 0; i < kMaxAdvisories; ++i) {
    natsMsg* msg = nullptr;
    // A sync subscription's NextMsg with timeout 0 only looks at what has arrived.
    const natsStatus s = natsSubscription_NextMsg(&msg, sub.advisories, i == 0 ? wait_ms : 0);
    if (s == NATS_TIMEOUT) {
      return;
    }
    check(s, "advisory NextMsg");
    const std::string subject = natsMsg_GetSubject(msg);
    const std::string body = payload_of(msg);
    natsMsg_Destroy(msg);  // before anything below may throw
    const bool terminated = subject.starts_with("$JS.EVENT.ADVISORY.CONSUMER.MSG_TERMINATED.");
    if (!terminated && !subject.starts_with("$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES.")) {
      continue;  // created, naked (newer servers): not a dead letter
    }
    const std::uint64_t seq = json_number(body, "stream_seq");
    if (seq == 0) throw TargetFailure("max-deliveries advisory without stream_seq: " + body);
    const model::Offset offset = seq - 1;
    model::DeadLetter d;
    d.topic = topic_name;
    d.subscription = name;
    d.offset = offset;
    d.attempts = static_cast<int>(json_number(body, "deliveries"));
    d.reason = terminated ? "terminated" : "max deliveries";
    d.died_at = now_;
    // The body as the client fetched it (kept for as long as the subscription: the server
    // may announce a message again, after the stream discarded it), else from the stream.
    if (auto p = sub.payloads.find(offset); p != sub.payloads.end()) {
      d.payload = p->second;
      d.headers = sub.headers[offset];
    } else {
      natsMsg* stored = nullptr;
      jsErrCode jerr = static_cast<jsErrCode>(0);
      check(js_GetMsg(&stored, js_, topics_.at(topic_name).stream.c_str(), seq, nullptr, &jerr),
            "js_GetMsg", jerr);
      d.payload = payload_of(stored);
      d.headers = headers_of(stored);
      natsMsg_Destroy(stored);
    }
    sub.dead.push_back(std::move(d));
  }
  throw TargetFailure("advisory subscription never ran dry");
}

oplang::Value JetStreamTarget::poll(const oplang::Poll& op) {
  if (op.max == 0 || op.member.empty()) throw Error(ErrorCode::kInvalidArgument);
  Topic& topic = topic_or_throw(op.topic);
  Sub& sub = sub_or_throw(topic, op.sub);
  pull_only(sub);
  drain_advisories(op.topic, op.sub, sub, 0);
  std::vector<model::Received> out;
  for (int round = 0; out.size() < op.max; ++round) {
    if (round == kMaxFetchRounds) throw TargetFailure("poll: fetch never ran dry");
    const int want = static_cast<int>(std::min<std::size_t>(op.max - out.size(), kMaxBatch));
    std::vector<NatsMsgPtr> batch = sub.pull->fetch(want, kFetchWaitMs, kApiWaitMs, reconnect_);
    // An empty answer: the server has no message for us right now.
    if (batch.empty()) break;
    int filtered = 0;
    for (NatsMsgPtr& msg : batch) {
      jsMsgMetaData* meta = nullptr;
      check(natsMsg_GetMetaData(&meta, msg.get()), "natsMsg_GetMetaData");
      const model::Offset offset = meta->Sequence.Stream - 1;
      const int attempt = static_cast<int>(meta->NumDelivered);
      jsMsgMetaData_Destroy(meta);
      if (!matches(msg.get(), sub.options.filter)) {
        // Filtered out (R5): confirmed at once so the server never offers it again (an ack
        // request, answered once applied: the message came through no JetStream
        // subscription, so libnats' natsMsg_AckSync has no context for it).
        check(answer_through(nc_, msg.get(), "+ACK"), "+ACK request (filtered)");
        filtered += 1;
        continue;
      }
      std::string payload = payload_of(msg.get());
      sub.payloads[offset] = payload;
      sub.headers[offset] = headers_of(msg.get());
      auto [it, fresh] = sub.given[offset].try_emplace(op.member, nullptr);
      if (!fresh) natsMsg_Destroy(it->second);
      it->second = msg.release();
      out.push_back(
          model::Received{offset, std::move(payload), attempt, now_ + sub.options.ack_timeout});
    }
    // All matched: done. Some were filtered out (acked at once): ask again, also after a
    // short batch, since those acks may have made room under MaxAckPending; a fetch the
    // server has nothing for ends the loop above.
    if (filtered == 0) break;
  }
  return out;
}

oplang::Value JetStreamTarget::ack(const oplang::Ack& op) {
  return oplang::BoolResult{answer(op.topic, op.sub, op.offset, op.member, "+ACK")};
}

oplang::Value JetStreamTarget::nack(const oplang::Nack& op) {
  // R24: a delay outside [0, kMaxDuration] is refused by the adapter (the server would take
  // a negative one as none); a delay of 0 is a plain nak (the server would wait for its
  // ack-wait timer's next pass to hand the message out again).
  if (op.delay && (*op.delay < 0 || *op.delay > model::kMaxDuration)) {
    throw Error(ErrorCode::kInvalidArgument);
  }
  if (!op.delay || *op.delay == 0) {
    return oplang::BoolResult{answer(op.topic, op.sub, op.offset, op.member, "-NAK")};
  }
  const std::string word =
      "-NAK {\"delay\": " + std::to_string(to_nanos(*op.delay, unit_ms_)) + "}";
  return oplang::BoolResult{answer(op.topic, op.sub, op.offset, op.member, word.c_str())};
}

bool JetStreamTarget::answer(const std::string& topic_name, const std::string& sub_name,
                             model::Offset offset, const std::string& member, const char* word) {
  Topic& topic = topic_or_throw(topic_name);
  Sub& sub = sub_or_throw(topic, sub_name);
  pull_only(sub);
  drain_advisories(topic_name, sub_name, sub, 0);
  auto it = sub.given.find(offset);
  if (it == sub.given.end() || !it->second.contains(member)) return false;
  const natsStatus s = answer_through(nc_, it->second.at(member), word);
  // No responders: the consumer that made the delivery is gone (a seek made a new one), and
  // the server says nobody took the answer.
  if (s == NATS_NO_RESPONDERS) return false;
  check(s, (std::string(word) + " request").c_str());
  return true;
}

oplang::Value JetStreamTarget::term(const oplang::Term& op) {
  Sub& sub = sub_or_throw(topic_or_throw(op.topic), op.sub);
  const std::size_t dead_before = sub.dead.size();
  if (!answer(op.topic, op.sub, op.offset, op.member, "+TERM")) return oplang::BoolResult{false};
  await_dead_letter(op.topic, op.sub, sub, dead_before, op.offset);
  return oplang::BoolResult{true};
}

void JetStreamTarget::await_dead_letter(const std::string& topic_name, const std::string& name,
                                        Sub& sub, std::size_t dead_before, model::Offset offset) {
  // The server announces the dead message on its own schedule (on loopback within about
  // 1 ms): wait for that advisory, so a dead_letters right after the term sees it as the
  // model's does, but one model ms at most (a fifth of the margin, so the run is not made
  // void): one that does not come is the engine's answer, judged by the steps after it.
  if (sub.advisories == nullptr) return;
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(unit_ms_);
  auto announced = [&] {
    return std::any_of(sub.dead.begin() + static_cast<long>(dead_before), sub.dead.end(),
                       [&](const model::DeadLetter& d) { return d.offset == offset; });
  };
  while (!announced() && std::chrono::steady_clock::now() < until) {
    drain_advisories(topic_name, name, sub, 10);
  }
}

oplang::Value JetStreamTarget::extend(const oplang::Extend& op) {
  if (op.extension <= 0 || op.extension > model::kMaxDuration) {
    throw Error(ErrorCode::kInvalidArgument);
  }
  Topic& topic = topic_or_throw(op.topic);
  Sub& sub = sub_or_throw(topic, op.sub);
  pull_only(sub);
  // +WPI restarts AckWait and knows no other extension: the adapter's refusal, not the
  // engine's.
  if (op.extension != sub.options.ack_timeout) {
    throw std::invalid_argument("jetstream: extend by the subscription's ack timeout only");
  }
  return oplang::BoolResult{answer(op.topic, op.sub, op.offset, op.member, "+WPI")};
}

oplang::Value JetStreamTarget::advance(const oplang::Advance& op) {
  if (op.ms < 0) throw Error(ErrorCode::kInvalidArgument);
  // Sleep to the model's time on one schedule from the start: the calls in between took
  // real time too, and that must not add up across a script.
  now_ += op.ms;
  std::this_thread::sleep_until(start_ + std::chrono::nanoseconds(to_nanos(now_, unit_ms_)));
  return oplang::Done{};
}

oplang::Value JetStreamTarget::dead_letters(const oplang::GetDeadLetters& op) {
  Topic& topic = topic_or_throw(op.topic);
  Sub& sub = sub_or_throw(topic, op.name);
  // The server sends an advisory on its own schedule: a round trip first, then a short wait.
  check(natsConnection_Flush(nc_), "natsConnection_Flush");
  drain_advisories(op.topic, op.name, sub, 10);
  return sub.dead;
}

model::Millis JetStreamTarget::lag() const {
  const auto real = std::chrono::steady_clock::now() - start_;
  const model::Millis client =
      std::chrono::duration_cast<std::chrono::milliseconds>(real).count() / unit_ms_ - now_;
  // The engine's own lag, measured: a round trip to the server now. A server starved of CPU
  // answers late, and its ack-wait timers fire late by as much, which the client's clock
  // alone does not see.
  std::int64_t rtt_ns = 0;
  if (nc_ == nullptr || natsConnection_GetRTT(nc_, &rtt_ns) != NATS_OK) return client;
  return std::max(client, rtt_ns / 1000000 / unit_ms_);
}

}  // namespace conformance
