// The partitioners of partitioned topics (SPEC R29): pure functions, usable without a broker.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "broker/options.h"

namespace broker {

/// Kafka's Utils.murmur2 of the bytes: the signed 32-bit value the Java code returns.
/// Checked against Kafka's own test vectors. Never throws.
std::int32_t kafka_murmur2(std::string_view bytes) noexcept;

/// Java's String.hashCode of the key read as UTF-8, as seed 003's Java broker sees a key a
/// client sent as text: `new String(bytes, UTF_8).hashCode()`, over UTF-16 code units (a
/// code point above U+FFFF is a surrogate pair), each ill-formed sequence's maximal
/// subpart one U+FFFD (Unicode §3.9, as JDK 8 and later decode). Never throws.
std::int32_t java_string_hash(std::string_view key) noexcept;

/// The partition of a message with a non-empty key on a topic of `partitions` (>= 1)
/// partitions. kJavaHashCode takes |hash| in 64 bits, so the one hash Java's Math.abs leaves
/// negative (Integer.MIN_VALUE, e.g. "polygenelubricants") still yields a partition in
/// range where seed 003's code would return a negative index. Never throws.
std::uint32_t partition_for_key(Partitioner partitioner, std::string_view key,
                                std::uint32_t partitions) noexcept;

/// The name of partition p of a topic: "orders-2". It is a topic of its own: subscribe,
/// poll, seek, stats and end_offset take it.
std::string partition_name(std::string_view topic, std::uint32_t partition);

}  // namespace broker
