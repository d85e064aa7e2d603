#include "frames.h"

#include <algorithm>

#include "broker/errors.h"
#include "broker/file_system.h"
#include "codec.h"

namespace broker::storage {

std::string file_header(std::string_view magic, std::uint64_t base) {
  Encoder e;
  e.raw(magic);
  e.u32(kFormatVersion);
  e.u64(base);
  e.u32(crc32c(e.bytes()));
  return e.take();
}

Header parse_header(std::string_view bytes, std::string_view magic) {
  Header h;
  if (bytes.size() < kHeaderSize) return h;
  if (bytes.substr(0, magic.size()) != magic) {
    h.state = Header::State::kForeign;
    return h;
  }
  Decoder d(bytes.substr(magic.size(), kHeaderSize - magic.size()));
  h.version = d.u32();
  h.base = d.u64();
  const std::uint32_t crc = d.u32();
  h.state = crc == crc32c(bytes.substr(0, kHeaderSize - 4)) ? Header::State::kValid
                                                            : Header::State::kDamaged;
  return h;
}

std::string frame(std::string_view body) {
  std::string out;
  frame_into(out, body);
  return out;
}

void frame_into(std::string& out, std::string_view body) {
  Encoder len;
  len.u32(static_cast<std::uint32_t>(body.size()));
  Encoder e;
  e.raw(len.bytes());
  e.u32(crc32c(len.bytes()));
  e.u32(crc32c(body));
  out.assign(e.bytes());
  out.append(body);
}

Stopped classify_stop(std::string_view bytes, std::uint64_t position) {
  if (bytes.find_first_not_of('\0') == std::string_view::npos) return Stopped::kZeros;
  // The record's extent: its stated length if that passed its checksum, else its header.
  std::uint64_t extent = std::min<std::uint64_t>(kFrameHeader, bytes.size());
  if (bytes.size() >= kFrameHeader) {
    Decoder d(bytes.substr(0, kFrameHeader));
    const std::uint32_t len = d.u32();
    if (d.u32() == crc32c(bytes.substr(0, 4)) && len <= kMaxBody) {
      extent = std::min<std::uint64_t>(kFrameHeader + len, bytes.size());
    }
  }
  // Each page the record touches: do its trailing zeros begin inside the record? A page a
  // power cut kept from before the record was stored holds zeros from where the record's
  // bytes should begin to the page's end.
  for (std::uint64_t page = position / kPageBytes * kPageBytes; page < position + extent;
       page += kPageBytes) {
    // The file's end ends its last page (a page, whole or not, is written back at once).
    const std::uint64_t page_end = std::min(page + kPageBytes, position + bytes.size());
    const std::string_view tail = bytes.substr(0, page_end - position);
    const std::size_t last = tail.find_last_not_of('\0');
    const std::uint64_t zeros_from = last == std::string_view::npos ? 0 : last + 1;
    if (zeros_from < tail.size() && zeros_from < extent) return Stopped::kUnwritten;
  }
  return Stopped::kDamaged;
}

Scan scan_frames(std::string_view bytes, std::uint64_t start, bool ends_file) {
  Scan s;
  std::uint64_t pos = start;
  const std::uint64_t size = bytes.size();
  // Cut by the end of the bytes: torn if they end the file, else read on.
  const Scan::Stop cut = ends_file ? Scan::Stop::kTorn : Scan::Stop::kMore;
  s.valid_end = pos;
  while (pos < size) {
    if (size - pos < kFrameHeader) {
      s.stop = cut;
      return s;
    }
    Decoder d(bytes.substr(pos, kFrameHeader));
    const std::uint32_t len = d.u32();
    const std::uint32_t len_crc = d.u32();
    const std::uint32_t body_crc = d.u32();
    const bool reaches_end_header = ends_file && pos + kFrameHeader == size;
    if (len_crc != crc32c(bytes.substr(pos, 4)) || len > kMaxBody) {
      s.stop = reaches_end_header ? Scan::Stop::kTorn : Scan::Stop::kCorrupt;
      return s;
    }
    const std::uint64_t end = pos + kFrameHeader + len;
    if (end > size) {
      s.stop = cut;
      return s;
    }
    const std::string_view body = bytes.substr(pos + kFrameHeader, len);
    if (body_crc != crc32c(body)) {
      s.stop = ends_file && end == size ? Scan::Stop::kTorn : Scan::Stop::kCorrupt;
      return s;
    }
    s.bodies.push_back(body);
    s.positions.push_back(pos);
    pos = end;
    s.valid_end = pos;
  }
  return s;
}

std::string read_whole(FileSystem& fs, const std::string& path) {
  return fs.read(path, 0, fs.size(path));
}

void throw_corrupt(const std::string& path, std::uint64_t pos, const std::string& why) {
  throw CorruptLog(path, pos,
                   "corrupt log " + path + " at byte " + std::to_string(pos) + ": " + why);
}

void check_version(const Header& h, const std::string& path) {
  if (h.state == Header::State::kValid && h.version > kFormatVersion) {
    throw UnsupportedFormat(path + " has format version " + std::to_string(h.version) +
                            "; this build reads up to " + std::to_string(kFormatVersion));
  }
}

}  // namespace broker::storage
