#include "segment_log.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <exception>
#include <system_error>
#include <thread>
#include <utility>

#include "broker/errors.h"
#include "broker/file_system.h"
#include "codec.h"
#include "frames.h"
#include "message_record.h"

namespace broker::storage {

namespace {

constexpr std::string_view kSuffix = ".seg";
/// Offsets stay far below 2^64 (a log would need centuries to get there): a larger base in
/// a file name is not one of our segments, so no end can wrap.
constexpr Offset kMaxBase = Offset{1} << 62;

/// Recovery reads segments in pieces of this size (a record longer than one is read
/// whole), so the bytes it checks are still in the cache.
constexpr std::size_t kLoadChunk = std::size_t{256} << 10;
/// Segment files are read back by this many threads at most.
constexpr std::size_t kRecoveryThreads = 2;
/// The active segment's file grows by at most this much at a time (zeros, reserved on disk).
constexpr std::uint64_t kExtendBytes = std::uint64_t{1} << 20;
/// read() fetches this much from an index entry on: several records a consumer reads next.
constexpr std::size_t kReadChunk = std::size_t{64} << 10;

/// The base offset a segment file name states, or false if it is not a segment's name.
bool parse_name(const std::string& name, Offset& base) {
  if (name.size() != 20 + kSuffix.size() || !name.ends_with(kSuffix)) return false;
  base = 0;
  for (std::size_t i = 0; i < 20; ++i) {
    if (name[i] < '0' || name[i] > '9') return false;
    base = base * 10 + static_cast<Offset>(name[i] - '0');
    if (base > kMaxBase) return false;  // (also stops the sum from wrapping)
  }
  return true;
}

}  // namespace

std::string segment_path(const std::string& dir, Offset base) {
  char name[32];
  std::snprintf(name, sizeof name, "%020llu", static_cast<unsigned long long>(base));
  return dir + "/" + name + std::string(kSuffix);
}

std::string encode_message(const Message& m) { return std::string(m.record()); }

MessagePtr decode_message(std::string_view body) {
  if (body.empty() || record::length(body) != body.size()) return nullptr;  // 0: malformed
  std::shared_ptr<unsigned char[]> storage(new unsigned char[body.size()]);
  std::memcpy(storage.get(), body.data(), body.size());
  return MessagePtr(storage, &record::at(storage.get()));
}

bool peek_message(std::string_view body, Offset& offset, std::uint32_t& payload_size) {
  if (body.empty() || record::length(body) != body.size()) return false;
  const Message& m = record::at(reinterpret_cast<const unsigned char*>(body.data()));
  offset = m.offset();
  payload_size = static_cast<std::uint32_t>(m.payload().size());
  return true;
}

namespace {

/// What one segment file holds, read without knowing what the files before it hold (so
/// files can be read in parallel); load judges it in order.
struct SegmentScan {
  std::uint64_t size = 0;
  Header header;
  std::vector<std::uint32_t> sizes;  // payload bytes of each good record, from base on
  std::vector<SegmentLog::IndexEntry> index;
  std::uint64_t valid_end = kHeaderSize;  // byte after the last good record
  Scan::Stop stop = Scan::Stop::kEnd;
  bool stopped_early = false;  // a record that is not the next offset, or malformed
  std::string why;
  std::exception_ptr error;  // what reading threw (IoError)
};

/// Reads the segment at path named by base: its header and, if the header is valid and
/// states base, every record's checksums and offset (base, base + 1, ...).
void scan_segment(FileSystem& fs, const std::string& path, Offset base, SegmentScan& out) {
  out.size = fs.size(path);
  std::uint64_t chunk_start = 0;
  std::string chunk = fs.read(path, 0, kLoadChunk);
  out.header = parse_header(chunk, kSegmentMagic);
  if (out.header.state != Header::State::kValid || out.header.base != base ||
      out.header.version > kFormatVersion) {
    return;
  }
  std::uint64_t index_due = 0;  // the next record at or after this byte gets an entry
  while (true) {
    const bool ends_file = chunk_start + chunk.size() >= out.size;
    const Scan scan = scan_frames(chunk, out.valid_end - chunk_start, ends_file);
    for (std::size_t r = 0; r < scan.bodies.size(); ++r) {
      const std::uint64_t position = chunk_start + scan.positions[r];
      const Offset expected = base + out.sizes.size();
      Offset offset = 0;
      std::uint32_t payload = 0;
      if (!peek_message(scan.bodies[r], offset, payload) || offset != expected) {
        out.valid_end = position;
        out.why = "record " + std::to_string(out.sizes.size()) + " is not offset " +
                  std::to_string(expected);
        out.stopped_early = true;
        return;
      }
      if (position >= index_due) {
        out.index.push_back({offset, position});
        index_due = position + SegmentLog::kIndexBytes;
      }
      out.sizes.push_back(payload);
    }
    out.valid_end = chunk_start + scan.valid_end;
    out.stop = scan.stop;
    if (out.stop != Scan::Stop::kMore) break;
    // The next record runs past this piece: read on from it, all of it at once.
    std::size_t want = kLoadChunk;
    const std::string_view rest = std::string_view(chunk).substr(scan.valid_end);
    if (rest.size() >= kFrameHeader) {  // its length passed its checksum
      Decoder d(rest);
      want = std::max<std::size_t>(want, kFrameHeader + d.u32());
    }
    chunk_start = out.valid_end;
    chunk = fs.read(path, chunk_start, want);
  }
  if (out.stop == Scan::Stop::kCorrupt) out.why = "checksum mismatch";
}

/// Scans every file, by up to kRecoveryThreads threads (the caller is one): recovery reads
/// and checks gigabytes, and a file's checks need nothing from the files before it.
std::vector<SegmentScan> scan_all(FileSystem& fs,
                                  const std::vector<std::pair<Offset, std::string>>& files) {
  std::vector<SegmentScan> scans(files.size());
  std::atomic<std::size_t> next{0};
  auto work = [&] {
    for (std::size_t i = next++; i < files.size(); i = next++) {
      try {
        scan_segment(fs, files[i].second, files[i].first, scans[i]);
      } catch (...) {
        scans[i].error = std::current_exception();
      }
    }
  };
  std::vector<std::thread> helpers;
  const std::size_t wanted = std::min<std::size_t>(kRecoveryThreads, files.size());
  for (std::size_t t = 1; t < wanted; ++t) {
    try {
      helpers.emplace_back(work);
    } catch (const std::system_error&) {
      break;  // no thread to be had: the caller reads the rest itself
    }
  }
  work();
  for (std::thread& h : helpers) h.join();
  return scans;
}

}  // namespace

SegmentLog::Loaded SegmentLog::load(FileSystem& fs, const std::string& dir, bool repair,
                                    RecoveryPlan& plan) {
  std::vector<std::pair<Offset, std::string>> files;
  for (const std::string& name : fs.list(dir)) {
    Offset base = 0;
    if (parse_name(name, base)) files.emplace_back(base, dir + "/" + name);
  }
  std::vector<SegmentScan> scans = scan_all(fs, files);
  Loaded out;
  bool cut_rest = false;  // repair mode: a corrupt record was dropped, so is all after it
  for (std::size_t i = 0; i < files.size(); ++i) {
    const auto& [base, path] = files[i];
    SegmentScan& scan = scans[i];
    const bool last = i + 1 == files.size();
    if (i == 0) out.end = base;
    const Offset first = out.end;
    if (cut_rest) {
      plan.cuts.push_back({path, 0, true});
      plan.report.push_back({path, 0, scan.size, "after corrupt record", base, base});
      continue;
    }
    if (scan.error) std::rethrow_exception(scan.error);
    const Header& h = scan.header;
    check_version(h, path);
    std::string damage;
    if (h.state != Header::State::kValid) {
      damage = "bad segment header";
    } else if (h.base != base) {
      damage = "header base " + std::to_string(h.base) + " differs from the file name";
    } else if (i > 0 && base != out.end) {
      damage =
          "segment starts at " + std::to_string(base) + ", expected " + std::to_string(out.end);
    }
    if (!damage.empty()) {
      // Only the newest segment can lose its header to a crash: rolling syncs the one before.
      const bool torn = last && h.state == Header::State::kShort;
      if (!torn && !repair) throw_corrupt(path, 0, damage);
      plan.cuts.push_back({path, 0, true});
      plan.report.push_back(
          {path, 0, scan.size, torn ? "torn tail" : "corrupt record", first, first});
      cut_rest = true;
      continue;
    }
    out.sizes.insert(out.sizes.end(), scan.sizes.begin(), scan.sizes.end());
    out.end = base + scan.sizes.size();
    out.segments.push_back({base, path, std::move(scan.index)});
    if (scan.valid_end == scan.size) continue;
    bool torn = !scan.stopped_early && scan.stop == Scan::Stop::kTorn && last;
    if (last && !scan.stopped_early && scan.stop == Scan::Stop::kCorrupt) {
      // The newest segment is written through a mapping: after its last record come zeros
      // the file was extended by, and a power cut may have kept any of its unsynced pages
      // and lost others (R18).
      const std::string rest = fs.read(path, scan.valid_end, scan.size - scan.valid_end);
      // Zeros to the end (space extended for records, or a record that lost its page) and
      // pages the disk never got are the torn tail a crash leaves; the rest is damage.
      torn = classify_stop(rest, scan.valid_end) != Stopped::kDamaged;
    }
    if (!torn && !repair) {
      throw_corrupt(path, scan.valid_end,
                    scan.why.empty() ? "torn record before the newest segment" : scan.why);
    }
    plan.cuts.push_back({path, scan.valid_end, false});
    plan.report.push_back({path, scan.valid_end, scan.size - scan.valid_end,
                           torn ? "torn tail" : "corrupt record", out.end, out.end});
    if (!torn) cut_rest = true;
  }
  return out;
}

SegmentLog::SegmentLog(std::shared_ptr<FileSystem> fs, std::string dir, std::uint64_t segment_bytes,
                       std::deque<Segment> segments, Offset end)
    : fs_(std::move(fs)),
      dir_(std::move(dir)),
      segment_bytes_(segment_bytes),
      segments_(std::move(segments)),
      next_(end),
      syncer_([this] { sync_active(); }) {
  if (!segments_.empty()) {
    const std::string& newest = segments_.back().path;
    active_size_ = fs_->size(newest);
    fs_->sync(newest);  // older segments were synced when they rolled
    // Its name too: the roll that made it may have died (or failed, R33) before its
    // directory sync, and what is offered from now on must survive a power cut (R19).
    fs_->sync_dir(dir_);
    open_active(newest);
  } else if (end > 0) {
    // Recovery dropped every segment (a torn header, repair): an empty segment named by
    // the end keeps offsets absolute across the next restart too (R18).
    start_segment(end);
  }
}

SegmentLog::~SegmentLog() {
  try {
    // The zeros the file was extended by go, so only a crash leaves them to recovery.
    if (writing_ && !discarded()) writing_->truncate(active_size_);
  } catch (const Error&) {
  }
  try {
    syncer_.flush();
  } catch (const Error&) {
  }
}

void SegmentLog::open_active(const std::string& path) {
  std::shared_ptr<MappedFile> file = fs_->map(path);
  writing_ = file;
  sync::MutexLock lock(path_mu_);
  active_ = std::move(file);
}

void SegmentLog::start_segment(Offset base) {
  if (writing_) {
    // Cut to its records and synced before the next one exists: a power cut can then
    // damage only the newest segment's end.
    writing_->truncate(active_size_);
    writing_->sync();
  }
  const std::string path = segment_path(dir_, base);
  fs_->append(path, file_header(kSegmentMagic, base));
  fs_->sync(path);
  fs_->sync_dir(dir_);
  segments_.push_back({base, path, {}});
  active_size_ = kHeaderSize;
  open_active(path);
}

void SegmentLog::append(const Message& m) {
  frame_into(framed_, m.record());  // the record is the body: no re-encoding
  if (segments_.empty() ||
      (active_size_ + framed_.size() > segment_bytes_ && active_size_ > kHeaderSize)) {
    start_segment(m.offset());
  }
  const std::uint64_t end = active_size_ + framed_.size();
  if (end > writing_->size()) {
    // A step at a time, up to the segment's size (further only for a record longer than
    // a segment): a system call per step, not per record. Steps double up to kExtendBytes,
    // so the zeros reserved never outweigh the records by much.
    const std::uint64_t step = std::clamp<std::uint64_t>(active_size_, kPageBytes, kExtendBytes);
    writing_->extend(std::max(end, std::min(segment_bytes_, writing_->size() + step)));
  }
  writing_->store(active_size_, framed_);
  active_size_ = end;
  next_ = m.offset() + 1;
}

std::string_view SegmentLog::cached(const std::string& path, std::uint64_t position,
                                    std::size_t length) {
  if (path != cache_path_ || position < cache_start_ ||
      position + length > cache_start_ + cache_.size()) {
    cache_ = fs_->read(path, position, std::max(length, kReadChunk));
    cache_path_ = path;
    cache_start_ = position;
  }
  const std::string_view all(cache_);
  const std::uint64_t at = position - cache_start_;
  return at >= all.size() ? std::string_view{} : all.substr(at, length);
}

MessagePtr SegmentLog::read(Offset offset) {
  auto seg = std::upper_bound(segments_.begin(), segments_.end(), offset,
                              [](Offset o, const Segment& s) { return o < s.base; });
  if (seg == segments_.begin())
    throw_corrupt(dir_, 0, "no segment holds " + std::to_string(offset));
  --seg;
  auto entry = std::upper_bound(seg->index.begin(), seg->index.end(), offset,
                                [](Offset o, const IndexEntry& e) { return o < e.offset; });
  if (entry == seg->index.begin()) {
    throw_corrupt(seg->path, 0, "offset " + std::to_string(offset) + " is not indexed");
  }
  --entry;
  std::uint64_t position = entry->position;
  for (Offset at = entry->offset;; ++at) {
    const std::string_view head = cached(seg->path, position, kFrameHeader);
    Decoder d(head);
    const std::uint32_t len = d.u32();
    const std::uint32_t len_crc = d.u32();
    const std::uint32_t body_crc = d.u32();
    if (d.failed() || len_crc != crc32c(head.substr(0, 4)) || len > kMaxBody) {
      throw_corrupt(seg->path, position, "record changed since it was read back");
    }
    if (at < offset) {
      position += kFrameHeader + len;
      continue;
    }
    const std::string_view body = cached(seg->path, position + kFrameHeader, len);
    MessagePtr m;
    if (body.size() != len || body_crc != crc32c(body) || !(m = decode_message(body)) ||
        m->offset() != offset) {
      throw_corrupt(seg->path, position, "record changed since it was read back");
    }
    return m;
  }
}

void SegmentLog::drop_below(Offset oldest) {
  while (segments_.size() > 1 && segments_[1].base <= oldest) {
    fs_->remove(segments_.front().path);
    if (cache_path_ == segments_.front().path) {
      cache_path_.clear();
      cache_.clear();
    }
    segments_.pop_front();
  }
}

void SegmentLog::discard() {
  sync::MutexLock lock(path_mu_);
  active_.reset();
}

bool SegmentLog::discarded() {
  sync::MutexLock lock(path_mu_);
  return active_ == nullptr;
}

void SegmentLog::sync_active() {
  std::shared_ptr<MappedFile> file;
  {
    sync::MutexLock lock(path_mu_);
    file = active_;
  }
  if (file) file->sync();
}

}  // namespace broker::storage
