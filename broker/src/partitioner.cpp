// Kafka's murmur2 and Java's String.hashCode, bit for bit (both are defined on Java's
// signed 32-bit ints with wrap-around; here on uint32_t, where wrap-around is defined).
#include "broker/partitioner.h"

namespace broker {

std::int32_t kafka_murmur2(std::string_view bytes) noexcept {
  constexpr std::uint32_t kSeed = 0x9747b28c;
  constexpr std::uint32_t kM = 0x5bd1e995;
  constexpr int kR = 24;
  const auto length = static_cast<std::uint32_t>(bytes.size());
  const auto byte = [&](std::size_t i) {
    return static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[i]));
  };
  std::uint32_t h = kSeed ^ length;
  const std::size_t whole = bytes.size() / 4 * 4;
  for (std::size_t i = 0; i < whole; i += 4) {
    std::uint32_t k = byte(i) | byte(i + 1) << 8 | byte(i + 2) << 16 | byte(i + 3) << 24;
    k *= kM;
    k ^= k >> kR;
    k *= kM;
    h *= kM;
    h ^= k;
  }
  switch (bytes.size() % 4) {
    case 3:
      h ^= byte(whole + 2) << 16;
      [[fallthrough]];
    case 2:
      h ^= byte(whole + 1) << 8;
      [[fallthrough]];
    case 1:
      h ^= byte(whole);
      h *= kM;
  }
  h ^= h >> 13;
  h *= kM;
  h ^= h >> 15;
  return static_cast<std::int32_t>(h);
}

namespace {

// The next code point of UTF-8 `s` from `i` (advanced past it): U+FFFD for an ill-formed
// sequence's maximal subpart (Unicode Table 3-7: the second byte's range depends on the
// first; every later one is 80..BF).
std::uint32_t next_code_point(std::string_view s, std::size_t& i) noexcept {
  const auto at = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned b = at(i++);
  if (b < 0x80) return b;
  int more = 0;
  unsigned lo = 0x80, hi = 0xBF;
  std::uint32_t cp = 0;
  if (b >= 0xC2 && b <= 0xDF) {
    more = 1, cp = b & 0x1F;
  } else if (b >= 0xE0 && b <= 0xEF) {
    more = 2, cp = b & 0x0F;
    if (b == 0xE0) lo = 0xA0;
    if (b == 0xED) hi = 0x9F;
  } else if (b >= 0xF0 && b <= 0xF4) {
    more = 3, cp = b & 0x07;
    if (b == 0xF0) lo = 0x90;
    if (b == 0xF4) hi = 0x8F;
  } else {
    return 0xFFFD;
  }
  for (int k = 0; k < more; ++k) {
    if (i >= s.size() || at(i) < lo || at(i) > hi) return 0xFFFD;  // the subpart so far
    cp = cp << 6 | (at(i++) & 0x3F);
    lo = 0x80, hi = 0xBF;
  }
  return cp;
}

}  // namespace

std::int32_t java_string_hash(std::string_view key) noexcept {
  std::uint32_t h = 0;
  for (std::size_t i = 0; i < key.size();) {
    const std::uint32_t cp = next_code_point(key, i);
    if (cp < 0x10000) {
      h = 31 * h + cp;
    } else {  // a surrogate pair: two chars
      h = 31 * h + (0xD800 + ((cp - 0x10000) >> 10));
      h = 31 * h + (0xDC00 + ((cp - 0x10000) & 0x3FF));
    }
  }
  return static_cast<std::int32_t>(h);
}

std::uint32_t partition_for_key(Partitioner partitioner, std::string_view key,
                                std::uint32_t partitions) noexcept {
  if (partitions <= 1) return 0;
  if (partitioner == Partitioner::kJavaHashCode) {
    const std::int64_t hash = java_string_hash(key);
    const std::uint64_t magnitude = static_cast<std::uint64_t>(hash < 0 ? -hash : hash);
    return static_cast<std::uint32_t>(magnitude % partitions);
  }
  // Kafka's toPositive: the sign bit cleared (not abs: -1 becomes 0x7fffffff).
  const std::uint32_t positive = static_cast<std::uint32_t>(kafka_murmur2(key)) & 0x7fffffffU;
  return positive % partitions;
}

std::string partition_name(std::string_view topic, std::uint32_t partition) {
  std::string out(topic);
  out += '-';
  out += std::to_string(partition);
  return out;
}

}  // namespace broker
