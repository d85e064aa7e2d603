// The FiberRuntime of one run: fiber records, virtual time, the strategy's choices, the
// trace. Lives on the run's thread; every call comes from the running fiber.
#pragma once

#include <boost/fiber/context.hpp>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <string>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "fiber/run.h"
#include "fiber/schedule.h"
#include "memory_model.h"
#include "sync/sync_fiber.h"

namespace fiber::detail {

class ChoiceAlgorithm;

/// Decides, at every scheduling point, which fiber runs next; records the trace.
/// Not thread-safe: only the fibers of its own run call it, one at a time.
class Controller final : public broker::sync::FiberRuntime {
 public:
  Controller(const Schedule& schedule, const RunOptions& options, ChoiceAlgorithm* algo);

  // FiberRuntime
  int current() override { return current_; }
  void point(const char* label) override;
  bool park(const void* on, const char* label,
            std::optional<std::chrono::milliseconds> deadline) override;
  bool unpark(int id, const void* on) override;
  std::chrono::milliseconds now() override { return now_; }
  int spawn(std::function<void()> body) override;
  void join(int id) override;
  void detach(int id) override;
  void*& slot() override;
  std::uint64_t atomic_load(const void* at, std::uint64_t newest, std::memory_order order,
                            bool newest_only) override;
  void atomic_store(const void* at, std::uint64_t before, std::uint64_t value,
                    std::memory_order order) override;
  void atomic_rmw(const void* at, std::uint64_t before, std::uint64_t after,
                  std::memory_order order) override;
  std::memory_order order_at(std::memory_order written, const char* file, unsigned line) override;
  void atomic_forget(const void* at) override;
  void fence(std::memory_order order) override;
  void lock_acquired(const void* lock) override;
  void lock_released(const void* lock) override;
  void plain_access(const void* at, std::size_t bytes, bool write, const char* what) override;

  /// From the main context: runs the fibers until the run is over; fills the result.
  RunResult run_to_end();

 private:
  enum class State { kRunnable, kParked, kFinished };
  struct Fiber {
    int id = 0;
    boost::fibers::context::id context;
    State state = State::kRunnable;
    const void* on = nullptr;
    const char* label = "start";
    std::optional<std::chrono::milliseconds> deadline;
    bool timed_out = false;
    bool detached = false;
    void* slot = nullptr;
    std::uint64_t priority = 0;  // PCT
  };

  void finish(int id);
  int decide(const char* label);  // next fiber, or -1: the run is over
  void switch_to(int next);
  void go(int next);  // sets current_ and tells the algorithm; no switch
  std::vector<int> candidates();
  std::uint32_t choose(const std::vector<int>& cands);
  std::uint32_t choose_store(std::uint32_t n);  // weak memory: which store a load reads
  [[nodiscard]] bool modelled() const { return schedule_.weak && current_ >= 0; }
  void diagnose();

  Schedule schedule_;
  RunOptions options_;
  ChoiceAlgorithm* algo_;
  boost::fibers::context::id main_;
  std::deque<Fiber> fibers_;
  int current_ = -1;
  bool over_ = false;
  std::chrono::milliseconds now_{3'600'000};  // virtual; starts at one hour
  SplitMix64 rng_;
  std::size_t choice_pos_ = 0;
  std::vector<std::size_t> change_points_;  // PCT, ascending
  void* main_slot_ = nullptr;
  RunResult result_;
  MemoryModel memory_;
  // Per site (file pointer, line, written order): the order it runs with (sites.h), so the
  // registry's lock is taken once per site and run.
  struct SiteHash {
    std::size_t operator()(const std::tuple<const char*, unsigned, int>& k) const {
      return std::hash<const void*>()(std::get<0>(k)) ^ (std::get<1>(k) * 31u + std::get<2>(k));
    }
  };
  std::unordered_map<std::tuple<const char*, unsigned, int>, std::memory_order, SiteHash> sites_;
  bool yielding_ = false;  // at a "spin-wait" point: the running fiber steps aside
};

}  // namespace fiber::detail
