// Removing what killed runs left (conformance/leftovers.h).
#include "conformance/leftovers.h"

#include <nats/nats.h>
#include <signal.h>

#include <cerrno>
#include <stdexcept>

#include "conformance/target.h"

#ifdef CONFORMANCE_HAS_REDIS
#include <hiredis/hiredis.h>

#include "conformance/redis_server.h"
#endif

namespace conformance {

namespace {

// Whether a process with this pid runs on this machine (one we may not signal runs too).
bool running(pid_t pid) { return ::kill(pid, 0) == 0 || errno == EPERM; }

// Bounds on loops that only run away on a misbehaving server.
constexpr int kMaxScanRounds = 100000;

}  // namespace

std::string run_prefix(pid_t pid) { return "aloc" + std::to_string(static_cast<long long>(pid)); }

pid_t pid_of_leftover(const std::string& name) {
  if (!name.starts_with("aloc")) return 0;
  std::size_t i = 4;
  long long pid = 0;
  while (i < name.size() && name[i] >= '0' && name[i] <= '9' && pid < (1LL << 31)) {
    pid = pid * 10 + (name[i] - '0');
    ++i;
  }
  // The digits end at the '_' before the script's number (encoded as "_5F" by the targets).
  if (i == 4 || i == name.size() || name[i] != '_' || pid <= 0 || pid >= (1LL << 31)) return 0;
  return static_cast<pid_t>(pid);
}

std::vector<std::string> remove_jetstream_leftovers(const std::string& url) {
  natsConnection* nc = nullptr;
  jsCtx* js = nullptr;
  natsStatus s = natsConnection_ConnectTo(&nc, url.c_str());
  if (s == NATS_OK) s = natsConnection_JetStream(&js, nc, nullptr);
  jsStreamNamesList* names = nullptr;
  jsErrCode jerr = static_cast<jsErrCode>(0);
  if (s == NATS_OK) s = js_StreamNames(&names, js, nullptr, &jerr);
  std::vector<std::string> removed;
  if (s == NATS_NOT_FOUND) s = NATS_OK;  // no stream at all
  for (int i = 0; s == NATS_OK && names != nullptr && i < names->Count; ++i) {
    const std::string name = names->List[i];
    const pid_t pid = pid_of_leftover(name);
    if (pid == 0 || running(pid)) continue;
    s = js_DeleteStream(js, name.c_str(), nullptr, &jerr);
    if (s == NATS_NOT_FOUND) s = NATS_OK;  // another run removed it first
    if (s == NATS_OK) removed.push_back(name);
  }
  const std::string text = s == NATS_OK ? "" : natsStatus_GetText(s);
  jsStreamNamesList_Destroy(names);
  jsCtx_Destroy(js);
  natsConnection_Destroy(nc);
  if (s != NATS_OK) throw TargetFailure("removing earlier runs' streams at " + url + ": " + text);
  return removed;
}

#ifdef CONFORMANCE_HAS_REDIS
std::vector<std::string> remove_redis_leftovers(const std::string& url) {
  const auto [host, port] = redis_host_port(url);
  redisContext* c = redisConnect(host.c_str(), port);
  if (c == nullptr || c->err != 0) {
    const std::string why = c == nullptr ? "out of memory" : c->errstr;
    redisFree(c);
    throw TargetFailure("removing earlier runs' keys at " + url + ": " + why);
  }
  std::vector<std::string> removed;
  std::string cursor = "0";
  std::string failure;
  for (int round = 0; round < kMaxScanRounds; ++round) {
    auto* r =
        static_cast<redisReply*>(redisCommand(c, "SCAN %s MATCH aloc* COUNT 1000", cursor.c_str()));
    if (r == nullptr || r->type != REDIS_REPLY_ARRAY || r->elements != 2) {
      failure = r == nullptr ? c->errstr : "SCAN: unexpected reply";
      freeReplyObject(r);
      break;
    }
    cursor = r->element[0]->str;
    for (std::size_t i = 0; i < r->element[1]->elements; ++i) {
      const std::string key(r->element[1]->element[i]->str, r->element[1]->element[i]->len);
      const pid_t pid = pid_of_leftover(key);
      if (pid == 0 || running(pid)) continue;
      freeReplyObject(redisCommand(c, "DEL %b", key.data(), key.size()));
      removed.push_back(key);
    }
    freeReplyObject(r);
    if (cursor == "0") break;
  }
  redisFree(c);
  if (!failure.empty())
    throw TargetFailure("removing earlier runs' keys at " + url + ": " + failure);
  return removed;
}
#endif

}  // namespace conformance
