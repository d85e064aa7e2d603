// Bytes -> the files of a storage directory (journal, segments, strays) on a SimFileSystem ->
// a durable Broker opened on it (recovery, SPEC R18-R21). A finding is any of:
//   * the constructor throws anything but broker::Error with code CorruptLog,
//     UnsupportedFormat, NotBrokerStorage or IoError, or a failed open changed the disk
//     (the LOCK file it creates aside);
//   * the opened broker is inconsistent: duplicate topic or subscription names; oldest >
//     end; a subscription with committed outside [oldest, cursor] or cursor > end; the
//     report's counts differ from what the broker lists; a recovered pull subscription hands
//     out offsets outside [oldest, end), out of order or with attempt < 1; a new pull
//     subscription "at beginning" does not poll exactly [oldest, end) with consecutive offsets;
//     publish does not return end_offset;
//   * after the broker is destroyed, a second open of the same disk (never in repair mode)
//     fails, cuts anything, or shows other topics, subscriptions, oldest/end offsets,
//     committed positions, dead letters or messages than the first broker left;
//   * a crash, hang, leak or UB (ASan/UBSan).
// The target prints "recovery_fuzzer: <what>" with the decoded disk and aborts.
//
// Format (FuzzedDataProvider: integral choices from the END of the input, byte chunks from
// the FRONT; a run-out input reads zeros, and zero is always the plain choice).
//   flags        bit 0-1: 0 raw, 1 base "rolled", 2 base "compacted", 3 base "crashed";
//                bit 2 repair; bit 3 publish/commit sync none; bit 4 segment_bytes 256;
//                bit 5 journal_compact_bytes 1024
//   raw:         the journal (structured header + generated records, raw bytes, or absent),
//                up to 6 segments (directory t0..t3 or odd, name from a chosen base or odd,
//                header + generated message records + optional garbage), optional strays
//                (journal.new, LOCK, a foreign file)
//   base:        a deterministic broker run on a SimFileSystem (topics, publishes, pull with
//                acks/nacks/dead letters, push and a group, a deleted topic; "crashed" dies
//                at a chosen write or sync and reboots with chosen tear options), then
//   mutations    0-12 of: flip a byte, truncate, append garbage, remove, rename a segment,
//                edit/drop/duplicate/insert a record (checksums fixed), overwrite an integer
//                field (checksums fixed), re-version or re-base a header, add a file, swap
//                two files' contents, tear the last record
//   session      which topics get a publish, how many polled messages are acked, whether a
//                topic is created
// FUZZ_SHOW=1 prints the decoded disk of every input and what the open did.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <limits>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "FuzzedDataProvider.h"
#include "broker/broker.h"
#include "broker/file_system.h"
#include "simfs/sim_file_system.h"

namespace {

using broker::Broker;
using broker::BrokerOptions;
using broker::ErrorCode;
using broker::Headers;
using broker::Millis;
using broker::Offset;
using broker::Time;
using broker::sim::SimFileSystem;

constexpr const char* kDir = "store";
constexpr std::string_view kSegMagic = "ALOSEG1\n";
constexpr std::string_view kJrnMagic = "ALOJRN1\n";
constexpr std::size_t kHeaderSize = 24;
constexpr std::size_t kFrameHeader = 12;
constexpr Time kNow = Time{Millis{1'000'000}};
// More messages than any input can describe: a sign of a wrapped or absurd offset range.
constexpr Offset kMaxMessages = 1u << 16;

// ---- the on-disk encoding (mirrors broker/src/storage/codec.h and frames.h) ----

struct Enc {
  std::string out;
  Enc& u8(std::uint8_t v) {
    out.push_back(static_cast<char>(v));
    return *this;
  }
  Enc& put(std::uint64_t v, int n) {
    for (int i = 0; i < n; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
    return *this;
  }
  Enc& u32(std::uint32_t v) { return put(v, 4); }
  Enc& u64(std::uint64_t v) { return put(v, 8); }
  Enc& str(std::string_view s) {
    u32(static_cast<std::uint32_t>(s.size()));
    out.append(s);
    return *this;
  }
};

std::uint32_t get_u32(std::string_view b, std::size_t pos) {
  std::uint32_t v = 0;
  for (int i = 0; i < 4; ++i) {
    v |= static_cast<std::uint32_t>(static_cast<unsigned char>(b[pos + i])) << (8 * i);
  }
  return v;
}

std::string file_header(std::string_view magic, std::uint32_t version, std::uint64_t base,
                        bool good_crc = true) {
  Enc e;
  e.out.append(magic);
  e.u32(version).u64(base);
  const std::uint32_t crc = broker::crc32c(e.out);
  e.u32(good_crc ? crc : crc ^ 1u);
  return e.out;
}

std::string frame(std::string_view body) {
  Enc len;
  len.u32(static_cast<std::uint32_t>(body.size()));
  Enc e;
  e.out = len.out;
  e.u32(broker::crc32c(len.out)).u32(broker::crc32c(body));
  e.out.append(body);
  return e.out;
}

/// A file as header (up to 24 bytes), the well-framed records after it, and the rest.
struct Framed {
  std::string header;
  std::vector<std::string> bodies;
  std::string tail;
};

Framed split(const std::string& bytes) {
  Framed f;
  f.header = bytes.substr(0, std::min(bytes.size(), kHeaderSize));
  std::size_t pos = f.header.size();
  while (bytes.size() - pos >= kFrameHeader) {
    const std::string_view v(bytes);
    const std::uint32_t len = get_u32(v, pos);
    if (get_u32(v, pos + 4) != broker::crc32c(v.substr(pos, 4))) break;
    if (len > bytes.size() - pos - kFrameHeader) break;
    const std::string_view body = v.substr(pos + kFrameHeader, len);
    if (get_u32(v, pos + 8) != broker::crc32c(body)) break;
    f.bodies.emplace_back(body);
    pos += kFrameHeader + len;
  }
  f.tail = bytes.substr(pos);
  return f;
}

std::string join(const Framed& f) {
  std::string out = f.header;
  for (const auto& b : f.bodies) out += frame(b);
  return out + f.tail;
}

std::string segment_name(std::uint64_t base) {
  char name[32];
  std::snprintf(name, sizeof name, "%020llu.seg", static_cast<unsigned long long>(base));
  return name;
}

// ---- choices ----

constexpr std::uint64_t kInteresting[] = {0,
                                          1,
                                          2,
                                          0x7f,
                                          0xff,
                                          0x7fffffff,
                                          0x80000000,
                                          0xffffffff,
                                          1ull << 32,
                                          1ull << 30,
                                          0x7fffffffffffffffull,
                                          0x8000000000000000ull,
                                          0xfffffffffffffffeull,
                                          0xffffffffffffffffull};

/// `plain` most of the time (and when the input runs out), else a neighbour, a small
/// number, an edge value or anything.
std::uint64_t pick(FuzzedDataProvider& in, std::uint64_t plain) {
  switch (in.ConsumeIntegralInRange<int>(0, 7)) {
    case 1:
      return plain + 1;
    case 2:
      return plain - 1;
    case 3:
      return in.ConsumeIntegralInRange<std::uint64_t>(0, 16);
    case 4:
      return kInteresting[in.ConsumeIntegralInRange<std::size_t>(0, std::size(kInteresting) - 1)];
    case 5:
      return in.ConsumeIntegral<std::uint64_t>();
    default:
      return plain;
  }
}

const std::string kTopicNames[] = {"a", "b", "c", "d", ""};
const std::string kSubNames[] = {"s0", "s1", "s2", "g", ""};
const std::string kKeys[] = {"", "k", "key-1"};

std::string name_from(FuzzedDataProvider& in, const std::string* pool, std::size_t n) {
  const std::size_t i = in.ConsumeIntegralInRange<std::size_t>(0, n);
  if (i < n) return pool[i];
  return in.ConsumeRandomLengthString(8);
}

std::string chunk(FuzzedDataProvider& in, std::size_t max) {
  const std::size_t n = in.ConsumeIntegralInRange<std::size_t>(0, max);
  return in.ConsumeBytesAsString(n);
}

Headers gen_headers(FuzzedDataProvider& in) {
  Headers h;
  const int n = in.ConsumeIntegralInRange<int>(0, 2);
  for (int i = 0; i < n; ++i) h[i == 0 ? "h" : "x"] = in.ConsumeBool() ? "1" : "0";
  return h;
}

void put_headers(Enc& e, const Headers& h) {
  e.u32(static_cast<std::uint32_t>(h.size()));
  for (const auto& [k, v] : h) e.str(k).str(v);
}

/// A segment record body (segment_log.cpp: offset, publish time, key, headers, payload).
std::string gen_message(FuzzedDataProvider& in, Offset offset) {
  Enc e;
  e.u64(pick(in, offset));
  e.u64(pick(in, 1000 + offset));
  e.str(kKeys[in.ConsumeIntegralInRange<std::size_t>(0, std::size(kKeys) - 1)]);
  put_headers(e, gen_headers(in));
  e.str(in.ConsumeBool() ? in.ConsumeRandomLengthString(24) : "m" + std::to_string(offset));
  if (in.ConsumeIntegralInRange<int>(0, 15) == 15) e.out += chunk(in, 8);  // trailing bytes
  return e.out;
}

void put_attempts_and_dead(FuzzedDataProvider& in, Enc& e, Offset position) {
  const int attempts = in.ConsumeIntegralInRange<int>(0, 2);
  e.u32(static_cast<std::uint32_t>(attempts));
  for (int i = 0; i < attempts; ++i) {
    e.u64(pick(in, position + static_cast<Offset>(i)));
    std::uint64_t count = pick(in, 1);
    e.u32(static_cast<std::uint32_t>(count));
  }
  const int dead = in.ConsumeIntegralInRange<int>(0, 1);
  e.u32(static_cast<std::uint32_t>(dead));
  for (int i = 0; i < dead; ++i) {
    e.str(gen_message(in, position));
    e.u32(static_cast<std::uint32_t>(pick(in, 5)));
    e.str("nacked");
    e.u64(pick(in, 2000));
  }
}

/// What generated journal records have named so far, so most records name what exists.
struct JournalCtx {
  std::vector<std::pair<std::string, std::uint64_t>> topics;  // name, id
  std::uint64_t next_id = 0;
};

std::string topic_of(FuzzedDataProvider& in, const JournalCtx& ctx) {
  if (!ctx.topics.empty() && !in.ConsumeBool()) {
    return ctx.topics[in.ConsumeIntegralInRange<std::size_t>(0, ctx.topics.size() - 1)].first;
  }
  return name_from(in, kTopicNames, std::size(kTopicNames));
}

/// A journal record body (saved_state.cpp's types 1-6), or raw bytes.
std::string gen_journal_record(FuzzedDataProvider& in, JournalCtx& ctx) {
  Enc e;
  switch (in.ConsumeIntegralInRange<int>(0, 7)) {
    case 0: {  // topic created
      const std::string name =
          ctx.topics.size() < 4 ? kTopicNames[ctx.topics.size()] : in.ConsumeRandomLengthString(4);
      std::uint64_t id = pick(in, ctx.next_id);
      e.u8(1).str(name).u64(id).u64(pick(in, 0)).u64(pick(in, 0));
      ctx.topics.emplace_back(name, id);
      ctx.next_id = id + 1;
      break;
    }
    case 1: {  // subscribed
      e.u8(3).str(topic_of(in, ctx)).str(name_from(in, kSubNames, std::size(kSubNames)));
      e.u8(in.ConsumeBool() ? 0 : 1).u8(in.ConsumeIntegralInRange<int>(0, 3) == 3 ? 1 : 0);
      put_headers(e, gen_headers(in));
      e.u32(static_cast<std::uint32_t>(pick(in, 5)));
      std::uint64_t ack_timeout = pick(in, 30000);
      e.u64(ack_timeout);
      e.u8(static_cast<std::uint8_t>(pick(in, 1) & 0xff));
      e.u64(pick(in, 0));
      const Offset position = pick(in, 0);
      e.u64(position);
      put_attempts_and_dead(in, e, position);
      break;
    }
    case 2: {  // commit
      e.u8(5).str(topic_of(in, ctx)).str(name_from(in, kSubNames, std::size(kSubNames)));
      const Offset position = pick(in, in.ConsumeIntegralInRange<Offset>(0, 8));
      e.u64(position);
      put_attempts_and_dead(in, e, position);
      break;
    }
    case 3:  // topic deleted
      e.u8(2).str(topic_of(in, ctx));
      break;
    case 4:  // unsubscribed
      e.u8(4).str(topic_of(in, ctx)).str(name_from(in, kSubNames, std::size(kSubNames)));
      break;
    case 5:  // next id
      e.u8(6).u64(pick(in, ctx.next_id));
      break;
    case 6:
      e.out = chunk(in, 48);
      break;
    default:
      e.u8(in.ConsumeIntegral<std::uint8_t>());
      e.out += chunk(in, 32);
  }
  return e.out;
}

/// Header (usually valid), records (usually framed and consecutive), maybe garbage.
std::string gen_segment(FuzzedDataProvider& in, Offset base) {
  std::string out;
  switch (in.ConsumeIntegralInRange<int>(0, 7)) {
    case 1:
      out = file_header(kJrnMagic, 1, base);
      break;
    case 2:
      out = file_header(kSegMagic, static_cast<std::uint32_t>(pick(in, 1)), pick(in, base),
                        !in.ConsumeBool());
      break;
    case 3:
      out = chunk(in, 30);
      break;
    default:
      out = file_header(kSegMagic, 1, base);
  }
  const int records = in.ConsumeIntegralInRange<int>(0, 6);
  for (int r = 0; r < records; ++r) {
    std::string f = frame(gen_message(in, base + static_cast<Offset>(r)));
    if (in.ConsumeIntegralInRange<int>(0, 15) == 15) {
      f[in.ConsumeIntegralInRange<std::size_t>(0, f.size() - 1)] ^= 0x20;
    }
    out += f;
  }
  if (in.ConsumeIntegralInRange<int>(0, 3) == 3) out += chunk(in, 40);
  return out;
}

// ---- disk images ----

/// A storage directory: files by path relative to it, and its (sub)directories.
struct Disk {
  std::map<std::string, std::string> files;
  std::set<std::string> dirs;
};

std::string parent_of(const std::string& path) {
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? "" : path.substr(0, slash);
}

void write_disk(SimFileSystem& fs, const Disk& disk) {
  fs.create_directories(kDir);
  for (const auto& d : disk.dirs) fs.create_directories(std::string(kDir) + "/" + d);
  for (const auto& [path, bytes] : disk.files) {
    const std::string parent = parent_of(path);
    if (!parent.empty()) fs.create_directories(std::string(kDir) + "/" + parent);
    fs.append(std::string(kDir) + "/" + path, bytes);
  }
}

void read_tree(broker::FileSystem& fs, const std::string& rel, Disk& out) {
  const std::string abs = rel.empty() ? kDir : std::string(kDir) + "/" + rel;
  for (const std::string& name : fs.list(abs)) {
    const std::string r = rel.empty() ? name : rel + "/" + name;
    const std::string a = abs + "/" + name;
    std::uint64_t size = 0;
    try {
      size = fs.size(a);
    } catch (const broker::Error&) {  // a directory
      out.dirs.insert(r);
      read_tree(fs, r, out);
      continue;
    }
    out.files[r] = fs.read(a, 0, static_cast<std::size_t>(size));
  }
}

Disk read_disk(broker::FileSystem& fs) {
  Disk d;
  read_tree(fs, "", d);
  return d;
}

std::string describe(const Disk& disk) {
  std::string out;
  for (const auto& d : disk.dirs) out += "  " + d + "/\n";
  for (const auto& [path, bytes] : disk.files) {
    out += "  " + path + " (" + std::to_string(bytes.size()) + " bytes):";
    const std::size_t shown = std::min<std::size_t>(bytes.size(), 192);
    for (std::size_t i = 0; i < shown; ++i) {
      char hex[4];
      std::snprintf(hex, sizeof hex, "%02x", static_cast<unsigned char>(bytes[i]));
      out += (i % 32 == 0 ? "\n    " : i % 4 == 0 ? " " : "") + std::string(hex);
    }
    if (shown < bytes.size()) out += " ...";
    out += "\n";
  }
  return out;
}

// ---- what the input decoded to, for reports ----

std::string g_trace;  // the decoding, for the report
Disk g_disk;          // the disk as first opened

void note(const std::string& s) { g_trace += "  " + s + "\n"; }

[[noreturn]] void finding(const std::string& what) {
  std::fprintf(stderr, "recovery_fuzzer: %s\n-- input:\n%s-- disk as opened:\n%s", what.c_str(),
               g_trace.c_str(), describe(g_disk).c_str());
  std::abort();
}

// The message is built only when the check fails (most checks run on every input).
#define REQUIRE(ok, what)     \
  do {                        \
    if (!(ok)) finding(what); \
  } while (0)

// ---- deterministic base stores, produced by a real broker ----

struct StoreConfig {
  bool repair = false;
  bool sync_none = false;
  bool small_segments = false;
  bool small_journal = false;
};

BrokerOptions options_for(const std::shared_ptr<SimFileSystem>& fs,
                          const std::shared_ptr<broker::ManualClock>& clock, const StoreConfig& c) {
  broker::StorageOptions s;
  s.directory = kDir;
  s.file_system = fs;
  s.repair = c.repair;
  if (c.sync_none) {
    s.publish_sync = broker::FsyncPolicy::none();
    s.commit_sync = broker::FsyncPolicy::none();
  }
  if (c.small_segments) s.segment_bytes = 256;
  if (c.small_journal) s.journal_compact_bytes = 1024;
  return BrokerOptions::synchronous().with_clock(clock).with_storage(s);
}

broker::PullOptions pull_options(broker::StartPosition start, int max_deliveries = 5,
                                 Headers filter = {}) {
  broker::PullOptions o;
  o.start = start;
  o.ack_timeout = Millis{1000};
  o.max_deliveries = max_deliveries;
  o.header_filter = std::move(filter);
  return o;
}

/// Topics a (pull s0, group g; 3 segments of 256 bytes), b (retention 3; push s1, pull s2
/// with a filter and one delivery), c (deleted), d.
void scenario_rolled(Broker& b, broker::ManualClock& clock) {
  broker::TopicOptions keep3;
  keep3.retention_messages = 3;
  b.create_topic("a");
  b.create_topic("b", keep3);
  b.create_topic("c");
  b.publish("c", "gone");
  b.delete_topic("c");
  b.create_topic("d");
  b.subscribe_pull("a", "s0", pull_options(broker::StartPosition::beginning()));
  int calls = 0;
  b.subscribe("b", "s1", [&calls](const broker::Delivery&) { return ++calls % 3 != 0; });
  broker::PushOptions group;
  group.group = "g";
  group.start = broker::StartPosition::beginning();
  b.subscribe(
      "a", "m1", [](const broker::Delivery&) { return true; }, group);
  b.subscribe_pull("b", "s2", pull_options(broker::StartPosition::beginning(), 1, {{"h", "1"}}));
  for (int i = 0; i < 9; ++i) {
    clock.advance(Millis{7});
    b.publish("a", "a" + std::to_string(i), {{"h", std::to_string(i % 2)}}, "k");
    if (i % 2 == 0) b.publish("b", "b" + std::to_string(i), {{"h", std::to_string(i % 4 / 2)}});
  }
  b.publish("d", "d-0");
  const Time now = clock.now();
  auto got = b.poll("a", "s0", "w", 5, now);
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (i < 3) b.ack(got[i].receipt, now);
    if (i == 3) b.nack(got[i].receipt, now);
  }
  for (const auto& r : b.poll("b", "s2", "w", 2, now)) b.nack(r.receipt, now);
  b.drain();
  b.expire(now + Millis{5000});
}

/// Topic a with pull s0 (a commit per message) and a journal compacted several times; an
/// unsubscribed s1; a deleted and re-created topic b.
void scenario_compacted(Broker& b, broker::ManualClock& clock) {
  b.create_topic("a");
  b.create_topic("b");
  b.subscribe_pull("a", "s0", pull_options(broker::StartPosition::end()));
  b.subscribe_pull("a", "s1", pull_options(broker::StartPosition::beginning()));
  b.delete_topic("b");
  b.create_topic("b");
  for (int i = 0; i < 16; ++i) {
    clock.advance(Millis{3});
    b.publish(i % 4 == 0 ? "b" : "a", "p" + std::to_string(i));
    for (const auto& r : b.poll("a", "s0", "w", 1, clock.now())) b.ack(r.receipt, clock.now());
  }
  b.unsubscribe("a", "s1");
  b.publish("a", "last");
}

StoreConfig base_config(int kind) {
  StoreConfig c;
  c.small_segments = kind != 2;
  c.small_journal = kind == 2;
  c.sync_none = kind == 3;
  return c;
}

/// Runs base scenario `kind` (1 rolled, 2 compacted, 3 rolled with sync none) on fs.
void run_scenario(int kind, const std::shared_ptr<SimFileSystem>& fs) {
  auto clock = std::make_shared<broker::ManualClock>(Time{Millis{100}});
  Broker b(options_for(fs, clock, base_config(kind)));
  if (kind == 2) {
    scenario_compacted(b, *clock);
  } else {
    scenario_rolled(b, *clock);
  }
}

const Disk& base_disk(int kind) {
  static std::map<int, Disk> cache;
  auto it = cache.find(kind);
  if (it == cache.end()) {
    auto fs = std::make_shared<SimFileSystem>();
    run_scenario(kind, fs);
    it = cache.emplace(kind, read_disk(*fs)).first;
  }
  return it->second;
}

std::uint64_t crash_points() {
  static const std::uint64_t points = [] {
    auto fs = std::make_shared<SimFileSystem>();
    run_scenario(3, fs);
    return fs->points();
  }();
  return points;
}

/// Base "crashed": the sync-none scenario dies at a chosen write or sync and reboots.
Disk crashed_disk(FuzzedDataProvider& in) {
  auto fs = std::make_shared<SimFileSystem>();
  const std::uint64_t point = in.ConsumeIntegralInRange<std::uint64_t>(0, crash_points());
  SimFileSystem::CrashOptions o;
  o.seed = in.ConsumeIntegral<std::uint8_t>();
  const std::uint8_t bits = in.ConsumeIntegral<std::uint8_t>();
  o.torn_tail = (bits & 1) == 0;
  o.garbage_tail = (bits & 2) == 0;
  o.lose_unsynced_entries = (bits & 4) == 0;
  note("crashed at point " + std::to_string(point) + " of " + std::to_string(crash_points()) +
       ", seed " + std::to_string(o.seed) + ", torn " + std::to_string(o.torn_tail) + " garbage " +
       std::to_string(o.garbage_tail) + " lose_entries " + std::to_string(o.lose_unsynced_entries));
  if (point < crash_points()) fs->crash_at(point);
  run_scenario(3, fs);
  fs->crash(o);
  return read_disk(*fs);
}

// ---- raw disks ----

std::string gen_journal(FuzzedDataProvider& in, JournalCtx& ctx) {
  std::string out;
  switch (in.ConsumeIntegralInRange<int>(0, 7)) {
    case 1:
      return chunk(in, 64);
    case 2:
      out = file_header(kJrnMagic, static_cast<std::uint32_t>(pick(in, 1)), pick(in, 0),
                        !in.ConsumeBool());
      break;
    default:
      out = file_header(kJrnMagic, 1, 0);
  }
  const int records = in.ConsumeIntegralInRange<int>(0, 10);
  for (int r = 0; r < records; ++r) {
    std::string f = frame(gen_journal_record(in, ctx));
    if (in.ConsumeIntegralInRange<int>(0, 15) == 15) {
      f[in.ConsumeIntegralInRange<std::size_t>(0, f.size() - 1)] ^= 0x01;
    }
    out += f;
  }
  if (in.ConsumeIntegralInRange<int>(0, 3) == 3) out += chunk(in, 24);
  return out;
}

std::string topic_dir_name(FuzzedDataProvider& in, const JournalCtx& ctx) {
  const int c = in.ConsumeIntegralInRange<int>(0, 7);
  if (c < 4) {
    if (!ctx.topics.empty() && c < 2) {
      const auto& t = ctx.topics[in.ConsumeIntegralInRange<std::size_t>(0, ctx.topics.size() - 1)];
      return "t" + std::to_string(t.second);
    }
    return "t" + std::to_string(c);
  }
  switch (c) {
    case 4:
      return "t" + std::to_string(ctx.next_id);
    case 5:
      return "t00";
    case 6:  // an id past 64 bits (fixed finding 2, fuzz/README.md)
      return "t18446744073709551616";
    default:
      return "t" + std::to_string(in.ConsumeIntegral<std::uint64_t>());
  }
}

std::string odd_segment_name(FuzzedDataProvider& in) {
  switch (in.ConsumeIntegralInRange<int>(0, 4)) {
    case 0:
      return "99999999999999999999.seg";  // 20 digits past 64 bits
    case 1:
      return "0000000000000000000.seg";  // 19 digits
    case 2:
      return "0000000000000000000a.seg";
    case 3:
      return "00000000000000000000.sex";
    default:
      return in.ConsumeRandomLengthString(24);
  }
}

Disk raw_disk(FuzzedDataProvider& in) {
  Disk d;
  JournalCtx ctx;
  if (in.ConsumeIntegralInRange<int>(0, 7) != 7) d.files["journal"] = gen_journal(in, ctx);
  note("journal: " + std::to_string(ctx.topics.size()) + " generated topics");
  const int segments = in.ConsumeIntegralInRange<int>(0, 6);
  std::map<std::string, Offset> next_base;  // per directory: where the next segment starts
  for (int s = 0; s < segments; ++s) {
    const std::string dir = topic_dir_name(in, ctx);
    d.dirs.insert(dir);
    Offset& next = next_base[dir];
    std::string name;
    Offset base = next;
    if (in.ConsumeIntegralInRange<int>(0, 7) == 7) {
      name = odd_segment_name(in);
    } else {
      base = pick(in, next);
      name = segment_name(base);
    }
    const std::string bytes = gen_segment(in, base);
    Framed f = split(bytes);
    next = base + f.bodies.size();
    if (name.empty() || name.find('/') != std::string::npos || name == "." || name == "..") {
      continue;
    }
    d.files[dir + "/" + name] = bytes;
  }
  const int strays = in.ConsumeIntegralInRange<int>(0, 7);
  if (strays & 1) d.files["journal.new"] = chunk(in, 32);
  if (strays & 2) d.files["LOCK"] = "";
  if (strays & 4) d.files[in.ConsumeBool() ? "README" : "t2/notes.txt"] = chunk(in, 8);
  return d;
}

// ---- mutations ----

std::string* pick_file(FuzzedDataProvider& in, Disk& d, std::string* path_out = nullptr) {
  if (d.files.empty()) return nullptr;
  auto it = d.files.begin();
  std::advance(it, in.ConsumeIntegralInRange<std::size_t>(0, d.files.size() - 1));
  if (path_out) *path_out = it->first;
  return &it->second;
}

bool is_journal(const std::string& path) { return path == "journal" || path == "journal.new"; }

void mutate(FuzzedDataProvider& in, Disk& d) {
  std::string path;
  std::string* file = pick_file(in, d, &path);
  if (!file) return;
  const int op = in.ConsumeIntegralInRange<int>(0, 13);
  std::string what = "mutation " + std::to_string(op) + " on " + path;
  switch (op) {
    case 0: {  // flip bits of one byte
      if (file->empty()) break;
      const std::size_t pos = in.ConsumeIntegralInRange<std::size_t>(0, file->size() - 1);
      const auto x = static_cast<char>(in.ConsumeIntegralInRange<int>(1, 255));
      (*file)[pos] = static_cast<char>((*file)[pos] ^ x);
      what += ": flip byte " + std::to_string(pos);
      break;
    }
    case 1: {  // truncate
      const std::size_t size = in.ConsumeIntegralInRange<std::size_t>(0, file->size());
      file->resize(size);
      what += ": truncate to " + std::to_string(size);
      break;
    }
    case 2:  // append garbage
      *file += chunk(in, 40);
      what += ": append garbage";
      break;
    case 3:  // remove
      d.files.erase(path);
      what += ": remove";
      break;
    case 4: {  // rename (a segment to another base)
      const std::string dir = parent_of(path);
      if (dir.empty()) break;
      const std::string name = path.substr(dir.size() + 1);
      Offset base = 0;
      if (name.size() == 24) base = std::strtoull(name.substr(0, 20).c_str(), nullptr, 10);
      const std::string to = dir + "/" + segment_name(pick(in, base + 1));
      std::string bytes = std::move(*file);
      d.files.erase(path);
      d.files[to] = std::move(bytes);
      what += ": rename to " + to;
      break;
    }
    case 5:    // edit a record's body byte, checksums fixed
    case 6:    // drop a record
    case 7:    // duplicate a record
    case 8:    // insert a generated record
    case 9: {  // overwrite a 4- or 8-byte field of a record with an edge value
      Framed f = split(*file);
      const std::size_t n = f.bodies.size();
      const std::size_t r = in.ConsumeIntegralInRange<std::size_t>(0, n);  // n: at the end
      if (op == 8) {
        std::string body;
        if (is_journal(path)) {
          JournalCtx ctx;
          body = gen_journal_record(in, ctx);
        } else {
          body = gen_message(in, in.ConsumeIntegralInRange<Offset>(0, 32));
        }
        f.bodies.insert(f.bodies.begin() + static_cast<std::ptrdiff_t>(r), body);
      } else if (r < n) {
        std::string& body = f.bodies[r];
        if (op == 6) {
          f.bodies.erase(f.bodies.begin() + static_cast<std::ptrdiff_t>(r));
        } else if (op == 7) {
          f.bodies.insert(f.bodies.begin() + static_cast<std::ptrdiff_t>(r), body);
        } else if (!body.empty()) {
          const std::size_t pos = in.ConsumeIntegralInRange<std::size_t>(0, body.size() - 1);
          if (op == 5) {
            body[pos] = static_cast<char>(body[pos] ^ in.ConsumeIntegralInRange<int>(1, 255));
          } else {
            const std::size_t width = in.ConsumeBool() ? 8 : 4;
            Enc e;
            e.put(pick(in, 0), static_cast<int>(width));
            body.replace(pos, std::min(width, body.size() - pos), e.out);
          }
        }
      }
      *file = join(f);
      what += ": record " + std::to_string(r) + " of " + std::to_string(n);
      break;
    }
    case 10: {  // re-version or re-base the header, checksum fixed
      if (file->size() < kHeaderSize) break;
      const std::string magic = file->substr(0, 8);
      std::uint64_t base = 0;
      for (int i = 0; i < 8; ++i) {
        base |= static_cast<std::uint64_t>(static_cast<unsigned char>((*file)[12 + i])) << (8 * i);
      }
      const auto version = static_cast<std::uint32_t>(pick(in, 2));
      base = in.ConsumeBool() ? base : pick(in, base);
      file->replace(0, kHeaderSize, file_header(magic, version, base));
      what += ": header version " + std::to_string(version) + " base " + std::to_string(base);
      break;
    }
    case 11: {  // add a generated segment next to this file, or in a new directory
      std::string dir = parent_of(path);
      if (dir.empty()) dir = "t" + std::to_string(in.ConsumeIntegralInRange<int>(0, 4));
      d.dirs.insert(dir);
      const Offset base = pick(in, in.ConsumeIntegralInRange<Offset>(0, 24));
      d.files[dir + "/" + segment_name(base)] = gen_segment(in, base);
      what += ": add segment " + dir + "/" + segment_name(base);
      break;
    }
    case 12: {  // swap two files' contents
      std::string other;
      std::string* second = pick_file(in, d, &other);
      std::swap(*file, *second);
      what += ": swap with " + other;
      break;
    }
    default: {  // truncate inside the last record (a torn write)
      Framed f = split(*file);
      if (f.bodies.empty()) break;
      const std::size_t last = frame(f.bodies.back()).size();
      f.bodies.pop_back();
      const std::size_t keep = join(f).size() - f.tail.size();
      file->resize(keep + in.ConsumeIntegralInRange<std::size_t>(0, last - 1));
      what += ": tear the last record";
    }
  }
  note(what);
}

// ---- what a broker shows ----

struct SubView {
  Offset committed = 0;
  std::vector<Offset> dead;  // offsets of the dead letters, in order
  bool operator==(const SubView&) const = default;
};

struct TopicView {
  Offset recovered_end = 0;  // end_offset right after the open
  Offset oldest = 0;
  Offset end = 0;
  std::vector<std::string> subs;
  std::map<std::string, SubView> sub_views;
};

struct Msg {
  std::string payload;
  std::string key;
  Headers headers;
  Time publish_time;
  bool operator==(const Msg&) const = default;
};

Msg msg_of(const broker::Message& m) {
  return {std::string(m.payload()), std::string(m.key()), m.headers(), m.publish_time()};
}

std::string fresh_name(const std::vector<std::string>& taken, const std::string& stem) {
  std::string name = stem;
  while (std::find(taken.begin(), taken.end(), name) != taken.end()) name += "+";
  return name;
}

bool distinct(std::vector<std::string> v) {
  std::sort(v.begin(), v.end());
  return std::adjacent_find(v.begin(), v.end()) == v.end();
}

SubView view_of(Broker& b, const std::string& t, const std::string& s) {
  SubView v;
  v.committed = b.stats(t, s).committed;
  for (const auto& dl : b.dead_letters(t, s)) {
    REQUIRE(dl.message != nullptr, "dead letter of " + t + "/" + s + " without a message");
    v.dead.push_back(dl.message->offset());
  }
  return v;
}

/// Polls a new "at beginning" subscription to the end: exactly [oldest, end), consecutive.
std::vector<broker::Received> poll_all_new(Broker& b, const std::string& t, const std::string& s,
                                           Offset oldest, Offset end,
                                           std::map<Offset, Msg>& content) {
  std::vector<broker::Received> out;
  Offset expect = oldest;
  for (;;) {
    auto got = b.poll(t, s, "fz", 64, kNow);
    if (got.empty()) break;
    for (auto& r : got) {
      REQUIRE(r.message != nullptr && r.receipt.offset == r.message->offset(),
              "poll of " + t + "/" + s + ": receipt and message disagree");
      REQUIRE(r.message->offset() == expect,
              "poll of new " + t + "/" + s + " from beginning gave " +
                  std::to_string(r.message->offset()) + ", expected " + std::to_string(expect) +
                  " (oldest " + std::to_string(oldest) + ", end " + std::to_string(end) + ")");
      REQUIRE(r.attempt == 1,
              "first poll of a new subscription with attempt " + std::to_string(r.attempt));
      const Msg m = msg_of(*r.message);
      auto [it, inserted] = content.emplace(expect, m);
      REQUIRE(inserted || it->second == m,
              "message " + t + "@" + std::to_string(expect) + " differs between two polls");
      ++expect;
      out.push_back(std::move(r));
    }
    REQUIRE(expect <= end, "poll of " + t + "/" + s + " ran past end " + std::to_string(end));
  }
  REQUIRE(expect == end, "poll of new " + t + "/" + s + " from beginning stopped at " +
                             std::to_string(expect) + ", end " + std::to_string(end));
  return out;
}

/// Checks what recovery rebuilt (session 1), works on it a little, and returns what the
/// broker shows at the end, messages included.
std::map<std::string, TopicView> first_session(
    FuzzedDataProvider& in, Broker& b, broker::ManualClock& clock, std::vector<std::string>& order,
    std::map<std::string, std::map<Offset, Msg>>& content) {
  const std::vector<std::string> topics = b.topics();
  REQUIRE(distinct(topics), "topics() lists a name twice");
  const broker::RecoveryReport& report = b.recovery();
  REQUIRE(report.topics == topics.size(),
          "recovery report counts " + std::to_string(report.topics) + " topics, broker lists " +
              std::to_string(topics.size()));
  std::uint64_t subs_total = 0;
  std::map<std::string, Offset> recovered_end;
  for (const std::string& t : topics) {
    const Offset oldest = b.oldest_offset(t);
    const Offset end = b.end_offset(t);
    recovered_end[t] = end;
    REQUIRE(oldest <= end,
            "topic " + t + ": oldest " + std::to_string(oldest) + " > end " + std::to_string(end));
    REQUIRE(end - oldest <= kMaxMessages, "topic " + t + ": " + std::to_string(end - oldest) +
                                              " messages kept (oldest " + std::to_string(oldest) +
                                              ", end " + std::to_string(end) + ")");
    const std::vector<std::string> subs = b.subscriptions(t);
    REQUIRE(distinct(subs), "subscriptions(" + t + ") lists a name twice");
    subs_total += subs.size();
    for (const std::string& s : subs) {
      const broker::SubscriptionStats st = b.stats(t, s);
      const std::string where = t + "/" + s + ": committed " + std::to_string(st.committed) +
                                ", cursor " + std::to_string(st.cursor) + ", oldest " +
                                std::to_string(oldest) + ", end " + std::to_string(end);
      REQUIRE(st.committed <= st.cursor, where + ": committed > cursor");
      REQUIRE(st.cursor <= end, where + ": cursor > end");
      REQUIRE(st.committed >= oldest, where + ": committed < oldest");
      REQUIRE(st.in_flight == 0, where + ": in flight after recovery");
      REQUIRE(st.backlog <= end - st.cursor, where + ": backlog " + std::to_string(st.backlog));
      view_of(b, t, s);
      // A recovered pull subscription hands out what follows its position, in order.
      std::vector<broker::Received> got;
      try {
        got = b.poll(t, s, "w", 16, kNow);
      } catch (const broker::Error& e) {
        REQUIRE(e.code() == ErrorCode::kWrongKind, where + ": poll threw " + e.what());
        continue;
      }
      Offset prev = st.committed;
      bool first = true;
      for (const auto& r : got) {
        REQUIRE(r.message != nullptr && r.receipt.offset == r.message->offset(),
                where + ": receipt and message disagree");
        const Offset o = r.message->offset();
        REQUIRE(o >= oldest && o < end, where + ": polled offset " + std::to_string(o));
        REQUIRE(first ? o >= prev : o > prev,
                where + ": polled " + std::to_string(o) + " after " + std::to_string(prev));
        REQUIRE(r.attempt >= 1, where + ": polled " + std::to_string(o) + " with attempt " +
                                    std::to_string(r.attempt));
        prev = o;
        first = false;
      }
      const std::size_t acks = in.ConsumeIntegralInRange<std::size_t>(0, got.size());
      for (std::size_t i = 0; i < acks; ++i) b.ack(got[i].receipt, kNow);
    }
  }
  REQUIRE(report.subscriptions == subs_total,
          "recovery report counts " + std::to_string(report.subscriptions) +
              " subscriptions, broker lists " + std::to_string(subs_total));
  b.expire(kNow);
  b.drain();

  // A new pull subscription from the beginning reads exactly [oldest, end); acks a prefix;
  // publish returns the end and the subscription gets the new message.
  const std::uint8_t publish_mask = in.ConsumeIntegral<std::uint8_t>();
  for (std::size_t i = 0; i < topics.size(); ++i) {
    const std::string& t = topics[i];
    const Offset oldest = b.oldest_offset(t);
    const Offset end = b.end_offset(t);
    const std::string sub = fresh_name(b.subscriptions(t), "~fz");
    b.subscribe_pull(t, sub, pull_options(broker::StartPosition::beginning(), 0));
    auto got = poll_all_new(b, t, sub, oldest, end, content[t]);
    const std::size_t acks = in.ConsumeIntegralInRange<std::size_t>(0, got.size());
    for (std::size_t k = 0; k < acks; ++k) {
      REQUIRE(b.ack(got[k].receipt, kNow), "ack of a fresh poll of " + t + "/" + sub + " refused");
    }
    if (i < 8 && ((publish_mask >> i) & 1) != 0) continue;  // bit set: no publish
    clock.advance(Millis{1});
    const Offset offset = b.publish(t, "fz-" + t, {{"h", "1"}}, "fz");
    REQUIRE(offset == end, "publish to " + t + " returned " + std::to_string(offset) +
                               ", end_offset was " + std::to_string(end));
    REQUIRE(b.end_offset(t) == end + 1, "end_offset after publish to " + t);
    const Offset new_oldest = b.oldest_offset(t);
    REQUIRE(new_oldest >= oldest && new_oldest <= end,
            "oldest after publish to " + t + " is " + std::to_string(new_oldest));
    content[t][offset] = Msg{"fz-" + t, "fz", {{"h", "1"}}, clock.now()};
    auto more = b.poll(t, sub, "fz", 64, kNow);
    REQUIRE(more.size() == 1 && more[0].message->offset() == offset,
            "after publish to " + t + " the new subscription polled " +
                std::to_string(more.size()) + " messages");
  }
  if (in.ConsumeBool()) {
    const std::string t = fresh_name(topics, "~new");
    b.create_topic(t);
    REQUIRE(b.publish(t, "new", {}, "") == 0, "first publish to a new topic is not offset 0");
    content[t][0] = Msg{"new", "", {}, clock.now()};
  }

  std::map<std::string, TopicView> views;
  order = b.topics();
  for (const std::string& t : order) {
    TopicView& v = views[t];
    v.recovered_end = recovered_end.count(t) ? recovered_end.at(t) : 0;
    v.oldest = b.oldest_offset(t);
    v.end = b.end_offset(t);
    v.subs = b.subscriptions(t);
    for (const std::string& s : v.subs) v.sub_views[s] = view_of(b, t, s);
    for (Offset o = v.oldest; o < v.end; ++o) {
      REQUIRE(content[t].count(o) > 0,
              "message " + t + "@" + std::to_string(o) + " was never polled");
    }
  }
  return views;
}

/// The reopened broker shows what the first one left.
void second_session(Broker& b, const std::vector<std::string>& order,
                    const std::map<std::string, TopicView>& views,
                    std::map<std::string, std::map<Offset, Msg>>& content) {
  if (!b.recovery().truncations.empty()) {
    const broker::Truncation& cut = b.recovery().truncations.front();
    finding("reopen cut " + cut.file + " at byte " + std::to_string(cut.position) + " (" +
            cut.reason + ")");
  }
  REQUIRE(b.topics() == order, "reopen lists other topics");
  for (const std::string& t : order) {
    const TopicView& v = views.at(t);
    const Offset oldest = b.oldest_offset(t);
    const Offset end = b.end_offset(t);
    REQUIRE(oldest == v.oldest && end == v.end,
            "reopen: topic " + t + " has [" + std::to_string(oldest) + ", " + std::to_string(end) +
                "), the first broker left [" + std::to_string(v.oldest) + ", " +
                std::to_string(v.end) + ")");
    REQUIRE(b.subscriptions(t) == v.subs, "reopen: topic " + t + " has other subscriptions");
    for (const std::string& s : v.subs) {
      SubView expect = v.sub_views.at(s);
      // Held messages that retention dropped count as skipped once nothing holds them.
      expect.committed = std::max(expect.committed, v.oldest);
      const SubView got = view_of(b, t, s);
      REQUIRE(got.committed == expect.committed,
              "reopen: " + t + "/" + s + " committed " + std::to_string(got.committed) +
                  ", the first broker left " + std::to_string(expect.committed) + " (end " +
                  std::to_string(end) + ")");
      REQUIRE(got.dead == expect.dead, "reopen: " + t + "/" + s + " has other dead letters");
    }
    const std::string sub = fresh_name(v.subs, "~fz-reopen");
    b.subscribe_pull(t, sub, pull_options(broker::StartPosition::beginning(), 0));
    std::map<Offset, Msg> seen;
    poll_all_new(b, t, sub, oldest, end, seen);
    for (const auto& [o, m] : seen) {
      REQUIRE(content[t].at(o) == m, "reopen: message " + t + "@" + std::to_string(o) +
                                         " differs from what the first broker held");
    }
  }
}

bool accepted_open_error(ErrorCode c) {
  return c == ErrorCode::kCorruptLog || c == ErrorCode::kUnsupportedFormat ||
         c == ErrorCode::kNotBrokerStorage || c == ErrorCode::kIoError;
}

void run(FuzzedDataProvider& in) {
  const std::uint8_t flags = in.ConsumeIntegral<std::uint8_t>();
  const int kind = flags & 3;
  StoreConfig config;
  config.repair = (flags & 4) != 0;
  config.sync_none = (flags & 8) != 0;
  config.small_segments = (flags & 16) != 0;
  config.small_journal = (flags & 32) != 0;
  static const char* const kKinds[] = {"raw", "base rolled", "base compacted", "base crashed"};
  note(std::string(kKinds[kind]) + ", repair " + std::to_string(config.repair) + ", sync none " +
       std::to_string(config.sync_none) + ", segment_bytes " +
       (config.small_segments ? "256" : "64M") + ", journal_compact_bytes " +
       (config.small_journal ? "1024" : "8M"));
  Disk disk;
  if (kind == 0) {
    disk = raw_disk(in);
  } else {
    disk = kind == 3 ? crashed_disk(in) : base_disk(kind);
    const int mutations = in.ConsumeIntegralInRange<int>(0, 12);
    for (int i = 0; i < mutations; ++i) mutate(in, disk);
  }
  g_disk = disk;
  const bool show = std::getenv("FUZZ_SHOW") != nullptr;
  if (show) {
    std::fprintf(stderr, "-- input:\n%s-- disk:\n%s", g_trace.c_str(), describe(disk).c_str());
  }

  auto fs = std::make_shared<SimFileSystem>();
  write_disk(*fs, disk);
  auto clock = std::make_shared<broker::ManualClock>(Time{Millis{500'000}});
  std::vector<std::string> order;
  std::map<std::string, TopicView> views;
  std::map<std::string, std::map<Offset, Msg>> content;
  {
    std::unique_ptr<Broker> b;
    try {
      b = std::make_unique<Broker>(options_for(fs, clock, config));
    } catch (const broker::Error& e) {
      REQUIRE(accepted_open_error(e.code()),
              std::string("open threw ") + broker::to_string(e.code()) + ": " + e.what());
      Disk after = read_disk(*fs);
      Disk before = disk;
      after.files.erase("LOCK");
      before.files.erase("LOCK");
      REQUIRE(after.files == before.files, std::string("a failed open (") + e.what() +
                                               ") changed the disk:\n" + describe(after));
      if (show)
        std::fprintf(stderr, "-- open threw %s: %s\n", broker::to_string(e.code()), e.what());
      return;
    }
    if (show) {
      std::fprintf(stderr, "-- opened: %zu topics, %zu truncations\n", b->topics().size(),
                   b->recovery().truncations.size());
    }
    try {
      views = first_session(in, *b, *clock, order, content);
    } catch (const broker::Error& e) {
      finding(std::string("after recovery a call threw ") + broker::to_string(e.code()) + ": " +
              e.what());
    }
  }
  StoreConfig again = config;
  again.repair = false;
  try {
    Broker b(options_for(fs, clock, again));
    second_session(b, order, views, content);
  } catch (const broker::Error& e) {
    finding(std::string("reopen threw ") + broker::to_string(e.code()) + ": " + e.what() +
            "\n-- disk the first broker left:\n" + describe(read_disk(*fs)));
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  g_trace.clear();
  g_disk = Disk{};
  FuzzedDataProvider in(data, size);
  try {
    run(in);
  } catch (const broker::Error& e) {
    finding(std::string("unexpected ") + broker::to_string(e.code()) + ": " + e.what());
  } catch (const std::exception& e) {
    finding(std::string("exception that is no broker::Error: ") + e.what());
  }
  return 0;
}
