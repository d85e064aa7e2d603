// CRC-32C (Castagnoli): the checksum of every stored record. SSE4.2 has an instruction for
// exactly this polynomial, so x86-64 machines use it; everything else uses slicing-by-8.
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "broker/file_system.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define BROKER_CRC32C_HW 1
#include <nmmintrin.h>
#endif

namespace broker {
namespace {

constexpr std::uint32_t kPolynomial = 0x82F63B78;  // 0x1EDC6F41 bit-reversed

// tables[0] is the byte-at-a-time table; tables[k][b] is the CRC of byte b followed by k
// zero bytes, so eight table look-ups advance the CRC by eight bytes at once.
using Tables = std::array<std::array<std::uint32_t, 256>, 8>;

constexpr Tables make_tables() {
  Tables tables{};
  for (std::uint32_t b = 0; b < 256; ++b) {
    std::uint32_t crc = b;
    for (int i = 0; i < 8; ++i) crc = (crc >> 1) ^ ((crc & 1) ? kPolynomial : 0);
    tables[0][b] = crc;
  }
  for (std::size_t k = 1; k < 8; ++k) {
    for (std::size_t b = 0; b < 256; ++b) {
      const std::uint32_t prev = tables[k - 1][b];
      tables[k][b] = (prev >> 8) ^ tables[0][prev & 0xFF];
    }
  }
  return tables;
}

constexpr Tables kTables = make_tables();

// Explicit byte order, so the table path gives the same value on big-endian machines.
std::uint32_t load_le32(const unsigned char* p) {
  return std::uint32_t{p[0]} | std::uint32_t{p[1]} << 8 | std::uint32_t{p[2]} << 16 |
         std::uint32_t{p[3]} << 24;
}

// `state` is the raw register (already inverted); the caller does the ~ on both ends.
std::uint32_t update_table(std::uint32_t state, const unsigned char* p, std::size_t n) {
  const auto& t = kTables;
  for (; n >= 8; p += 8, n -= 8) {
    const std::uint32_t lo = state ^ load_le32(p);
    const std::uint32_t hi = load_le32(p + 4);
    state = t[7][lo & 0xFF] ^ t[6][(lo >> 8) & 0xFF] ^ t[5][(lo >> 16) & 0xFF] ^ t[4][lo >> 24] ^
            t[3][hi & 0xFF] ^ t[2][(hi >> 8) & 0xFF] ^ t[1][(hi >> 16) & 0xFF] ^ t[0][hi >> 24];
  }
  for (; n > 0; ++p, --n) state = (state >> 8) ^ t[0][(state ^ *p) & 0xFF];
  return state;
}

#if defined(BROKER_CRC32C_HW)
// Compiled for SSE4.2 alone (the rest of the library stays baseline x86-64) and only called
// after the CPU said it has the instruction.
__attribute__((target("sse4.2"))) std::uint32_t update_sse42(std::uint32_t state,
                                                             const unsigned char* p,
                                                             std::size_t n) {
  std::uint64_t crc = state;
  for (; n >= 8; p += 8, n -= 8) {
    std::uint64_t word;
    std::memcpy(&word, p, sizeof word);  // x86 is little-endian and loads unaligned freely
    crc = _mm_crc32_u64(crc, word);
  }
  auto crc32 = static_cast<std::uint32_t>(crc);
  for (; n > 0; ++p, --n) crc32 = _mm_crc32_u8(crc32, *p);
  return crc32;
}

bool cpu_has_sse42() {
  // Init first: this may run from another translation unit's static initializer, before
  // the runtime has filled in the CPU model.
  __builtin_cpu_init();
  return __builtin_cpu_supports("sse4.2");
}
#endif

}  // namespace

std::uint32_t crc32c(std::string_view bytes, std::uint32_t crc) noexcept {
  const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
#if defined(BROKER_CRC32C_HW)
  static const bool hardware = cpu_has_sse42();
  if (hardware) return ~update_sse42(~crc, p, bytes.size());
#endif
  return ~update_table(~crc, p, bytes.size());
}

}  // namespace broker
