// The one byte decoder of the fuzz targets: arbitrary bytes -> an operation script.
//
// Format: every choice takes exactly one byte, consumed from the END of the input
// (FuzzedDataProvider's integral order), so libFuzzer's mutations map to small script
// changes and an input that runs out ends the script cleanly. Per op:
//   kind then its fields, each one byte. The kind byte is an escape or else (mod 16) one of
//   the first 16 kinds in oplang::Op order. Escapes, added after the corpora were committed
//   and chosen among the byte values no committed input reads as a kind byte (so every
//   committed input still decodes to the same ops; ByteDecoderTest checks that none of them
//   decodes to an escaped op): 200, 201 poll_wait (topic, sub, member, max 0..3, timeout
//   0/1 ms); 202 wait_idle, 203 wait_delivered (timeout 0/1 ms); 204, 205 an idempotent
//   subscribe (subscribe's fields); 206 subscriptions (topic), 207 topics, 209 end_offset
//   (topic), 210 oldest_offset (topic), 211 restart, 212 crash (a seed byte below 224; from 224 on,
//   a disk fault instead: call 0..6 as oplang::IoCall, nth 1..4, error eio/enospc, R33), 213 term
//   (ack's fields), 214 a subscribe_pull with max_in_flight (its fields, then 0..3), 215 a
//   subscribe and 216 an idempotent one whose script verdicts are 0..4 (4: term), 217 a nack with a
//   delay (ack's fields, then an advance-sized delay), 218 a subscribe_pull with 1-3 back-off
//   waits (214's fields, then the count and the waits), 219 redrive, 221
//   purge_dead_letters, 222 pause, 223 resume, 224 lag (topic, sub), 227 redrive_to (topic,
//   sub, topic), 225 offset_for_time (topic, time 0..255 ms), 226 seek_to_time (topic, sub,
//   time), 230 a subscribe with 1-3 back-off waits (215's fields, idempotent 0/1, the
//   count and the waits), 231 a partitioned create_topic (topic, 0..4 messages, 2..4
//   partitions, partitioner 0/1), 232 publish_to (topic, partition 0..3, payload, key),
//   233 the next op on partition 0..2 of its topic ("t0" becomes "t0-1"), 234 a publish with
//   a key from a pool that spreads over partitions, 235 partitions (topic), 236 an ordered
//   subscribe_pull (214's fields, then 0..3 back-off waits) (R29, R31), 237 join_group
//   (topic, group from the sub pool, member, assignor 0..3, then subscribe_pull's options
//   and ordered 0/1), 238 leave_group, 241 membership (topic, group, member), 239
//   poll_group (topic, group, member, max 0..3), 240 group_stats (topic, group), 243 an
//   answer with a group generation (0 ack, 1 nack, 2 term, 3 extend, 4 delayed nack; the
//   generation 0..255; then its fields) (R32), 249 a publish through a broker::Publisher
//   (234's fields; R2), 250 resubscribe (topic, sub, group, a script whose verdicts are
//   0..4, idempotent 0/1; R20)
//   (208, 220, 228, 229, 242 and 244-248 are not escapes: a
//   committed input reads it as a kind byte). A script with restart, crash or
//   fault runs on a durable broker (harness::runner_for). The fields:
//   topic/sub/member/group = index into a pool of 3/4/3/2 names (so names collide),
//   payload = "m<byte>", offsets and counts = the byte (small ranges), headers/filters =
//   index into a few header sets, retention = 0..4 messages or 0..15 bytes,
//   ack timeout = 10/20/30 ms, advance = 0/1/5/10/20/30 ms, script = 0..4 steps of
//   (verdict 0..3, effect 0..5 with its own fields).
// Every op and every handler behaviour of the first 16 kinds and the escaped ones is
// reachable; yield and the stall effect are not, and encode() writes
// nothing for them (a stall as no effect): they matter in concurrent programs
// (properties/fiber, whose schedule_fuzzer has its own format). The format is frozen
// (committed corpora must keep decoding), so stats/dead_letters/seek names come from the
// subscription pool only: calls by a group's name (R10) are covered by properties/ instead.
// encode() is the inverse for scripts that use only pool names, so examples/ become seed corpora.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "oplang/ops.h"

namespace fuzzing {

/// Decodes up to max_ops operations from data.
oplang::Script decode_ops(const std::uint8_t* data, std::size_t size, std::size_t max_ops = 64);

/// Bytes that decode_ops turns back into `script`, after renaming every topic, subscription,
/// member, group and payload to pool names in first-seen order (the renamed script is
/// what decode_ops returns).
std::vector<std::uint8_t> encode_ops(const oplang::Script& script);

}  // namespace fuzzing
