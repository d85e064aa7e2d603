// Raw probes: what redis-server itself does where the redis profile says it differs from the
// model, or where the adapter checks what Redis does not, through hiredis alone (no kit
// code between the test and the server). Each test is named after the switch or the
// adapter's check it shows (CONFORMANCE.md).
#include <gtest/gtest.h>
#include <hiredis/hiredis.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "conformance/profile.h"
#include "conformance/redis_server.h"

namespace conformance {
namespace {

// One connection; every command by its arguments.
class Raw {
 public:
  explicit Raw(int port) : c_(redisConnect("127.0.0.1", port)) {}
  ~Raw() { redisFree(c_); }
  Raw(const Raw&) = delete;
  Raw& operator=(const Raw&) = delete;

  /// The reply, flattened: integers and strings as text, arrays depth first, nil as "nil".
  std::vector<std::string> Run(const std::vector<std::string>& args) {
    std::vector<const char*> argv;
    std::vector<std::size_t> lens;
    for (const std::string& a : args) {
      argv.push_back(a.data());
      lens.push_back(a.size());
    }
    auto* r = static_cast<redisReply*>(
        redisCommandArgv(c_, static_cast<int>(args.size()), argv.data(), lens.data()));
    std::vector<std::string> out;
    Flatten(r, out);
    if (r != nullptr) freeReplyObject(r);
    return out;
  }

 private:
  static void Flatten(const redisReply* r, std::vector<std::string>& out) {
    if (r == nullptr) {
      out.push_back("no reply");
    } else if (r->type == REDIS_REPLY_INTEGER) {
      out.push_back(std::to_string(r->integer));
    } else if (r->type == REDIS_REPLY_NIL) {
      out.push_back("nil");
    } else if (r->type == REDIS_REPLY_ARRAY) {
      for (std::size_t i = 0; i < r->elements; ++i) Flatten(r->element[i], out);
    } else {
      out.push_back(std::string(r->str, r->len));
    }
  }
  redisContext* c_;
};

class RedisRawProbe : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { server_ = new RedisServer(); }
  static void TearDownTestSuite() {
    delete server_;
    server_ = nullptr;
  }
  void SetUp() override {
    raw_ = std::make_unique<Raw>(server_->port());
    raw_->Run({"FLUSHALL"});
  }
  // A stream s with entries 1-1 .. n-1 and a group g from the start.
  void Stream(int n) {
    for (int i = 1; i <= n; ++i) raw_->Run({"XADD", "s", std::to_string(i) + "-1", "p", "x"});
    raw_->Run({"XGROUP", "CREATE", "s", "g", "0"});
  }
  std::vector<std::string> Read(const std::string& consumer, int count = 10) {
    return raw_->Run({"XREADGROUP", "GROUP", "g", consumer, "COUNT", std::to_string(count),
                      "STREAMS", "s", ">"});
  }
  // XINFO GROUPS's lag of group `group` of s ("none" if there is no such field).
  std::string Lag(const std::string& group) {
    const std::vector<std::string> g = raw_->Run({"XINFO", "GROUPS", "s"});
    for (std::size_t i = 0; i + 1 < g.size(); i += 2) {
      if (g[i] != "name" || g[i + 1] != group) continue;
      for (std::size_t j = i; j + 1 < g.size(); j += 2) {
        if (g[j] == "lag") return g[j + 1];
      }
    }
    return "none";
  }
  // The pending list: per entry its id, consumer, idle ms and delivery count, flattened.
  std::vector<std::string> Pending() { return raw_->Run({"XPENDING", "s", "g", "-", "+", "10"}); }

  static RedisServer* server_;
  std::unique_ptr<Raw> raw_;
};
RedisServer* RedisRawProbe::server_ = nullptr;

// no_server_deadline: nothing happens to a pending entry when its idle time passes any
// value: it stays with its consumer, delivered once, until a claim (XAUTOCLAIM) with that
// min-idle takes it.
TEST_F(RedisRawProbe, NoServerDeadline) {
  ASSERT_TRUE(redis_profile().has(Switch::kNoServerDeadline));
  Stream(1);
  ASSERT_EQ(Read("c1").size(), 4u);  // s, 1-1, p, x
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  const std::vector<std::string> pending = Pending();
  ASSERT_EQ(pending.size(), 4u);
  EXPECT_EQ(pending[0], "1-1");
  EXPECT_EQ(pending[1], "c1");
  EXPECT_EQ(pending[3], "1");
  const std::vector<std::string> claimed =
      raw_->Run({"XAUTOCLAIM", "s", "g", "c2", "200", "0-0", "JUSTID"});
  ASSERT_GE(claimed.size(), 2u);
  EXPECT_EQ(claimed[1], "1-1");
  EXPECT_EQ(Pending()[1], "c2");
}

// trimmed_held_keeps_only_its_offset: MAXLEN trims a pending entry's body and leaves its id
// in the pending list; XACK of it still answers 1; the next XAUTOCLAIM drops it (among its
// deleted ids), idle or not.
TEST_F(RedisRawProbe, TrimmedHeldKeepsOnlyItsOffset) {
  ASSERT_TRUE(redis_profile().has(Switch::kTrimmedHeldKeepsOnlyItsOffset));
  Stream(2);
  ASSERT_FALSE(Read("c1", 1).empty());                             // 1-1 pending
  raw_->Run({"XADD", "s", "MAXLEN", "1", "3-1", "p", "y"});        // trims 1-1 and 2-1
  EXPECT_EQ(raw_->Run({"XRANGE", "s", "1-1", "1-1"}).size(), 0u);  // its body is gone
  EXPECT_EQ(Pending()[0], "1-1");                                  // its id is not
  const std::vector<std::string> claimed =
      raw_->Run({"XAUTOCLAIM", "s", "g", "c2", "1000000", "0-0", "JUSTID"});
  ASSERT_EQ(claimed.size(), 2u);  // next cursor, deleted id: nothing claimed at that min-idle
  EXPECT_EQ(claimed[1], "1-1");
  EXPECT_TRUE(Pending().empty());
  EXPECT_EQ(raw_->Run({"XACK", "s", "g", "1-1"}), std::vector<std::string>{"0"});
}

// The adapter's check on who settles (R11): XACK names no consumer, so any client of the
// group settles any pending entry, whoever it was delivered to.
TEST_F(RedisRawProbe, XackSettlesForAnyConsumer) {
  Stream(1);
  ASSERT_FALSE(Read("c1").empty());
  EXPECT_EQ(raw_->Run({"XACK", "s", "g", "1-1"}), std::vector<std::string>{"1"});
  EXPECT_TRUE(Pending().empty());
}

// answers_name_no_reason: XACK answers how many entries it removed from the pending list:
// 0 alike for an entry acked already and one never read (and one past the stream's end).
TEST_F(RedisRawProbe, AnswersNameNoReason) {
  ASSERT_TRUE(redis_profile().has(Switch::kAnswersNameNoReason));
  Stream(2);
  ASSERT_FALSE(Read("c1", 1).empty());
  EXPECT_EQ(raw_->Run({"XACK", "s", "g", "1-1"}), std::vector<std::string>{"1"});
  EXPECT_EQ(raw_->Run({"XACK", "s", "g", "1-1"}), std::vector<std::string>{"0"});  // settled
  EXPECT_EQ(raw_->Run({"XACK", "s", "g", "2-1"}), std::vector<std::string>{"0"});  // never read
  EXPECT_EQ(raw_->Run({"XACK", "s", "g", "9-1"}), std::vector<std::string>{"0"});  // no entry
}

// seek_moves_only_the_cursor: XGROUP SETID moves the group's last-delivered id back and
// keeps the pending list: an entry still pending is pending once, delivered again by the
// next read to whoever reads, and its delivery count starts over at 1; an entry acked
// before the seek is delivered anew.
TEST_F(RedisRawProbe, SeekMovesOnlyTheCursor) {
  ASSERT_TRUE(redis_profile().has(Switch::kSeekMovesOnlyTheCursor));
  Stream(2);
  ASSERT_EQ(Read("c1").size(), 7u);  // s, 1-1, p, x, 2-1, p, x
  raw_->Run({"XACK", "s", "g", "2-1"});
  EXPECT_EQ(raw_->Run({"XGROUP", "SETID", "s", "g", "0"}), std::vector<std::string>{"OK"});
  const std::vector<std::string> pending = Pending();
  ASSERT_EQ(pending.size(), 4u);  // 1-1 still pending with c1
  EXPECT_EQ(pending[0], "1-1");
  const std::vector<std::string> again = Read("c2");
  ASSERT_EQ(again.size(), 7u);  // both entries again
  const std::vector<std::string> after = Pending();
  ASSERT_EQ(after.size(), 8u);
  EXPECT_EQ(after[1], "c2");
  EXPECT_EQ(after[3], "1");  // 1-1: delivered twice, counted once
  EXPECT_EQ(after[7], "1");  // 2-1: acked before the seek, delivered anew
}

// lag_counts_trimmed: XINFO GROUPS's lag is entries added less the group's read counter.
// Before the group's first read the counter is unknown and the server counts the entries it
// keeps; from the first read on the counter grows by one a read, so entries MAXLEN trimmed
// before the group read them are counted for good. A group that read 1 of 7 entries, when
// MAXLEN 3 kept 5..7, is told 6 wait, then 5 with 2 left after its next read. A SETID with
// ENTRIESREAD sets the counter again.
TEST_F(RedisRawProbe, LagCountsTrimmed) {
  ASSERT_TRUE(redis_profile().has(Switch::kLagCountsTrimmed));
  raw_->Run({"XADD", "s", "1-1", "p", "x"});
  raw_->Run({"XGROUP", "CREATE", "s", "g", "0"});
  raw_->Run({"XGROUP", "CREATE", "s", "h", "0"});  // never reads
  ASSERT_EQ(Read("c1", 1).size(), 4u);             // s, 1-1, p, x
  raw_->Run({"XACK", "s", "g", "1-1"});
  for (int i = 2; i <= 7; ++i) {
    raw_->Run({"XADD", "s", "MAXLEN", "3", std::to_string(i) + "-1", "p", "x"});
  }
  ASSERT_EQ(raw_->Run({"XLEN", "s"}), std::vector<std::string>{"3"});  // 5-1, 6-1, 7-1
  EXPECT_EQ(Lag("h"), "3");             // unknown counter: the kept entries
  EXPECT_EQ(Lag("g"), "6");             // 2..7: 3 trimmed, 3 kept
  ASSERT_EQ(Read("c1", 1).size(), 4u);  // 5-1
  EXPECT_EQ(Lag("g"), "5");             // 6-1 and 7-1 wait; 2..4 still counted
  raw_->Run({"XGROUP", "SETID", "s", "g", "5-1", "ENTRIESREAD", "5"});
  EXPECT_EQ(Lag("g"), "2");  // counted again from the seek
}

// lag_counts_trimmed: an entry returned (claimed idle) while kept stays in the pending list
// after MAXLEN trims it, until an XAUTOCLAIM drops it; an XCLAIM of an entry already trimmed
// drops it at once.
TEST_F(RedisRawProbe, LagCountsTrimmedReturnedUntilTheNextClaim) {
  ASSERT_TRUE(redis_profile().has(Switch::kLagCountsTrimmed));
  Stream(2);
  ASSERT_EQ(Read("c1", 2).size(), 7u);  // 1-1 and 2-1 held by c1
  raw_->Run({"XCLAIM", "s", "g", "c1", "0", "1-1", "IDLE", "100000", "JUSTID"});  // returned
  raw_->Run({"XADD", "s", "MAXLEN", "1", "3-1", "p", "x"});  // trims 1-1 and 2-1
  EXPECT_EQ(Pending().size(), 8u);                           // both still pending
  raw_->Run({"XCLAIM", "s", "g", "c1", "0", "2-1", "IDLE", "100000", "JUSTID"});
  EXPECT_EQ(Pending().size(), 4u);  // the claim of the trimmed 2-1 dropped it; 1-1 stays
  raw_->Run({"XAUTOCLAIM", "s", "g", "c2", "0", "0", "COUNT", "10"});
  EXPECT_EQ(Pending().size(), 0u);  // the next claim drops 1-1
}

// lag_age_unknown: XINFO GROUPS reports counts and ids, no age.
TEST_F(RedisRawProbe, LagAgeUnknown) {
  ASSERT_TRUE(redis_profile().has(Switch::kLagAgeUnknown));
  Stream(1);
  const std::vector<std::string> g = raw_->Run({"XINFO", "GROUPS", "s"});
  std::vector<std::string> fields;
  for (std::size_t i = 0; i < g.size(); i += 2) fields.push_back(g[i]);
  EXPECT_EQ(fields, (std::vector<std::string>{"name", "consumers", "pending", "last-delivered-id",
                                              "entries-read", "lag"}));
}

}  // namespace
}  // namespace conformance
