// The framing every storage file shares: a header with a format version, then records,
// each with its length and checksums (SPEC R18). Pure functions over bytes.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace broker {
class FileSystem;
}

namespace broker::storage {

inline constexpr std::string_view kSegmentMagic = "ALOSEG1\n";
inline constexpr std::string_view kJournalMagic = "ALOJRN1\n";
/// The version this build writes; a file with a higher one is refused (UnsupportedFormat).
inline constexpr std::uint32_t kFormatVersion = 1;
/// magic (8) | version (4) | base (8) | crc32c of the 20 bytes before (4)
inline constexpr std::size_t kHeaderSize = 24;
/// length (4) | crc32c of the length (4) | crc32c of the body (4) | body
inline constexpr std::size_t kFrameHeader = 12;
/// Larger lengths are damage, not records.
inline constexpr std::uint32_t kMaxBody = 1u << 30;

/// A file header for magic with its base (a segment's first offset; 0 for the journal).
std::string file_header(std::string_view magic, std::uint64_t base);

struct Header {
  enum class State { kValid, kShort, kForeign, kDamaged };
  State state = State::kShort;
  std::uint32_t version = 0;
  std::uint64_t base = 0;
};
/// Reads a header: kShort if fewer than kHeaderSize bytes, kForeign if the magic differs,
/// kDamaged if the checksum fails.
Header parse_header(std::string_view bytes, std::string_view magic);

/// One record as written: its frame header and body.
std::string frame(std::string_view body);
/// frame(body) into out (replacing what it held), reusing its memory.
void frame_into(std::string& out, std::string_view body);

/// The unit a power cut writes a mapped file back in: whole or not at all. Pages of 16 or
/// 64 KiB are whole multiples of it, so a rule over 4 KiB pieces holds for them too.
inline constexpr std::uint64_t kPageBytes = 4096;
/// What the bytes where a segment's records stop are, for the newest segment (SPEC R18):
/// kZeros if bytes holds only zeros (space extended for records not written yet: the
/// end, not damage); kUnwritten if the record at the start of bytes touches a page whose
/// last bytes are zeros reaching into the record (a power cut kept that page as it was
/// before the record was stored, or never wrote it back); kDamaged otherwise. bytes runs
/// from the record's first byte to the end of the file, `position` is that byte's place
/// in the file.
enum class Stopped { kZeros, kUnwritten, kDamaged };
Stopped classify_stop(std::string_view bytes, std::uint64_t position);

/// What scan_frames found.
struct Scan {
  enum class Stop { kEnd, kTorn, kCorrupt, kMore };
  std::vector<std::string_view> bodies;  // views into the scanned bytes
  std::vector<std::uint64_t> positions;  // byte position of each record's frame
  std::uint64_t valid_end = 0;           // byte position after the last good record
  Stop stop = Stop::kEnd;
};
/// Reads records from byte `start` to the end. A damaged record that is the last thing in
/// the file (it reaches the end, or is cut by it) is a torn write: kTorn, valid_end before
/// it. A damaged record with bytes after it is kCorrupt at valid_end: a torn write only
/// ever damages the end, so this is damage to data that was written completely. When
/// bytes are only a piece of the file (`ends_file` false: the file goes on after them), a
/// record cut by their end is kMore at valid_end: read on from there.
Scan scan_frames(std::string_view bytes, std::uint64_t start, bool ends_file = true);

/// The whole file, in one read of its size. Throws IoError.
std::string read_whole(FileSystem& fs, const std::string& path);
/// Throws CorruptLog naming the file and the byte position.
[[noreturn]] void throw_corrupt(const std::string& path, std::uint64_t pos, const std::string& why);
/// Throws UnsupportedFormat if a valid header states a version newer than this build's.
void check_version(const Header& h, const std::string& path);

}  // namespace broker::storage
