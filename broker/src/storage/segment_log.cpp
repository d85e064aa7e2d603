#include "segment_log.h"

#include <cstdio>
#include <limits>
#include <utility>

#include "broker/errors.h"
#include "codec.h"
#include "frames.h"

namespace broker::storage {

namespace {

constexpr std::string_view kSuffix = ".seg";
/// Offsets stay far below 2^64 (a log would need centuries to get there): a larger base in
/// a file name is not one of our segments, so no end can wrap.
constexpr Offset kMaxBase = Offset{1} << 62;

std::string parent_of(const std::string& path) { return path.substr(0, path.rfind('/')); }

/// The whole file, read in large pieces.
std::string read_all(FileSystem& fs, const std::string& path) {
  // One read of the exact size: recovery reads every byte once, into one buffer.
  return fs.read(path, 0, fs.size(path));
}

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

[[noreturn]] void corrupt(const std::string& path, std::uint64_t pos, const std::string& why) {
  throw CorruptLog(path, pos,
                   "corrupt log " + path + " at byte " + std::to_string(pos) + ": " + why);
}

}  // namespace

std::string segment_path(const std::string& dir, Offset base) {
  char name[32];
  std::snprintf(name, sizeof name, "%020llu", static_cast<unsigned long long>(base));
  return dir + "/" + name + std::string(kSuffix);
}

std::string encode_message(const Message& m) {
  Encoder e;
  e.u64(m.offset);
  e.i64(m.publish_time.time_since_epoch().count());
  e.str(m.key);
  e.u32(static_cast<std::uint32_t>(m.headers.size()));
  for (const auto& [k, v] : m.headers) {
    e.str(k);
    e.str(v);
  }
  e.str(m.payload);
  return e.take();
}

bool decode_message(std::string_view body, Message& out) {
  Decoder d(body);
  out.offset = d.u64();
  out.publish_time = Time{Millis{d.i64()}};
  out.key = d.str();
  const std::uint32_t n = d.u32();
  out.headers.clear();
  for (std::uint32_t i = 0; i < n && !d.failed(); ++i) {
    std::string k = d.str();
    out.headers[std::move(k)] = d.str();
  }
  out.payload = d.str();
  return d.done();
}

SegmentLog::Loaded SegmentLog::load(FileSystem& fs, const std::string& dir, bool repair,
                                    RecoveryPlan& plan) {
  std::vector<std::pair<Offset, std::string>> files;
  for (const std::string& name : fs.list(dir)) {
    Offset base = 0;
    if (parse_name(name, base)) files.emplace_back(base, dir + "/" + name);
  }
  Loaded out;
  bool cut_rest = false;  // repair mode: a corrupt record was dropped, so is all after it
  for (std::size_t i = 0; i < files.size(); ++i) {
    const auto& [base, path] = files[i];
    const bool last = i + 1 == files.size();
    const std::string bytes = read_all(fs, path);
    if (i == 0) out.end = base;
    const Offset first = out.end;
    if (cut_rest) {
      plan.cuts.push_back({path, 0, true});
      plan.report.push_back({path, 0, bytes.size(), "after corrupt record", base, base});
      continue;
    }
    const Header h = parse_header(bytes, kSegmentMagic);
    if (h.state == Header::State::kValid && h.version > kFormatVersion) {
      throw UnsupportedFormat(path + " has format version " + std::to_string(h.version) +
                              "; this build reads up to " + std::to_string(kFormatVersion));
    }
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
      if (!torn && !repair) corrupt(path, 0, damage);
      plan.cuts.push_back({path, 0, true});
      plan.report.push_back(
          {path, 0, bytes.size(), torn ? "torn tail" : "corrupt record", first, first});
      cut_rest = true;
      continue;
    }
    const Scan scan = scan_frames(bytes, kHeaderSize);
    std::uint64_t valid_end = scan.valid_end;
    std::string why = scan.stop == Scan::Stop::kCorrupt ? "checksum mismatch" : "";
    bool stopped_early = false;
    for (std::size_t r = 0; r < scan.bodies.size(); ++r) {
      auto m = std::make_shared<Message>();
      if (!decode_message(scan.bodies[r], *m) || m->offset != out.end ||
          out.end == std::numeric_limits<Offset>::max()) {
        valid_end = scan.positions[r];
        why = "record " + std::to_string(r) + " is not offset " + std::to_string(out.end);
        stopped_early = true;
        break;
      }
      out.messages.push_back(std::move(m));
      ++out.end;
    }
    const bool torn = !stopped_early && scan.stop == Scan::Stop::kTorn && last;
    if (valid_end == bytes.size()) continue;
    if (!torn && !repair)
      corrupt(path, valid_end, why.empty() ? "torn record before the newest segment" : why);
    plan.cuts.push_back({path, valid_end, false});
    plan.report.push_back({path, valid_end, bytes.size() - valid_end,
                           torn ? "torn tail" : "corrupt record", out.end, out.end});
    if (!torn) cut_rest = true;
  }
  return out;
}

SegmentLog::SegmentLog(std::shared_ptr<FileSystem> fs, std::string dir, std::uint64_t segment_bytes,
                       Offset end)
    : fs_(std::move(fs)),
      dir_(std::move(dir)),
      segment_bytes_(segment_bytes),
      next_(end),
      syncer_([this] { sync_active(); }) {
  for (const std::string& name : fs_->list(dir_)) {
    Offset base = 0;
    if (parse_name(name, base)) segments_.push_back({base, dir_ + "/" + name});
  }
  if (!segments_.empty()) {
    active_size_ = fs_->size(segments_.back().path);
    sync::MutexLock lock(path_mu_);
    active_path_ = segments_.back().path;
  } else if (end > 0) {
    // Recovery dropped every segment (a torn header, repair): an empty segment named by
    // the end keeps offsets absolute across the next restart too (R18).
    start_segment(end);
  }
}

SegmentLog::~SegmentLog() {
  try {
    syncer_.flush();
  } catch (const Error&) {
  }
}

void SegmentLog::start_segment(Offset base) {
  if (!segments_.empty()) fs_->sync(segments_.back().path);
  const std::string path = segment_path(dir_, base);
  fs_->append(path, file_header(kSegmentMagic, base));
  fs_->sync(path);
  fs_->sync_dir(dir_);
  segments_.push_back({base, path});
  active_size_ = kHeaderSize;
  sync::MutexLock lock(path_mu_);
  active_path_ = path;
}

void SegmentLog::append(const Message& m) {
  const std::string record = frame(encode_message(m));
  if (segments_.empty() ||
      (active_size_ + record.size() > segment_bytes_ && active_size_ > kHeaderSize)) {
    start_segment(m.offset);
  }
  const std::string& path = segments_.back().path;
  try {
    fs_->append(path, record);
  } catch (const Error&) {
    try {
      fs_->truncate(path, active_size_);  // a half-written record would corrupt the middle
    } catch (const Error&) {
    }
    throw;
  }
  active_size_ += record.size();
  next_ = m.offset + 1;
}

void SegmentLog::drop_below(Offset oldest) {
  while (segments_.size() > 1 && segments_[1].base <= oldest) {
    fs_->remove(segments_.front().path);
    segments_.pop_front();
  }
}

void SegmentLog::sync_active() {
  std::string path;
  {
    sync::MutexLock lock(path_mu_);
    path = active_path_;
  }
  if (!path.empty()) fs_->sync(path);
}

void RecoveryPlan::apply(FileSystem& fs) const {
  for (const Cut& c : cuts) {
    if (c.remove) {
      fs.remove(c.path);
    } else {
      fs.truncate(c.path, c.keep);
      fs.sync(c.path);
    }
    fs.sync_dir(parent_of(c.path));
  }
}

}  // namespace broker::storage
