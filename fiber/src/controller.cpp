// Scheduling decisions, virtual time and the trace of one run.
#include "controller.h"

#include <algorithm>
#include <boost/fiber/fiber.hpp>
#include <boost/fiber/fixedsize_stack.hpp>
#include <boost/fiber/operations.hpp>
#include <cstring>
#include <sstream>

#include "choice_algorithm.h"
#include "sites.h"

namespace fiber::detail {

namespace {

constexpr std::uint64_t kFnvOffset = 14695981039346656037ULL;
constexpr std::uint64_t kFnvPrime = 1099511628211ULL;

void hash_bytes(std::uint64_t& h, const void* data, std::size_t n) {
  const auto* p = static_cast<const unsigned char*>(data);
  for (std::size_t i = 0; i < n; ++i) h = (h ^ p[i]) * kFnvPrime;
}

void hash_event(std::uint64_t& h, const TraceEvent& e) {
  hash_bytes(h, &e.fiber, sizeof e.fiber);
  for (const char* c = e.label; *c != '\0'; ++c) hash_bytes(h, c, 1);
  hash_bytes(h, &e.next, sizeof e.next);
}

std::string what_of(const std::exception_ptr& e) {
  try {
    std::rethrow_exception(e);
  } catch (const std::exception& x) {
    return x.what();
  } catch (...) {
    return "non-std exception";
  }
}

}  // namespace

Controller::Controller(const Schedule& schedule, const RunOptions& options, ChoiceAlgorithm* algo)
    : schedule_(schedule), options_(options), algo_(algo), rng_{schedule.seed} {
  result_.schedule = schedule;
  result_.trace_hash = kFnvOffset;
  if (schedule_.strategy == Strategy::kPct) {
    for (int i = 1; i < schedule_.depth; ++i)
      change_points_.push_back(1 + rng_.next() % schedule_.steps);
    std::sort(change_points_.begin(), change_points_.end());
  }
}

void Controller::point(const char* label) {
  // A spinning fiber steps aside when another can run: a free switch, as CHESS treats a
  // yield, so a spin never starves the fiber it waits for.
  yielding_ = std::strcmp(label, "spin-wait") == 0;
  const int next = decide(label);
  yielding_ = false;
  switch_to(next);
}

bool Controller::park(const void* on, const char* label,
                      std::optional<std::chrono::milliseconds> deadline) {
  Fiber& f = fibers_[current_];
  f.state = State::kParked;
  f.on = on;
  f.label = label;
  f.deadline = deadline;
  f.timed_out = false;
  switch_to(decide(label));
  return !f.timed_out;
}

bool Controller::unpark(int id, const void* on) {
  Fiber& f = fibers_[id];
  if (f.state != State::kParked || f.on != on) return false;
  f.state = State::kRunnable;
  f.on = nullptr;
  f.deadline.reset();
  return true;
}

int Controller::spawn(std::function<void()> body) {
  const int id = static_cast<int>(fibers_.size());
  Fiber& f = fibers_.emplace_back();
  f.id = id;
  f.priority = static_cast<std::uint64_t>(schedule_.depth) + 1 + (rng_.next() >> 8);
  boost::fibers::fiber boost_fiber(
      std::allocator_arg, boost::fibers::fixedsize_stack(options_.stack_bytes),
      [this, id, body = std::move(body)]() mutable {
        try {
          std::function<void()> local = std::move(body);
          local();
        } catch (...) {
          if (!result_.error) {
            result_.error = std::current_exception();
            result_.error_fiber = "fiber " + std::to_string(id) + ": " + what_of(result_.error);
          }
        }
        finish(id);
      });
  f.context = boost_fiber.get_id();
  boost_fiber.detach();
  if (schedule_.weak) memory_.spawned(current_, id);
  if (current_ != -1) point("spawn");
  return id;
}

void Controller::join(int id) {
  point("join");
  while (fibers_[id].state != State::kFinished) park(&fibers_[id], "join-wait", std::nullopt);
  if (modelled()) memory_.joined(current_, id);
}

void Controller::detach(int id) { fibers_[id].detached = true; }

void*& Controller::slot() { return current_ == -1 ? main_slot_ : fibers_[current_].slot; }

void Controller::finish(int id) {
  Fiber& f = fibers_[id];
  f.state = State::kFinished;
  f.label = "finished";
  for (Fiber& g : fibers_) unpark(g.id, &f);
  go(decide("finish"));  // returning ends the fiber; Boost then resumes the chosen one
}

std::uint64_t Controller::atomic_load(const void* at, std::uint64_t newest, std::memory_order order,
                                      bool newest_only) {
  if (!modelled()) return newest;
  const std::uint32_t n = memory_.readable(current_, at, newest, order);
  const std::uint32_t k = newest_only ? 0 : choose_store(n);
  if (k != 0) ++result_.stale_reads;
  return memory_.read(current_, at, k, order);
}

void Controller::atomic_store(const void* at, std::uint64_t before, std::uint64_t value,
                              std::memory_order order) {
  if (modelled()) memory_.store(current_, at, before, value, order);
}

void Controller::atomic_rmw(const void* at, std::uint64_t before, std::uint64_t after,
                            std::memory_order order) {
  if (modelled()) memory_.rmw(current_, at, before, after, order);
}

std::memory_order Controller::order_at(std::memory_order written, const char* file, unsigned line) {
  const auto key = std::make_tuple(file, line, static_cast<int>(written));
  auto it = sites_.find(key);
  if (it == sites_.end()) it = sites_.emplace(key, order_at_site(written, file, line)).first;
  return it->second;
}

void Controller::atomic_forget(const void* at) { memory_.forget(at); }

void Controller::fence(std::memory_order order) {
  if (modelled()) memory_.fence(current_, order);
}

void Controller::lock_acquired(const void* lock) {
  if (modelled()) memory_.lock_acquired(current_, lock);
}

void Controller::lock_released(const void* lock) {
  if (modelled()) memory_.lock_released(current_, lock);
}

void Controller::plain_access(const void* at, std::size_t bytes, bool write, const char* what) {
  if (!modelled()) return;
  std::string race = memory_.plain(current_, at, bytes, write, what);
  if (!race.empty() && result_.data_race.empty()) result_.data_race = std::move(race);
}

std::uint32_t Controller::choose_store(std::uint32_t n) {
  if (n < 2) return 0;
  std::uint64_t c = 0;
  if (schedule_.strategy == Strategy::kWalk && choice_pos_ < schedule_.choices.size()) {
    c = schedule_.choices[choice_pos_];
  } else if (schedule_.seed != 0) {
    // Drawn: half of the loads read the newest, so a spin that waits for a store ends.
    const std::uint64_t r = rng_.next();
    c = (r & 1) != 0 ? 0 : (r >> 1);
  }
  if (schedule_.strategy == Strategy::kWalk) ++choice_pos_;
  const auto idx = static_cast<std::uint32_t>(c % n);
  result_.decisions.push_back({n, true, idx, true});
  result_.choices.push_back(idx);
  hash_bytes(result_.trace_hash, &idx, sizeof idx);
  return idx;
}

std::vector<int> Controller::candidates() {
  std::vector<int> cands;
  const int n = static_cast<int>(fibers_.size());
  const bool running = current_ >= 0 && fibers_[current_].state == State::kRunnable;
  if (running && yielding_) {
    for (int i = 1; i < n; ++i) {
      const int id = (current_ + i) % n;
      if (fibers_[id].state == State::kRunnable) cands.push_back(id);
    }
    if (!cands.empty()) return cands;
  }
  const int start = running ? current_ : current_ + 1;
  for (int i = 0; i < n; ++i) {
    const int id = (start + i) % n;
    if (fibers_[id].state == State::kRunnable) cands.push_back(id);
  }
  return cands;
}

std::uint32_t Controller::choose(const std::vector<int>& cands) {
  const auto n = static_cast<std::uint32_t>(cands.size());
  if (n < 2) return 0;
  std::uint32_t idx = 0;
  if (schedule_.strategy == Strategy::kPct) {
    for (std::uint32_t i = 1; i < n; ++i) {
      if (fibers_[cands[i]].priority > fibers_[cands[idx]].priority) idx = i;
    }
  } else {
    std::uint64_t c = 0;
    if (choice_pos_ < schedule_.choices.size()) {
      c = schedule_.choices[choice_pos_];
    } else if (schedule_.seed != 0) {
      c = rng_.next();
    }
    ++choice_pos_;
    idx = static_cast<std::uint32_t>(c % n);
  }
  // Stepping aside from a spin is free, as at a blocking point.
  const bool running = current_ >= 0 && fibers_[current_].state == State::kRunnable && !yielding_;
  result_.decisions.push_back({n, running, idx});
  result_.choices.push_back(idx);
  return idx;
}

int Controller::decide(const char* label) {
  const std::size_t step = ++result_.steps;
  int next = -1;
  if (step > options_.max_steps) {
    result_.outcome = Outcome::kStepLimit;
  } else {
    for (std::size_t j = 0; j < change_points_.size(); ++j) {
      if (change_points_[j] == step && current_ >= 0) {
        fibers_[current_].priority = static_cast<std::uint64_t>(schedule_.depth) - 1 - j;
      }
    }
    // PCT: a spinning fiber drops below every other, or two spinners of high priority
    // would hand the CPU to each other forever while the holder they wait for never runs.
    if (yielding_ && current_ >= 0) fibers_[current_].priority = 0;
    std::vector<int> cands = candidates();
    if (cands.empty()) {  // advance virtual time to the earliest deadline
      std::optional<std::chrono::milliseconds> earliest;
      for (const Fiber& f : fibers_) {
        if (f.state == State::kParked && f.deadline && (!earliest || *f.deadline < *earliest))
          earliest = f.deadline;
      }
      if (earliest) {
        now_ = std::max(now_, *earliest);
        for (Fiber& f : fibers_) {
          if (f.state == State::kParked && f.deadline && *f.deadline <= now_) {
            f.state = State::kRunnable;
            f.on = nullptr;
            f.deadline.reset();
            f.timed_out = true;
          }
        }
        cands = candidates();
      }
    }
    if (cands.empty()) {
      const bool all_done = std::all_of(fibers_.begin(), fibers_.end(),
                                        [](const Fiber& f) { return f.state == State::kFinished; });
      result_.outcome = all_done ? Outcome::kCompleted : Outcome::kDeadlock;
    } else {
      next = cands[choose(cands)];
    }
  }
  result_.trace.push_back({current_, label, next});
  hash_event(result_.trace_hash, result_.trace.back());
  if (next == -1) {
    over_ = true;
    if (result_.outcome != Outcome::kCompleted) diagnose();
  }
  return next;
}

void Controller::go(int next) {
  current_ = next;
  algo_->want(next == -1 ? main_ : fibers_[next].context);
}

void Controller::switch_to(int next) {
  if (next == current_) return;
  go(next);
  boost::this_fiber::yield();
}

void Controller::diagnose() {
  std::ostringstream out;
  for (const Fiber& f : fibers_) {
    if (f.state == State::kFinished) continue;
    out << "  fiber " << f.id << (f.state == State::kParked ? " parked at " : " runnable after ")
        << f.label << (f.deadline ? " (timed)" : "") << "\n";
  }
  const std::size_t n = result_.trace.size();
  out << "  last scheduling points:";
  for (std::size_t i = n > 12 ? n - 12 : 0; i < n; ++i) {
    out << " " << result_.trace[i].fiber << ":" << result_.trace[i].label;
  }
  out << "\n";
  result_.report = out.str();
}

RunResult Controller::run_to_end() {
  main_ = boost::this_fiber::get_id();
  const int first = decide("start");
  if (first != -1) {
    go(first);
    while (!over_) boost::this_fiber::yield();
  }
  result_.virtual_end = now_;
  return std::move(result_);
}

}  // namespace fiber::detail
