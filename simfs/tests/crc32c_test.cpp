// CRC-32C: published check values, continuation, and agreement with a bitwise reference.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>

#include "broker/file_system.h"

namespace broker {
namespace {

// The definition, one bit at a time: too slow to ship, too simple to get wrong.
std::uint32_t reference_crc32c(const std::string& bytes) {
  std::uint32_t crc = ~0u;
  for (const char c : bytes) {
    crc ^= static_cast<unsigned char>(c);
    for (int i = 0; i < 8; ++i) crc = (crc >> 1) ^ ((crc & 1) ? 0x82F63B78u : 0u);
  }
  return ~crc;
}

// GoogleTest's seed (printed by SCOPED_TRACE), so a failure replays with --gtest_random_seed.
std::mt19937_64 seeded_rng() {
  const int seed = testing::UnitTest::GetInstance()->random_seed();
  return std::mt19937_64(static_cast<std::uint64_t>(seed));
}

std::string random_bytes(std::mt19937_64& rng, std::size_t n) {
  std::string bytes(n, '\0');
  for (auto& b : bytes) b = static_cast<char>(rng());
  return bytes;
}

TEST(Crc32cTest, MatchesPublishedCheckValues) {
  EXPECT_EQ(crc32c("123456789"), 0xE3069283u);
  EXPECT_EQ(crc32c(""), 0u);
  EXPECT_EQ(crc32c(std::string(32, '\0')), 0x8A9136AAu);
  EXPECT_EQ(crc32c(std::string(32, '\xFF')), 0x62A8AB43u);  // RFC 3720, B.4
}

TEST(Crc32cTest, ContinuingFromAPrefixEqualsTheWhole) {
  SCOPED_TRACE("seed " + std::to_string(testing::UnitTest::GetInstance()->random_seed()));
  auto rng = seeded_rng();
  for (int round = 0; round < 200; ++round) {
    const std::string bytes = random_bytes(rng, rng() % 300);
    const std::size_t split = rng() % (bytes.size() + 1);
    const std::string_view all = bytes;
    EXPECT_EQ(crc32c(all.substr(split), crc32c(all.substr(0, split))), crc32c(all))
        << "size " << bytes.size() << " split " << split;
  }
}

// Whichever path this CPU takes (SSE4.2 or the table), it must agree with the definition
// at every length and alignment: the 8-byte loop, the byte tail, and offsets into a buffer.
TEST(Crc32cTest, AgreesWithBitwiseReference) {
  SCOPED_TRACE("seed " + std::to_string(testing::UnitTest::GetInstance()->random_seed()));
  auto rng = seeded_rng();
  for (std::size_t n = 0; n < 100; ++n) {
    const std::string bytes = random_bytes(rng, n + 8);
    for (std::size_t offset = 0; offset < 8; ++offset) {
      const std::string part = bytes.substr(offset, n);
      ASSERT_EQ(crc32c(std::string_view(bytes).substr(offset, n)), reference_crc32c(part))
          << "size " << n << " offset " << offset;
    }
  }
  const std::string big = random_bytes(rng, 100000);
  EXPECT_EQ(crc32c(big), reference_crc32c(big));
}

}  // namespace
}  // namespace broker
