// Raw probes of the power-cut and damage findings (CONFORMANCE.md, "The nemesis"): each
// engine on a lazy file system (conformance/lazy_fs.h), driven by its own client library
// alone (libnats, hiredis; no kit code between the test and the server), then killed with
// its unsynced writes dropped (or a bit of its data flipped) and started again. What the engine
// acknowledged and what it kept are compared; the lazy file system's counters say what the engine
// synced.
#include <gtest/gtest.h>
#include <hiredis/hiredis.h>
#include <nats/nats.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <thread>

#include "conformance/lazy_fs.h"
#include "conformance/nats_server.h"
#include "conformance/redis_server.h"

namespace conformance {
namespace {

#define SKIP_WITHOUT_FUSE()                                            \
  do {                                                                 \
    if (const std::string why = lazy_fs_unavailable(); !why.empty()) { \
      GTEST_SKIP() << why;                                             \
    }                                                                  \
  } while (0)

// A libnats connection and JetStream context; stream `name` on subject name.s.
class NatsClient {
 public:
  explicit NatsClient(const std::string& url) {
    ok_ = natsConnection_ConnectTo(&nc_, url.c_str()) == NATS_OK &&
          natsConnection_JetStream(&js_, nc_, nullptr) == NATS_OK;
  }
  ~NatsClient() {
    jsCtx_Destroy(js_);
    natsConnection_Destroy(nc_);
  }
  NatsClient(const NatsClient&) = delete;
  NatsClient& operator=(const NatsClient&) = delete;

  [[nodiscard]] bool ok() const { return ok_; }
  bool add_stream(const std::string& name) {
    const std::string subject = name + ".s";
    const char* subjects[] = {subject.c_str()};
    jsStreamConfig sc;
    jsStreamConfig_Init(&sc);
    sc.Name = name.c_str();
    sc.Subjects = subjects;
    sc.SubjectsLen = 1;
    sc.Storage = js_FileStorage;
    jsErrCode jerr = static_cast<jsErrCode>(0);
    return js_AddStream(nullptr, js_, &sc, nullptr, &jerr) == NATS_OK;
  }
  // Publishes n messages, each answered (a PubAck); returns how many were acknowledged.
  int publish(const std::string& name, int n) {
    int acked = 0;
    for (int i = 0; i < n; ++i) {
      const std::string data = "m" + std::to_string(i);
      jsPubAck* pa = nullptr;
      jsErrCode jerr = static_cast<jsErrCode>(0);
      if (js_Publish(&pa, js_, (name + ".s").c_str(), data.data(), static_cast<int>(data.size()),
                     nullptr, &jerr) == NATS_OK) {
        ++acked;
      }
      jsPubAck_Destroy(pa);
    }
    return acked;
  }
  bool add_consumer(const std::string& stream, const std::string& durable) {
    jsConsumerConfig cc;
    jsConsumerConfig_Init(&cc);
    cc.Durable = durable.c_str();
    cc.AckPolicy = js_AckExplicit;
    jsErrCode jerr = static_cast<jsErrCode>(0);
    return js_AddConsumer(nullptr, js_, stream.c_str(), &cc, nullptr, &jerr) == NATS_OK;
  }
  bool has_consumer(const std::string& stream, const std::string& durable) {
    jsConsumerInfo* ci = nullptr;
    jsErrCode jerr = static_cast<jsErrCode>(0);
    const bool found =
        js_GetConsumerInfo(&ci, js_, stream.c_str(), durable.c_str(), nullptr, &jerr) == NATS_OK;
    jsConsumerInfo_Destroy(ci);
    return found;
  }
  // The stream's message count; -1 if the server does not know the stream.
  std::int64_t messages(const std::string& name) {
    jsStreamInfo* si = nullptr;
    jsErrCode jerr = static_cast<jsErrCode>(0);
    if (js_GetStreamInfo(&si, js_, name.c_str(), nullptr, &jerr) != NATS_OK) return -1;
    const auto n = static_cast<std::int64_t>(si->State.Msgs);
    jsStreamInfo_Destroy(si);
    return n;
  }

 private:
  natsConnection* nc_ = nullptr;
  jsCtx* js_ = nullptr;
  bool ok_ = false;
};

// A nats-server whose store is a lazy file system.
struct NatsOnLazyFs {
  static NatsServerOptions store_on(const LazyFs& disk) {
    NatsServerOptions o;
    o.store_dir = disk.path();
    return o;
  }
  LazyFs disk;
  NatsServer server{store_on(disk)};
};

// nats-server 2.9.10 writes a stream's messages and its meta file without syncing them
// (the file store syncs on a 60 s timer): a power cut loses publishes it acknowledged.
TEST(JetStreamPowerCut, AcknowledgedPublishesAreLostWhenUnsyncedWritesAre) {
  SKIP_WITHOUT_FUSE();
  NatsOnLazyFs nats;
  LazyFs& disk = nats.disk;
  NatsServer& server = nats.server;
  {
    NatsClient c(server.url());
    ASSERT_TRUE(c.ok());
    ASSERT_TRUE(c.add_stream("cut"));
    disk.write_back();  // the stream was made long ago: on the disk
    ASSERT_EQ(c.publish("cut", 20), 20);
    ASSERT_EQ(c.messages("cut"), 20);
  }
  const LazyFsCounters before = disk.counters();
  server.kill9();
  EXPECT_GT(disk.drop_unsynced(), 0U);
  server.restart();
  NatsClient c(server.url());
  ASSERT_TRUE(c.ok());
  const std::int64_t kept = c.messages("cut");
  EXPECT_GE(kept, 0) << "the stream itself is gone";
  EXPECT_LT(kept, 20) << "all 20 acknowledged publishes survived the power cut";
  EXPECT_EQ(before.fsyncs, 0U) << "the server synced: the finding may be gone";
}

// A failing disk (every write and fsync EIO, or ENOSPC), no restart: nats-server 2.9.10
// writes a message as it stores it, and a write that fails fails the publish ("JetStream
// failed to store a msg"): nothing is acknowledged while the disk fails, nothing
// acknowledged before is lost, and once the disk heals publishes are taken again.
TEST(JetStreamDiskError, APublishWhoseWriteFailsIsRefusedAndNothingAcknowledgedIsLost) {
  SKIP_WITHOUT_FUSE();
  for (const int error : {EIO, ENOSPC}) {
    NatsOnLazyFs nats;
    LazyFs& disk = nats.disk;
    NatsServer& server = nats.server;
    NatsClient c(server.url());
    ASSERT_TRUE(c.ok());
    ASSERT_TRUE(c.add_stream("ill"));
    ASSERT_EQ(c.publish("ill", 20), 20);
    disk.fail(error);
    EXPECT_EQ(c.publish("ill", 20), 0) << "acknowledged while every write failed, errno " << error;
    EXPECT_GT(disk.counters().failed, 0U);
    EXPECT_EQ(c.messages("ill"), 20);
    disk.heal();
    EXPECT_EQ(c.publish("ill", 5), 5);
    EXPECT_EQ(c.messages("ill"), 25);
    server.stop();
    server.restart();
    NatsClient again(server.url());
    EXPECT_EQ(again.messages("ill"), 25) << "errno " << error;
  }
}

// The stream's meta file, written without a sync, is lost in a power cut before the 60 s
// timer: the server skips the stream ("checksums do not match") and everything in it.
TEST(JetStreamPowerCut, AStreamMadeSinceTheLastSyncIsGoneWithItsMessages) {
  SKIP_WITHOUT_FUSE();
  NatsOnLazyFs nats;
  LazyFs& disk = nats.disk;
  NatsServer& server = nats.server;
  {
    NatsClient c(server.url());
    ASSERT_TRUE(c.ok());
    ASSERT_TRUE(c.add_stream("young"));
    ASSERT_EQ(c.publish("young", 5), 5);
  }
  server.kill9();
  disk.drop_unsynced();
  server.restart();
  NatsClient c(server.url());
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c.messages("young"), -1) << "the stream survived the power cut";
}

// A flipped bit in a consumer's meta file: the server skips the consumer on its next start
// ("checksums do not match") and serves on without it, so what it held is never delivered.
TEST(JetStreamDamage, AFlippedBitInAConsumersMetaFileDropsTheConsumer) {
  NatsServer server;
  {
    NatsClient c(server.url());
    ASSERT_TRUE(c.ok());
    ASSERT_TRUE(c.add_stream("hurt"));
    ASSERT_TRUE(c.add_consumer("hurt", "d"));
    ASSERT_EQ(c.publish("hurt", 5), 5);
    ASSERT_TRUE(c.has_consumer("hurt", "d"));
  }
  server.stop();  // a clean stop: everything written and closed
  const std::string meta = server.dir() + "/store/jetstream/$G/streams/hurt/obs/d/meta.inf";
  ASSERT_TRUE(std::filesystem::exists(meta));
  {
    std::fstream f(meta, std::ios::in | std::ios::out | std::ios::binary);
    char byte = 0;
    f.seekg(10);
    f.get(byte);
    f.seekp(10);
    f.put(static_cast<char>(byte ^ 0x01));
  }
  server.restart();
  NatsClient c(server.url());
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c.messages("hurt"), 5) << "the stream itself was hurt";
  EXPECT_FALSE(c.has_consumer("hurt", "d")) << "the server kept the damaged consumer";
}

// One hiredis command whose reply is an integer (-1 if it failed).
long long redis_int(redisContext* c, const char* command, const char* key) {
  auto* r = static_cast<redisReply*>(redisCommand(c, command, key));
  const long long v = r != nullptr && r->type == REDIS_REPLY_INTEGER ? r->integer : -1;
  if (r != nullptr) freeReplyObject(r);
  return v;
}

// XADDs until one was acknowledged while the AOF held unsynced bytes (everysec syncs once a
// second in the background; a bounded number of tries); returns how many were acknowledged.
int xadd_until_unsynced(redisContext* c, LazyFs& disk, int at_least) {
  int acked = 0;
  for (int i = 0; i < 10000 && (acked < at_least || disk.counters().pending_bytes == 0); ++i) {
    auto* r = static_cast<redisReply*>(redisCommand(c, "XADD k * f v%d", i));
    if (r != nullptr && r->type == REDIS_REPLY_STRING) ++acked;
    if (r != nullptr) freeReplyObject(r);
  }
  return acked;
}

// A redis-server with an AOF under the given fsync policy, its data directory a lazy file
// system, and a client of it once connect() answered.
struct RedisOnLazyFs {
  static RedisServerOptions store_on(const LazyFs& disk, RedisServerOptions::Fsync policy) {
    RedisServerOptions o;
    o.appendonly = policy;
    o.data_dir = disk.path();
    return o;
  }
  explicit RedisOnLazyFs(RedisServerOptions::Fsync policy) : server(store_on(disk, policy)) {}
  ~RedisOnLazyFs() { disconnect(); }
  RedisOnLazyFs(const RedisOnLazyFs&) = delete;
  RedisOnLazyFs& operator=(const RedisOnLazyFs&) = delete;
  // Connects a new client (the old one freed); whether the server answered.
  [[nodiscard]] bool connect() {
    disconnect();
    c = redisConnect("127.0.0.1", server.port());
    return c != nullptr && c->err == 0;
  }
  void disconnect() {
    if (c != nullptr) redisFree(c);
    c = nullptr;
  }
  LazyFs disk;
  RedisServer server;
  redisContext* c = nullptr;
};

// appendfsync everysec answers an XADD before its AOF write is synced: a power cut within
// the second loses acknowledged entries.
TEST(RedisPowerCut, EverysecLosesAcknowledgedXaddsWhenUnsyncedWritesAre) {
  SKIP_WITHOUT_FUSE();
  RedisOnLazyFs redis(RedisServerOptions::Fsync::kEverySec);
  auto& [disk, server, c] = redis;
  ASSERT_TRUE(redis.connect());
  const int acked = xadd_until_unsynced(c, disk, 50);
  redis.disconnect();
  ASSERT_GT(disk.counters().pending_bytes, 0U) << "every write was synced at once";
  server.kill9();
  disk.drop_unsynced();
  server.restart();
  ASSERT_TRUE(redis.connect());
  EXPECT_LT(redis_int(c, "XLEN %s", "k"), acked);
  redis.disconnect();
}

// The control: appendfsync always syncs before it answers, so a power cut loses nothing it
// acknowledged (its every write was synced: no byte left to drop).
TEST(RedisPowerCut, AlwaysKeepsEveryAcknowledgedXadd) {
  SKIP_WITHOUT_FUSE();
  RedisOnLazyFs redis(RedisServerOptions::Fsync::kAlways);
  auto& [disk, server, c] = redis;
  ASSERT_TRUE(redis.connect());
  int acked = 0;
  for (int i = 0; i < 200; ++i) {
    auto* r = static_cast<redisReply*>(redisCommand(c, "XADD k * f v%d", i));
    if (r != nullptr && r->type == REDIS_REPLY_STRING) ++acked;
    if (r != nullptr) freeReplyObject(r);
  }
  redis.disconnect();
  ASSERT_EQ(acked, 200);
  EXPECT_GT(disk.counters().fsyncs, 0U);
  server.kill9();
  EXPECT_EQ(disk.drop_unsynced(), 0U);
  server.restart();
  ASSERT_TRUE(redis.connect());
  EXPECT_EQ(redis_int(c, "XLEN %s", "k"), acked);
  redis.disconnect();
}

// XADDs on c until one is refused or the connection ends (at most n); returns how many were
// acknowledged, and the first refusal's text (or "no reply") in `refusal`.
int xadds(redisContext* c, int n, std::string& refusal) {
  int acked = 0;
  for (int i = 0; i < n && c->err == 0; ++i) {
    auto* r = static_cast<redisReply*>(redisCommand(c, "XADD k * f v%d", i));
    if (r == nullptr) {
      refusal = "no reply";
      break;
    }
    const bool ok = r->type == REDIS_REPLY_STRING;
    if (!ok) refusal = r->type == REDIS_REPLY_ERROR ? r->str : "an answer of another type";
    freeReplyObject(r);
    if (!ok) break;
    ++acked;
  }
  return acked;
}

// Whether Redis has written its whole AOF buffer (INFO persistence: aof_buffer_length:0),
// waiting up to 5 s: under everysec a write waits while a background fsync runs (up to 2 s),
// and a kill -9 loses what waits, a disk fault or not.
bool aof_buffer_written(redisContext* c) {
  for (int i = 0; i < 500; ++i) {
    auto* r = static_cast<redisReply*>(redisCommand(c, "INFO persistence"));
    const bool written =
        r != nullptr && r->type == REDIS_REPLY_STRING &&
        std::string_view(r->str, r->len).find("aof_buffer_length:0\r\n") != std::string_view::npos;
    if (r != nullptr) freeReplyObject(r);
    if (written) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

// Connects, has 20 XADDs acknowledged and written to the AOF, fails the disk with EIO and
// XADDs until one is refused (at most 20): how many of those were acknowledged; -1 if the
// server did not answer, refused one of the first 20 (its text in `refusal`) or never wrote
// them.
int acked_while_failing(RedisOnLazyFs& redis, std::string& refusal) {
  if (!redis.connect()) {
    refusal = "no connection";
    return -1;
  }
  if (xadds(redis.c, 20, refusal) != 20) return -1;
  if (!aof_buffer_written(redis.c)) {
    refusal = "the first 20 never left the AOF buffer";
    return -1;
  }
  redis.disk.fail(EIO);
  return xadds(redis.c, 20, refusal);
}

// appendfsync always: Redis exits at its first failed AOF write ("Can't recover from AOF
// write error when the AOF fsync policy is 'always'"), before it answers the write that
// failed; restarted on a healed disk it has everything it acknowledged, and not that write.
TEST(RedisDiskError, AlwaysExitsAtAFailedAofWriteAndKeepsWhatItAcknowledged) {
  SKIP_WITHOUT_FUSE();
  RedisOnLazyFs redis(RedisServerOptions::Fsync::kAlways);
  auto& [disk, server, c] = redis;
  std::string refusal;
  const int during = acked_while_failing(redis, refusal);
  ASSERT_NE(during, -1) << refusal;
  EXPECT_EQ(during, 0);
  EXPECT_EQ(refusal, "no reply");
  redis.disconnect();
  for (int i = 0; i < 250 && server.alive(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_FALSE(server.alive()) << "Redis served on after a failed AOF write under always";
  disk.heal();
  server.restart();
  ASSERT_TRUE(redis.connect());
  EXPECT_EQ(redis_int(c, "XLEN %s", "k"), 20);
  redis.disconnect();
}

// appendfsync everysec: the write whose AOF write fails is still acknowledged (the AOF is
// written after the command ran, its reply already queued; more than one if the write was
// postponed behind a background fsync), and every later write is
// refused with MISCONF until a retry of the AOF write succeeds on the healed disk; the
// acknowledged write was kept in the AOF buffer (it is there when Redis serves again).
TEST(RedisDiskError, EverysecAcknowledgesTheFailedWriteThenRefusesWithMisconfUntilHealed) {
  SKIP_WITHOUT_FUSE();
  RedisOnLazyFs redis(RedisServerOptions::Fsync::kEverySec);
  auto& [disk, server, c] = redis;
  std::string refusal;
  const int during = acked_while_failing(redis, refusal);
  ASSERT_NE(during, -1) << refusal;
  EXPECT_GE(during, 1) << "the write whose AOF write failed was refused";
  EXPECT_LT(during, 20) << "nothing refused while every write failed";
  EXPECT_EQ(refusal.rfind("MISCONF", 0), 0U) << refusal;
  disk.heal();
  int taken = 0;  // Redis retries the AOF write once a second (serverCron)
  for (int i = 0; i < 100 && taken == 0; ++i) {
    taken = xadds(c, 5, refusal);
    if (taken == 0) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_EQ(taken, 5) << refusal;
  EXPECT_EQ(redis_int(c, "XLEN %s", "k"), 20 + during + taken);
  redis.disconnect();
  // Not claimed yet: a kill -9 right here kept 22 of the 26 in 1 run of 8 (every other run
  // all 26), with no unsynced byte on the disk, so the missing ones were never written. The
  // likely cause is everysec postponing its write behind a background fsync (up to 2 s),
  // which a kill -9 loses; to be pinned down before it is a finding.
}

// appendfsync everysec: a write acknowledged while its AOF write failed lives only in
// Redis's AOF buffer until a retry succeeds (once a second, on a healed disk); a kill -9
// before that loses it, with no power cut (nothing unsynced is dropped): what a fault run's
// failing disk finds as `lost` (CONFORMANCE.md, "A failing disk in the fault runs").
TEST(RedisDiskError, EverysecLosesAWriteAcknowledgedWhileItsAofWriteFailedToAKill9) {
  SKIP_WITHOUT_FUSE();
  RedisOnLazyFs redis(RedisServerOptions::Fsync::kEverySec);
  auto& [disk, server, c] = redis;
  std::string refusal;
  const int during = acked_while_failing(redis, refusal);
  ASSERT_GE(during, 1) << "nothing acknowledged while the disk failed: " << refusal;
  redis.disconnect();
  server.kill9();  // the disk still failing: no retry of the AOF write could succeed
  disk.heal();
  server.restart();
  ASSERT_TRUE(redis.connect());
  EXPECT_EQ(redis_int(c, "XLEN %s", "k"), 20)
      << during << " write(s) acknowledged while the AOF write failed";
}

}  // namespace
}  // namespace conformance
