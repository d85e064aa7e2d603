// R29's partitioners, written from their definitions: Java's String.hashCode and Kafka's
// murmur2 (org.apache.kafka.common.utils.Utils). Java ints wrap around, so both run on
// uint32_t; a "signed" view is taken only where Java's sign matters.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "model/model.h"

namespace model {
namespace {

// The well-formed UTF-8 byte sequences (the Unicode Standard, Table 3-7): per row, the
// range each byte must lie in.
struct Range {
  unsigned lo, hi;
};
const std::vector<std::vector<Range>> kWellFormed = {
    {{0x00, 0x7F}},
    {{0xC2, 0xDF}, {0x80, 0xBF}},
    {{0xE0, 0xE0}, {0xA0, 0xBF}, {0x80, 0xBF}},
    {{0xE1, 0xEC}, {0x80, 0xBF}, {0x80, 0xBF}},
    {{0xED, 0xED}, {0x80, 0x9F}, {0x80, 0xBF}},
    {{0xEE, 0xEF}, {0x80, 0xBF}, {0x80, 0xBF}},
    {{0xF0, 0xF0}, {0x90, 0xBF}, {0x80, 0xBF}, {0x80, 0xBF}},
    {{0xF1, 0xF3}, {0x80, 0xBF}, {0x80, 0xBF}, {0x80, 0xBF}},
    {{0xF4, 0xF4}, {0x80, 0x8F}, {0x80, 0xBF}, {0x80, 0xBF}},
};

// Java's `new String(bytes, UTF_8)`, as UTF-16 code units: a well-formed sequence is its
// code point (two surrogates above U+FFFF); where the bytes stop fitting every row, the
// bytes that fitted so far (the maximal subpart, at least one byte) are one U+FFFD.
std::vector<std::uint32_t> utf16_of(const std::string& s) {
  std::vector<std::uint32_t> units;
  std::size_t i = 0;
  while (i < s.size()) {
    std::size_t fitted = 0;  // the longest prefix of a row the bytes at i match
    const std::vector<Range>* whole = nullptr;
    for (const auto& row : kWellFormed) {
      std::size_t n = 0;
      while (n < row.size() && i + n < s.size() &&
             static_cast<unsigned char>(s[i + n]) >= row[n].lo &&
             static_cast<unsigned char>(s[i + n]) <= row[n].hi) {
        ++n;
      }
      if (n == row.size()) whole = &row;
      fitted = std::max(fitted, n);
    }
    if (whole == nullptr) {
      units.push_back(0xFFFD);
      i += std::max<std::size_t>(fitted, 1);
      continue;
    }
    const std::size_t n = whole->size();
    static const unsigned kLead[] = {0, 0x7F, 0x1F, 0x0F, 0x07};
    std::uint32_t cp = static_cast<unsigned char>(s[i]) & kLead[n];
    for (std::size_t k = 1; k < n; ++k)
      cp = cp << 6 | (static_cast<unsigned char>(s[i + k]) & 0x3F);
    if (cp > 0xFFFF) {
      units.push_back(0xD800 | ((cp - 0x10000) >> 10));
      units.push_back(0xDC00 | ((cp - 0x10000) & 0x3FF));
    } else {
      units.push_back(cp);
    }
    i += n;
  }
  return units;
}

// Java's String.hashCode: s[0]*31^(n-1) + ... + s[n-1] over its chars.
std::uint32_t java_hash(const std::string& key) {
  std::uint32_t h = 0;
  for (std::uint32_t c : utf16_of(key)) h = h * 31 + c;
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
