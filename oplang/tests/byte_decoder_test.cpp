// The fuzz targets' byte decoder: its format is frozen for the committed corpora, so the ops
// added later (poll_wait, wait_idle, wait_delivered, idempotent subscribes, subscriptions,
// topics, end_offset, oldest_offset) sit behind kind
// bytes no committed input reads as a kind byte; encode_ops is decode_ops' inverse for them.
#include "oplang/byte_decoder.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "oplang/text.h"

namespace fuzzing {
namespace {

bool escaped(const oplang::Op& op) {
  if (const auto* s = std::get_if<oplang::Subscribe>(&op)) {
    return s->saved || s->idempotent || !s->backoff.empty() ||
           std::any_of(s->script.begin(), s->script.end(), [](const auto& step) {
             return step.verdict == oplang::Verdict::kTerminate;
           });
  }
  if (const auto* p = std::get_if<oplang::SubscribePull>(&op)) {
    return p->max_in_flight != 0 || !p->backoff.empty();
  }
  if (const auto* n = std::get_if<oplang::Nack>(&op)) return n->delay.has_value() || n->generation;
  if (const auto* a = std::get_if<oplang::Ack>(&op)) return a->generation != 0;
  if (const auto* e = std::get_if<oplang::Extend>(&op)) return e->generation != 0;
  if (const auto* p = std::get_if<oplang::Publish>(&op)) return p->via_publisher;
  return std::holds_alternative<oplang::PollWait>(op) ||
         std::holds_alternative<oplang::WaitIdle>(op) ||
         std::holds_alternative<oplang::WaitDelivered>(op) ||
         std::holds_alternative<oplang::Subscriptions>(op) ||
         std::holds_alternative<oplang::Topics>(op) ||
         std::holds_alternative<oplang::EndOffset>(op) ||
         std::holds_alternative<oplang::OldestOffset>(op) ||
         std::holds_alternative<oplang::Restart>(op) || std::holds_alternative<oplang::Crash>(op) ||
         std::holds_alternative<oplang::Fault>(op) || std::holds_alternative<oplang::Term>(op) ||
         std::holds_alternative<oplang::Redrive>(op) ||
         std::holds_alternative<oplang::JoinGroup>(op) ||
         std::holds_alternative<oplang::JoinGroupPush>(op) ||
         std::holds_alternative<oplang::LeaveGroup>(op) ||
         std::holds_alternative<oplang::PollGroup>(op) ||
         std::holds_alternative<oplang::GetMembership>(op) ||
         std::holds_alternative<oplang::GetGroupStats>(op) ||
         std::holds_alternative<oplang::RedriveTo>(op) ||
         std::holds_alternative<oplang::Purge>(op) || std::holds_alternative<oplang::Pause>(op) ||
         std::holds_alternative<oplang::Resume>(op) || std::holds_alternative<oplang::GetLag>(op) ||
         std::holds_alternative<oplang::OffsetForTime>(op) ||
         std::holds_alternative<oplang::SeekToTime>(op);
}

// A committed input that decoded to an escaped op would have read an escape byte as a kind
// byte, so it would have decoded to other ops before the escapes were added; none does, so
// every committed input decodes exactly as it did.
TEST(ByteDecoderTest, CommittedOpsInputsReadNoEscapeByte) {
  std::size_t inputs = 0;
  for (const char* dir : {"fuzz/corpus/ops", "fuzz/regressions/ops"}) {
    const std::filesystem::path root = std::filesystem::path(BROKER_SOURCE_DIR) / dir;
    ASSERT_TRUE(std::filesystem::is_directory(root)) << root;
    for (const auto& entry : std::filesystem::recursive_directory_iterator(root)) {
      if (!entry.is_regular_file()) continue;
      std::ifstream in(entry.path(), std::ios::binary);
      const std::vector<std::uint8_t> bytes((std::istreambuf_iterator<char>(in)), {});
      ++inputs;
      for (const oplang::Op& op : decode_ops(bytes.data(), bytes.size())) {
        EXPECT_FALSE(escaped(op)) << entry.path() << ": " << oplang::print(op);
      }
    }
  }
  EXPECT_GT(inputs, 100u);
}

TEST(ByteDecoderTest, EncodesAndDecodesTheEscapedOps) {
  const oplang::Script script = oplang::parse(
      "create_topic t0\n"
      "subscribe t0 s0 max=2 idempotent script=[reject,seek(t0,s0,0)]\n"
      "subscribe_pull t0 s1 timeout=10\n"
      "poll_wait t0 s1 w0 max=0 timeout=1\n"
      "poll_wait t0 s1 w1 max=3\n"
      "wait_idle\n"
      "wait_delivered timeout=1\n");
  const std::vector<std::uint8_t> bytes = encode_ops(script);
  EXPECT_EQ(oplang::print(decode_ops(bytes.data(), bytes.size())), oplang::print(script));
}

// R33: a crash's seed byte from 224 on is a disk fault of any call, nth 1..4, EIO or ENOSPC;
// R21: from 192 a crash with damage at rest (192-207 truncate, 208-223 corrupt).
TEST(ByteDecoderTest, EncodesAndDecodesDiskFaultsAndCrashes) {
  const oplang::Script script = oplang::parse(
      "create_topic t0\n"
      "fault sync\n"
      "fault open nth=4 error=enospc\n"
      "fault truncate nth=2\n"
      "fault sync_dir nth=3 error=enospc\n"
      "crash seed=191\n"
      "crash seed=200 truncate\n"
      "crash seed=223 corrupt\n"
      "restart\n");
  const std::vector<std::uint8_t> bytes = encode_ops(script);
  EXPECT_EQ(oplang::print(decode_ops(bytes.data(), bytes.size())), oplang::print(script));
}

TEST(ByteDecoderTest, EncodesAndDecodesTheConsumerFeatures) {
  const oplang::Script script = oplang::parse(
      "create_topic t0\n"
      "subscribe_pull t0 s0 timeout=10 inflight=2\n"
      "subscribe_pull t0 s1 timeout=10 backoff=[5,20]\n"
      "subscribe_pull t0 s2 timeout=20 inflight=1 backoff=[0]\n"
      "nack t0 s0 1 w0 delay=10\n"
      "subscribe t0 s1 script=[reject,term,publish(t0,m0)+term]\n"
      "subscribe t0 s2 idempotent script=[term]\n"
      "term t0 s0 3 w0\n"
      "restart\n"
      "resubscribe t0 s1 script=[reject,term]\n"
      "resubscribe t0 s3 group=g0 idempotent\n");
  const std::vector<std::uint8_t> bytes = encode_ops(script);
  EXPECT_EQ(oplang::print(decode_ops(bytes.data(), bytes.size())), oplang::print(script));
}

TEST(ByteDecoderTest, EncodesAndDecodesTheObservations) {
  const oplang::Script script = oplang::parse(
      "create_topic t0\n"
      "subscribe_pull t0 s0 timeout=10\n"
      "subscriptions t0\n"
      "subscriptions t1\n"
      "topics\n"
      "end_offset t0\n"
      "oldest_offset t1\n"
      "publish_via t0 m0\n"
      "publish_via t1 m1 key:order-1\n");
  const std::vector<std::uint8_t> bytes = encode_ops(script);
  EXPECT_EQ(oplang::print(decode_ops(bytes.data(), bytes.size())), oplang::print(script));
}

TEST(ByteDecoderTest, EncodesAndDecodesTheConsumerGroups) {
  const oplang::Script script = oplang::parse(
      "create_topic t0 partitions=2\n"
      "join_group t0 s0 w0 assignor=cooperative timeout=10 start=begin ordered\n"
      "join_group t0 s0 w1 assignor=sticky timeout=20\n"
      "poll_group t0 s0 w0 max=3\n"
      "ack t0-1 s0 2 w0 gen=2\n"
      "nack t0-0 s0 1 w1 delay=5 gen=1\n"
      "nack t0-0 s0 1 w1 gen=3\n"
      "term t0-1 s0 0 w0 gen=2\n"
      "extend t0-1 s0 0 w0 10 gen=2\n"
      "membership t0 s0 w1\n"
      "group_stats t0 s0\n"
      "leave_group t0 s0 w0\n");
  const std::vector<std::uint8_t> bytes = encode_ops(script);
  EXPECT_EQ(oplang::print(decode_ops(bytes.data(), bytes.size())), oplang::print(script));
}

TEST(ByteDecoderTest, EveryKindByteDecodes) {
  // Each kind byte alone (its fields run out, as zeros): the escapes and the 16 kinds (208
  // stays get_stats: a committed input reads it as a kind byte).
  for (int kind = 0; kind < 256; ++kind) {
    const std::uint8_t byte = static_cast<std::uint8_t>(kind);
    const oplang::Script script = decode_ops(&byte, 1);
    ASSERT_EQ(script.size(), 1u) << kind;
    // 214 and 215 alone read a bound of 0 and no script: a plain subscribe_pull / subscribe
    // (218 reads one back-off wait however short the input).
    // 243 alone reads an ack with generation 0: a plain ack.
    const bool escape = (kind >= 200 && kind <= 213 && kind != 208) ||
                        (kind >= 216 && kind <= 230 && kind != 220 && kind != 228 && kind != 229) ||
                        (kind >= 237 && kind <= 241) || kind == 249 || kind == 250;
    EXPECT_EQ(escaped(script[0]), escape) << kind;
    if (kind == 214) {
      EXPECT_TRUE(std::holds_alternative<oplang::SubscribePull>(script[0]));
    }
    if (kind == 215) {
      EXPECT_TRUE(std::holds_alternative<oplang::Subscribe>(script[0]));
    }
  }
}

}  // namespace
}  // namespace fuzzing
