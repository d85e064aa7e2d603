// R29's partitioners, written from their definitions: Java's String.hashCode and Kafka's
// murmur2 (org.apache.kafka.common.utils.Utils). Java ints wrap around, so both run on
// uint32_t; a "signed" view is taken only where Java's sign matters.
#include <cstdint>

#include "model/model.h"

namespace model {
namespace {

// s[0]*31^(n-1) + ... + s[n-1], each byte one char (ASCII keys hash as in Java).
std::uint32_t java_hash(const std::string& s) {
  std::uint32_t h = 0;
  for (unsigned char c : s) h = h * 31 + c;
  return h;
}

std::uint32_t murmur2(const std::string& data) {
  const std::uint32_t m = 0x5bd1e995;
  const std::size_t n = data.size();
  std::uint32_t h = 0x9747b28c ^ static_cast<std::uint32_t>(n);
  auto at = [&](std::size_t i) -> std::uint32_t { return static_cast<unsigned char>(data[i]); };
  std::size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    std::uint32_t k = at(i) + (at(i + 1) << 8) + (at(i + 2) << 16) + (at(i + 3) << 24);
    k *= m;
    k ^= k >> 24;
    k *= m;
    h *= m;
    h ^= k;
  }
  const std::size_t rest = n - i;
  if (rest == 3) h ^= at(i + 2) << 16;
  if (rest >= 2) h ^= at(i + 1) << 8;
  if (rest >= 1) {
    h ^= at(i);
    h *= m;
  }
  h ^= h >> 13;
  h *= m;
  h ^= h >> 15;
  return h;
}

}  // namespace

// R29: Kafka clears the sign bit (toPositive); seed 003 takes Math.abs, here in 64 bits so
// that Integer.MIN_VALUE (whose Math.abs Java leaves negative) gives 2^31.
std::string Model::partition_name(const std::string& name, std::uint32_t p) {
  return name + "-" + std::to_string(p);
}

std::uint32_t Model::partition_of(const Topic& t, const std::string& key) {
  if (t.partitioner == Partitioner::kJavaHashCode) {
    const auto hash = static_cast<std::int64_t>(static_cast<std::int32_t>(java_hash(key)));
    return static_cast<std::uint32_t>((hash < 0 ? -hash : hash) % t.partitions);
  }
  return (murmur2(key) & 0x7fffffffU) % t.partitions;
}

}  // namespace model
