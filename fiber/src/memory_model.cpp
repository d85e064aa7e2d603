// Vector clocks, store histories and plain writes of one run (see memory_model.h).
#include "memory_model.h"

#include <algorithm>
#include <sstream>
#include <utility>

namespace fiber::detail {

namespace {

bool acquires(std::memory_order o) {
  return o == std::memory_order_acquire || o == std::memory_order_consume ||
         o == std::memory_order_acq_rel || o == std::memory_order_seq_cst;
}

bool releases(std::memory_order o) {
  return o == std::memory_order_release || o == std::memory_order_acq_rel ||
         o == std::memory_order_seq_cst;
}

}  // namespace

void VectorClock::tick(int f) {
  if (counts_.size() <= static_cast<std::size_t>(f)) counts_.resize(f + 1, 0);
  ++counts_[f];
}

void VectorClock::raise(int f, std::uint32_t c) {
  if (counts_.size() <= static_cast<std::size_t>(f)) counts_.resize(f + 1, 0);
  counts_[f] = std::max(counts_[f], c);
}

void VectorClock::join(const VectorClock& o) {
  if (counts_.size() < o.counts_.size()) counts_.resize(o.counts_.size(), 0);
  for (std::size_t i = 0; i < o.counts_.size(); ++i)
    counts_[i] = std::max(counts_[i], o.counts_[i]);
}

MemoryModel::Thread& MemoryModel::thread(int f) {
  if (threads_.size() <= static_cast<std::size_t>(f)) threads_.resize(f + 1);
  return threads_[f];
}

void MemoryModel::spawned(int parent, int child) {
  VectorClock start;
  if (parent >= 0) {
    start = thread(parent).clock;
    thread(parent).clock.tick(parent);
  }
  start.raise(child, 1);
  thread(child).clock = std::move(start);
}

void MemoryModel::joined(int joiner, int done) {
  const VectorClock end = thread(done).clock;
  thread(joiner).clock.join(end);
}

void MemoryModel::lock_acquired(int f, const void* lock) {
  auto it = locks_.find(lock);
  if (it != locks_.end()) thread(f).clock.join(it->second);
}

void MemoryModel::lock_released(int f, const void* lock) {
  Thread& t = thread(f);
  locks_[lock] = t.clock;
  t.clock.tick(f);
}

MemoryModel::History& MemoryModel::history(const void* at, std::uint64_t initial) {
  auto [it, fresh] = atomics_.try_emplace(at);
  if (fresh) it->second.stores.push_back(Store{initial, -1, 0, {}});
  return it->second;
}

void MemoryModel::note_seen(History& h, int f, std::uint64_t index) {
  if (h.seen.size() <= static_cast<std::size_t>(f)) h.seen.resize(f + 1, 0);
  h.seen[f] = std::max(h.seen[f], index + 1);
}

void MemoryModel::append(History& h, int f, std::uint64_t value, VectorClock release) {
  h.stores.push_back(Store{value, f, thread(f).clock.at(f), std::move(release)});
  if (h.stores.size() > kHistory) {
    h.stores.pop_front();
    ++h.first;
  }
  note_seen(h, f, h.newest());
}

void MemoryModel::sc_join(int f) {
  Thread& t = thread(f);
  t.clock.join(sc_);
  sc_.join(t.clock);
}

std::uint32_t MemoryModel::readable(int f, const void* at, std::uint64_t newest,
                                    std::memory_order order) {
  if (order == std::memory_order_seq_cst) sc_join(f);
  History& h = history(at, newest);
  const VectorClock& clock = thread(f).clock;
  // Coherence: never older than what f read or wrote; happens-before: never older than the
  // newest store that happens before this load.
  std::uint64_t oldest = h.first;
  if (static_cast<std::size_t>(f) < h.seen.size() && h.seen[f] > 0)
    oldest = std::max(oldest, h.seen[f] - 1);
  for (std::uint64_t j = h.newest(); j > oldest; --j) {
    const Store& s = h.stores[j - h.first];
    if (s.fiber < 0 || clock.at(s.fiber) >= s.stamp) {
      oldest = j;
      break;
    }
  }
  const auto n = static_cast<std::uint32_t>(h.newest() - oldest + 1);
  return n;
}

std::uint64_t MemoryModel::read(int f, const void* at, std::uint32_t k, std::memory_order order) {
  History& h = atomics_.at(at);
  const std::uint64_t index = h.newest() - k;
  const Store& s = h.stores[index - h.first];
  note_seen(h, f, index);
  Thread& t = thread(f);
  if (acquires(order)) {
    t.clock.join(s.release);
  } else {
    t.acquire_later.join(s.release);
  }
  if (order == std::memory_order_seq_cst) sc_join(f);
  return s.value;
}

void MemoryModel::store(int f, const void* at, std::uint64_t before, std::uint64_t value,
                        std::memory_order order) {
  if (order == std::memory_order_seq_cst) sc_join(f);
  History& h = history(at, before);
  Thread& t = thread(f);
  append(h, f, value, releases(order) ? t.clock : t.fence_release);
  if (releases(order)) thread(f).clock.tick(f);
  if (order == std::memory_order_seq_cst) sc_join(f);
}

void MemoryModel::rmw(int f, const void* at, std::uint64_t before, std::uint64_t after,
                      std::memory_order order) {
  if (order == std::memory_order_seq_cst) sc_join(f);
  History& h = history(at, before);
  const VectorClock read_release = h.stores.back().release;
  Thread& t = thread(f);
  if (acquires(order)) {
    t.clock.join(read_release);
  } else {
    t.acquire_later.join(read_release);
  }
  // A read-modify-write continues the release sequence of the store it read.
  VectorClock release = releases(order) ? t.clock : t.fence_release;
  release.join(read_release);
  append(h, f, after, std::move(release));
  if (releases(order)) thread(f).clock.tick(f);
  if (order == std::memory_order_seq_cst) sc_join(f);
}

void MemoryModel::fence(int f, std::memory_order order) {
  if (order == std::memory_order_seq_cst) sc_join(f);
  Thread& t = thread(f);
  if (acquires(order)) t.clock.join(t.acquire_later);
  if (releases(order)) {
    t.fence_release = t.clock;
    t.clock.tick(f);
  }
  if (order == std::memory_order_seq_cst) sc_join(f);
}

std::string MemoryModel::plain(int f, const void* at, std::size_t bytes, bool write,
                               const char* what) {
  const std::uint32_t own = thread(f).clock.at(f);
  if (write) {
    plain_[at] = PlainWrite{f, own};
    return "";
  }
  auto it = plain_.find(at);
  if (it == plain_.end()) return "";
  const PlainWrite& w = it->second;
  if (w.fiber == f || thread(f).clock.at(w.fiber) >= w.stamp) return "";
  std::ostringstream out;
  out << "data-race: fiber " << f << " reads " << what << " (" << bytes << " bytes at " << at
      << ") that fiber " << w.fiber << " wrote, and that write does not happen before the read";
  return out.str();
}

}  // namespace fiber::detail
