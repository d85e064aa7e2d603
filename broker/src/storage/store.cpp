#include "store.h"

#include <algorithm>
#include <charconv>
#include <utility>

#include "broker/errors.h"
#include "frames.h"

namespace broker::storage {

namespace {

constexpr const char* kJournal = "journal";
constexpr const char* kJournalNew = "journal.new";
constexpr const char* kLock = "LOCK";

std::string topic_dir(const std::string& dir, std::uint64_t id) {
  return dir + "/t" + std::to_string(id);
}

bool wants_flusher(const StorageOptions& o) {
  return o.publish_sync.kind == FsyncPolicy::Kind::kInterval ||
         o.commit_sync.kind == FsyncPolicy::Kind::kInterval;
}

/// Reads the journal into saved; plans the cut of a torn tail (or, repairing, of a corrupt
/// record and the rest). Returns the bytes kept, or 0 if the journal must be written anew.
std::uint64_t load_journal(FileSystem& fs, const std::string& path, bool repair, SavedState& saved,
                           RecoveryPlan& plan) {
  const std::string bytes = read_whole(fs, path);
  const Header h = parse_header(bytes, kJournalMagic);
  switch (h.state) {
    case Header::State::kForeign:
      throw NotBrokerStorage(path + " is not a broker journal");
    case Header::State::kShort:  // a crash while the directory was being created
      plan.cuts.push_back({path, 0, true});
      plan.report.push_back({path, 0, bytes.size(), "torn tail", 0, 0});
      return 0;
    case Header::State::kDamaged:
      throw_corrupt(path, 0, "bad journal header");
    case Header::State::kValid:
      break;
  }
  check_version(h, path);
  const Scan scan = scan_frames(bytes, kHeaderSize);
  std::uint64_t valid_end = scan.valid_end;
  bool damaged = scan.stop == Scan::Stop::kCorrupt;
  std::string why = "checksum mismatch";
  for (std::size_t i = 0; i < scan.bodies.size(); ++i) {
    if (!apply_record(scan.bodies[i], saved)) {
      valid_end = scan.positions[i];
      damaged = true;
      why = "record " + std::to_string(i) + " names nothing that exists";
      break;
    }
  }
  if (valid_end < bytes.size()) {
    if (damaged && !repair) throw_corrupt(path, valid_end, why);
    plan.cuts.push_back({path, valid_end, false});
    plan.report.push_back({path, valid_end, bytes.size() - valid_end,
                           damaged ? "corrupt record" : "torn tail", 0, 0});
  }
  return valid_end;
}

}  // namespace

std::unique_ptr<Store> Store::open(const StorageOptions& options, Opened& out) {
  // R33: one failed write makes the store refuse every later one until it is opened again.
  auto fs = std::make_shared<StickyFileSystem>(options.file_system ? options.file_system
                                                                   : posix_file_system());
  const std::string& dir = options.directory;
  const bool existed = fs->exists(dir);
  const std::vector<std::string> entries = existed ? fs->list(dir) : std::vector<std::string>{};
  const bool has_journal = std::count(entries.begin(), entries.end(), kJournal) > 0;
  if (!has_journal) {
    for (const std::string& e : entries) {
      if (e != kLock && e != kJournalNew) {
        throw NotBrokerStorage(dir + " holds '" + e + "' but no broker journal");
      }
    }
  }
  if (!existed) fs->create_directories(dir);
  std::unique_ptr<FileLock> lock = fs->try_lock(dir + "/" + kLock);
  if (!lock) throw StorageLocked(dir + " is open in another broker");

  RecoveryPlan plan;
  const std::string journal = dir + "/" + kJournal;
  std::uint64_t journal_size = 0;
  if (has_journal) journal_size = load_journal(*fs, journal, options.repair, out.saved, plan);
  if (std::count(entries.begin(), entries.end(), kJournalNew) > 0) {
    plan.cuts.push_back({dir + "/" + kJournalNew, 0, true});  // an unfinished compaction
  }
  for (const SavedTopic& t : out.saved.topics) {
    const std::string tdir = topic_dir(dir, t.id);
    SegmentLog::Loaded loaded;
    if (fs->exists(tdir)) loaded = SegmentLog::load(*fs, tdir, options.repair, plan);
    out.logs[t.id] = std::move(loaded);
  }
  for (const std::string& e : entries) {  // directories of deleted topics
    std::uint64_t id = 0;
    const char* digits = e.data() + 1;
    const char* last = e.data() + e.size();
    if (e.size() < 2 || e[0] != 't' ||
        std::from_chars(digits, last, id) != std::from_chars_result{last, std::errc{}}) {
      continue;  // not a topic directory name (or a number past 64 bits): not ours to touch
    }
    if (out.logs.count(id)) continue;
    for (const std::string& f : fs->list(dir + "/" + e)) {
      plan.cuts.push_back({dir + "/" + e + "/" + f, 0, true});
    }
  }

  // Every file was read without a typed error: now disk may change.
  plan.apply(*fs);
  if (journal_size == 0) {
    const std::string header = file_header(kJournalMagic, 0);
    fs->append(journal, header);
    fs->sync(journal);
    fs->sync_dir(dir);
    journal_size = header.size();
    out.report.created = !has_journal;
  }
  // What was read back may never have been synced (a process killed before its sync):
  // the journal is made durable now, each topic's newest segment when its log opens, all
  // before anything is offered, so a later power cut cannot take back what a consumer saw
  // (R19). Older segments were synced when they rolled.
  fs->sync(journal);
  fs->sync_dir(dir);  // and the journal's name (a failed sync_dir may have left it volatile)
  out.report.truncations = plan.report;
  std::vector<std::pair<std::string, const SavedSubscription*>> moved_back;
  for (SavedTopic& t : out.saved.topics) {
    const SegmentLog::Loaded& log = out.logs[t.id];
    out.report.messages += log.sizes.size();
    for (SavedSubscription& s : t.subscriptions) {
      // A position saved before its messages were synced (publish_sync none), or past a
      // tail recovery cut (R21), may point past what survived: it moves back to the end
      // (R20), and that is saved, or the old position would skip the messages published
      // at those offsets next. The attempts and dead letters of lost offsets go with them
      // (saved too): a message published at such an offset later is a new one.
      const auto lost = [&](Offset o) { return o >= log.end; };
      const bool forgets = s.position > log.end ||
                           std::any_of(s.attempts.begin(), s.attempts.end(),
                                       [&](const auto& a) { return lost(a.first); }) ||
                           std::any_of(s.dead.begin(), s.dead.end(), [&](const DeadLetter& d) {
                             return lost(d.message->offset());
                           });
      s.position = std::min(s.position, log.end);
      std::erase_if(s.attempts,
                    [&](const auto& a) { return a.first < s.position || lost(a.first); });
      std::erase_if(s.dead, [&](const DeadLetter& d) { return lost(d.message->offset()); });
      if (forgets) moved_back.emplace_back(t.name, &s);
      ++out.report.subscriptions;
    }
    ++out.report.topics;
  }
  std::unique_ptr<Store> store(
      new Store(options, std::move(fs), std::move(lock), out.saved, journal_size));
  for (const auto& [topic, s] : moved_back) {
    const std::pmr::map<Offset, int> attempts(s->attempts.begin(), s->attempts.end());
    store->wait(store->commit(topic, s->name, s->position, attempts, s->dead, true, true));
  }
  return store;
}

Store::Store(StorageOptions options, std::shared_ptr<StickyFileSystem> fs,
             std::unique_ptr<FileLock> lock, SavedState saved, std::uint64_t journal_size)
    : options_(std::move(options)),
      fs_(std::move(fs)),
      lock_(std::move(lock)),
      journal_path_(options_.directory + "/" + kJournal),
      mirror_(std::move(saved)),
      journal_size_(journal_size),
      journal_syncer_([this] { sync_journal(); }) {
  if (wants_flusher(options_)) flusher_ = sync::Thread([this] { flusher_loop(); });
}

Store::~Store() {
  if (flusher_.joinable()) {
    {
      sync::MutexLock lock(flush_mu_);
      stopping_ = true;
      flush_cv_.notify_all();
    }
    flusher_.join();
  }
  try {
    journal_syncer_.flush();
  } catch (const Error&) {
    // A clean close that cannot sync leaves what the policy promised: nothing more.
  }
}

void Store::sync_journal() { fs_->sync(journal_path_); }

void Store::flusher_loop() {
  const auto period = [&](const FsyncPolicy& p) {
    return p.kind == FsyncPolicy::Kind::kInterval ? p.interval : Millis::max();
  };
  const Millis every = std::min(period(options_.publish_sync), period(options_.commit_sync));
  for (;;) {
    {
      sync::MutexLock lock(flush_mu_);
      if (stopping_) return;
      flush_cv_.wait_for(flush_mu_, every);
      if (stopping_) return;
    }
    std::vector<std::shared_ptr<SegmentLog>> logs;
    {
      sync::MutexLock lock(mu_);
      std::erase_if(logs_, [](const auto& w) { return w.expired(); });
      for (const auto& w : logs_) {
        if (auto l = w.lock()) logs.push_back(std::move(l));
      }
    }
    try {
      if (options_.publish_sync.kind == FsyncPolicy::Kind::kInterval) {
        for (const auto& l : logs) l->syncer().flush();
      }
      if (options_.commit_sync.kind == FsyncPolicy::Kind::kInterval) journal_syncer_.flush();
    } catch (const Error&) {
      // The store has failed (R33): every later write and sync throws, and reports it.
      return;
    }
  }
}

std::shared_ptr<SegmentLog> Store::topic_log(std::uint64_t id, SegmentLog::Loaded& loaded) {
  const std::string tdir = topic_dir(options_.directory, id);
  fs_->create_directories(tdir);
  auto log = std::make_shared<SegmentLog>(fs_, tdir, options_.segment_bytes,
                                          std::move(loaded.segments), loaded.end);
  sync::MutexLock lock(mu_);
  logs_.push_back(log);
  return log;
}

std::uint64_t Store::write(const std::string& body) {
  const std::string record = frame(body);
  try {
    fs_->append(journal_path_, record);
  } catch (const Error&) {
    try {
      fs_->truncate(journal_path_, journal_size_);
    } catch (const Error&) {
    }
    throw;
  }
  journal_size_ += record.size();
  apply_record(body, mirror_);  // our own record: it names what exists
  const std::uint64_t ticket = journal_syncer_.wrote();
  if (journal_size_ > options_.journal_compact_bytes) compact();
  return ticket;
}

void Store::compact() {
  const std::string fresh = options_.directory + "/" + kJournalNew;
  std::string all = file_header(kJournalMagic, 0);
  for (const std::string& body : snapshot(mirror_)) all += frame(body);
  fs_->remove(fresh);
  fs_->append(fresh, all);
  fs_->sync(fresh);
  fs_->rename(fresh, journal_path_);
  fs_->sync_dir(options_.directory);
  journal_size_ = all.size();
}

std::uint64_t Store::create_topic(const std::string& name, const TopicOptions& options) {
  std::uint64_t id = 0;
  std::uint64_t ticket = 0;
  {
    sync::MutexLock lock(mu_);
    id = mirror_.next_id;
    // R29: a partitioned topic's own log stays empty, so only its partitions get a directory.
    if (options.partitions <= 1) fs_->create_directories(topic_dir(options_.directory, id));
    for (std::uint32_t p = 0; options.partitions > 1 && p < options.partitions; ++p) {
      fs_->create_directories(topic_dir(options_.directory, id + 1 + p));
    }
    fs_->sync_dir(options_.directory);
    ticket = write(encode_topic_created(name, id, options));
  }
  journal_syncer_.wait(ticket);
  return id;
}

void Store::delete_topic(const std::string& name) {
  std::uint64_t ticket = 0;
  {
    sync::MutexLock lock(mu_);
    ticket = write(encode_topic_deleted(name));
  }
  journal_syncer_.wait(ticket);
}

void Store::remove_topic_files(std::uint64_t id, std::size_t partitions) {
  for (std::uint64_t i = id; i <= id + partitions; ++i) {
    const std::string tdir = topic_dir(options_.directory, i);
    if (partitions > 0 && i == id) continue;  // a partitioned topic's has no directory
    for (const std::string& f : fs_->list(tdir)) fs_->remove(tdir + "/" + f);
  }
}

void Store::subscribed(const std::string& topic, const SavedSubscription& s) {
  std::uint64_t ticket = 0;
  {
    sync::MutexLock lock(mu_);
    ticket = write(encode_subscribed(topic, s));
  }
  journal_syncer_.wait(ticket);
}

void Store::unsubscribed(const std::string& topic, const std::string& name) {
  std::uint64_t ticket = 0;
  {
    sync::MutexLock lock(mu_);
    ticket = write(encode_unsubscribed(topic, name));
  }
  journal_syncer_.wait(ticket);
}

std::uint64_t Store::commit(const std::string& topic, const std::string& name, Offset position,
                            const std::pmr::map<Offset, int>& attempts,
                            const std::vector<DeadLetter>& dead, bool dead_rewritten, bool force) {
  sync::MutexLock lock(mu_);
  const std::uint64_t ticket =
      write(encode_commit(topic, name, position, attempts, dead, dead_rewritten));
  const bool wait = force || options_.commit_sync.kind == FsyncPolicy::Kind::kAlways;
  return wait ? ticket : 0;
}

void Store::wait(std::uint64_t ticket) {
  if (ticket != 0) journal_syncer_.wait(ticket);
}

}  // namespace broker::storage
