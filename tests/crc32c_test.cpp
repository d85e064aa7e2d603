// broker::crc32c against the definition: a bit-at-a-time CRC-32C, over lengths that reach
// every path of the fast one (three-way blocks of 8 KiB and 256 B, words, bytes).
#include <broker/file_system.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <string_view>

namespace {

std::uint32_t reference_crc32c(std::string_view bytes) {
  std::uint32_t crc = 0xFFFFFFFF;
  for (const char c : bytes) {
    crc ^= static_cast<unsigned char>(c);
    for (int i = 0; i < 8; ++i) crc = (crc >> 1) ^ ((crc & 1) ? 0x82F63B78 : 0);
  }
  return ~crc;
}

std::string random_bytes(std::mt19937_64& rng, std::size_t n) {
  std::string s(n, '\0');
  for (char& c : s) c = static_cast<char>(rng());
  return s;
}

TEST(Crc32c, MatchesTheCheckValueOfTheStandard) {
  EXPECT_EQ(broker::crc32c("123456789"), 0xE3069283u);
  EXPECT_EQ(broker::crc32c(""), 0u);
}

TEST(Crc32c, MatchesTheBitwiseDefinitionAtEveryLength) {
  std::mt19937_64 rng(7);
  for (const std::size_t n :
       {1u,   7u,   8u,    9u,    95u,   96u,    97u,    200u,   255u,   256u,   767u,
        768u, 769u, 1024u, 1036u, 8191u, 24575u, 24576u, 24577u, 30000u, 100003u}) {
    const std::string bytes = random_bytes(rng, n);
    EXPECT_EQ(broker::crc32c(bytes), reference_crc32c(bytes)) << "length " << n;
    // Any start address: the words are loaded unaligned.
    const std::string_view shifted = std::string_view(bytes).substr(1);
    EXPECT_EQ(broker::crc32c(shifted), reference_crc32c(shifted)) << "length " << n - 1;
  }
}

TEST(Crc32c, ContinuingFromAPrefixEqualsTheWhole) {
  std::mt19937_64 rng(11);
  const std::string bytes = random_bytes(rng, 50000);
  for (const std::size_t cut : {0u, 1u, 300u, 8192u, 24576u, 49999u, 50000u}) {
    const std::string_view all(bytes);
    EXPECT_EQ(broker::crc32c(all.substr(cut), broker::crc32c(all.substr(0, cut))),
              broker::crc32c(all))
        << "cut at " << cut;
  }
}

}  // namespace
