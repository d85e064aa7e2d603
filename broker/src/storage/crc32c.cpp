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
// Shifting a CRC register over n zero bytes is linear, so it is four table look-ups once
// the tables are made for that n (n a power of two: the one-byte operator squared).
struct Shift {
  std::array<std::array<std::uint32_t, 256>, 4> table{};
};

using Operator = std::array<std::uint32_t, 32>;  // column i: the image of bit i

constexpr std::uint32_t image(const Operator& op, std::uint32_t v) {
  std::uint32_t out = 0;
  for (int i = 0; v != 0; ++i, v >>= 1) {
    if (v & 1) out ^= op[i];
  }
  return out;
}

constexpr Shift make_shift(std::size_t bytes) {
  Operator op{};
  for (int i = 0; i < 32; ++i) {  // one zero byte
    const std::uint32_t bit = std::uint32_t{1} << i;
    op[i] = (bit >> 8) ^ kTables[0][bit & 0xFF];
  }
  for (std::size_t n = 1; n < bytes; n *= 2) {
    Operator squared{};
    for (int i = 0; i < 32; ++i) squared[i] = image(op, op[i]);
    op = squared;
  }
  Shift s;
  for (std::uint32_t b = 0; b < 256; ++b) {
    for (int k = 0; k < 4; ++k) s.table[k][b] = image(op, b << (8 * k));
  }
  return s;
}

// Block sizes, largest first: a record of about 1 KiB goes 3 x 256 bytes, then 3 x 32.
constexpr std::array<std::size_t, 3> kBlocks = {8192, 256, 32};
constexpr std::array<Shift, 3> kShifts = {make_shift(kBlocks[0]), make_shift(kBlocks[1]),
                                          make_shift(kBlocks[2])};

constexpr std::uint32_t shift(const Shift& s, std::uint32_t crc) {
  return s.table[0][crc & 0xFF] ^ s.table[1][(crc >> 8) & 0xFF] ^ s.table[2][(crc >> 16) & 0xFF] ^
         s.table[3][crc >> 24];
}

__attribute__((target("sse4.2"))) inline std::uint64_t word_at(const unsigned char* p) {
  std::uint64_t word;
  std::memcpy(&word, p, sizeof word);  // x86 is little-endian and loads unaligned freely
  return word;
}

// The instruction takes three cycles and starts one per cycle: three independent streams
// over three adjacent blocks keep it busy, and the shift tables join their CRCs (the
// hardware method of Mark Adler's crc32c.c). Compiled for SSE4.2 alone (the rest of the
// library stays baseline x86-64) and only called after the CPU said it has the instruction.
__attribute__((target("sse4.2"))) std::uint32_t update_sse42(std::uint32_t state,
                                                             const unsigned char* p,
                                                             std::size_t n) {
  std::uint64_t crc0 = state;
  for (std::size_t b = 0; b < kBlocks.size(); ++b) {
    const std::size_t block = kBlocks[b];
    const Shift& s = kShifts[b];
    for (; n >= 3 * block; p += 3 * block, n -= 3 * block) {
      std::uint64_t crc1 = 0;
      std::uint64_t crc2 = 0;
      for (std::size_t i = 0; i < block; i += 8) {
        crc0 = _mm_crc32_u64(crc0, word_at(p + i));
        crc1 = _mm_crc32_u64(crc1, word_at(p + block + i));
        crc2 = _mm_crc32_u64(crc2, word_at(p + 2 * block + i));
      }
      crc0 = shift(s, static_cast<std::uint32_t>(crc0)) ^ crc1;
      crc0 = shift(s, static_cast<std::uint32_t>(crc0)) ^ crc2;
    }
  }
  for (; n >= 8; p += 8, n -= 8) crc0 = _mm_crc32_u64(crc0, word_at(p));
  auto crc32 = static_cast<std::uint32_t>(crc0);
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
