// The C++20 memory model of one fiber run, bounded as Rust's loom bounds it: each atomic
// keeps its last kHistory stores, each with the clock of its thread; a load may read any of
// them that coherence and happens-before allow, and which one is a choice of the schedule.
// Happens-before is tracked with vector clocks: release/acquire pairs, release sequences
// (read-modify-writes carry them on), fences, locks, spawn and join. seq_cst operations and
// fences also join one global clock both ways, which keeps them in one total order (and is
// stronger than C++ for mixes of seq_cst and weaker accesses to other objects: the model
// explores no execution C++ forbids, but may miss some it allows there). No value is made
// out of thin air: a load reads a store that was made.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <string>
#include <unordered_map>
#include <vector>

namespace fiber::detail {

/// One count per fiber: how much of each fiber's history happens before a point.
class VectorClock {
 public:
  /// Fiber f's count (0 when nothing of f is known).
  [[nodiscard]] std::uint32_t at(int f) const {
    return f >= 0 && static_cast<std::size_t>(f) < counts_.size() ? counts_[f] : 0;
  }
  /// Fiber f moves on: what it does next is not covered by what it released before.
  void tick(int f);
  /// Sets f's count to at least c.
  void raise(int f, std::uint32_t c);
  /// Everything o covers is covered.
  void join(const VectorClock& o);

 private:
  std::vector<std::uint32_t> counts_;
};

/// The stores, clocks and plain writes of one run. Not thread-safe: the Controller calls
/// it from the running fiber only. Never throws but std::bad_alloc.
class MemoryModel {
 public:
  /// Stores kept per atomic (loom keeps 7): a load reads one of at most this many.
  static constexpr std::size_t kHistory = 8;

  /// Fiber `child` starts; it happens after what `parent` did so far (-1: the run's start).
  void spawned(int parent, int child);
  /// `joiner` has seen fiber `done` finish: it happens after all of it.
  void joined(int joiner, int done);
  void lock_acquired(int f, const void* lock);
  void lock_released(int f, const void* lock);

  /// How many stores fiber f's load of `at` may read: the newest and the older ones that
  /// neither coherence (f saw a later one) nor happens-before (a later one happens before
  /// the load) rules out. At least 1. `newest` starts the atomic's history if it has none.
  std::uint32_t readable(int f, const void* at, std::uint64_t newest, std::memory_order order);
  /// Fiber f's load reads the k-th newest store (0: the newest; k < readable()). Returns
  /// its value; an acquire load takes its release clock.
  std::uint64_t read(int f, const void* at, std::uint32_t k, std::memory_order order);
  /// Fiber f stores `value`; `before` starts the history if it has none.
  void store(int f, const void* at, std::uint64_t before, std::uint64_t value,
             std::memory_order order);
  /// Fiber f's read-modify-write read the newest store (`before`) and stored `after`,
  /// continuing the release sequence of the store it read.
  void rmw(int f, const void* at, std::uint64_t before, std::uint64_t after,
           std::memory_order order);
  /// The atomic at `at` is new or gone.
  void forget(const void* at) { atomics_.erase(at); }
  void fence(int f, std::memory_order order);

  /// A plain access by fiber f. Returns "" or the data race it makes: a read that is not
  /// happens-after the last write of the same address by another fiber.
  std::string plain(int f, const void* at, std::size_t bytes, bool write, const char* what);

 private:
  struct Store {
    std::uint64_t value = 0;
    int fiber = -1;           // -1: the value the atomic had when the run first met it
    std::uint32_t stamp = 0;  // the fiber's own count when it stored
    VectorClock release;      // what an acquire that reads it (or a later RMW) takes
  };
  struct History {
    std::deque<Store> stores;         // the newest last; at most kHistory
    std::uint64_t first = 0;          // modification-order index of stores.front()
    std::vector<std::uint64_t> seen;  // per fiber: 1 + newest index it read or wrote
    [[nodiscard]] std::uint64_t newest() const { return first + stores.size() - 1; }
  };
  struct Thread {
    VectorClock clock;
    VectorClock fence_release;  // clock at its last release fence
    VectorClock acquire_later;  // releases its relaxed loads read, for an acquire fence
  };
  struct PlainWrite {
    int fiber = -1;
    std::uint32_t stamp = 0;
  };

  Thread& thread(int f);
  History& history(const void* at, std::uint64_t initial);
  void note_seen(History& h, int f, std::uint64_t index);
  void append(History& h, int f, std::uint64_t value, VectorClock release);
  void sc_join(int f);

  std::vector<Thread> threads_;
  std::unordered_map<const void*, History> atomics_;
  std::unordered_map<const void*, VectorClock> locks_;
  std::unordered_map<const void*, PlainWrite> plain_;
  VectorClock sc_;  // the seq_cst order's clock
};

}  // namespace fiber::detail
