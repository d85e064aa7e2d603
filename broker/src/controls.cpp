// BrokerImpl: redrive and purge (SPEC R25), pause (R26), lag (R27), seek by time (R28).
#include <algorithm>

#include "broker_impl.h"

namespace broker {

std::size_t BrokerImpl::redrive(const std::string& topic, const std::string& name) {
  StatePtr s = find_state(topic, name);
  std::size_t moved = 0;
  std::uint64_t saved = 0;
  bool wake = false;
  {
    sync::MutexLock lock(s->mu);
    moved = s->redrive();
    saved = s->save_position(true);  // like a seek: durable when it returns
    wake = moved > 0 && s->waiting_polls > 0;
  }
  if (wake) s->log()->wake_waiters();
  s->wait_saved(saved);
  if (moved > 0 && s->config().kind == Kind::kPush) dispatcher_->notify(s);
  return moved;
}

std::vector<Offset> BrokerImpl::redrive_to(const std::string& topic, const std::string& name,
                                           const std::string& to_topic) {
  StatePtr s = find_state(topic, name);
  find_any_topic(to_topic);  // UnknownTopic before anything changes
  std::vector<DeadLetter> dead;
  {
    sync::MutexLock lock(s->mu);
    s->catch_up();
    dead = s->dead_letters();
  }
  // Publish first, drop after: a failure or a crash in between leaves a dead letter both
  // republished and dead, never neither (at least once). publish takes the other topic's
  // locks, so no lock of this subscription is held meanwhile.
  std::vector<Offset> out;
  std::exception_ptr failure;
  for (const DeadLetter& d : dead) {
    try {
      out.push_back(
          publish(to_topic, d.message->payload(), d.message->headers(), d.message->key()));
    } catch (...) {  // to_topic deleted meanwhile, or an I/O error: keep the rest
      failure = std::current_exception();
      break;
    }
  }
  dead.resize(out.size());
  std::uint64_t saved = 0;
  {
    sync::MutexLock lock(s->mu);
    s->drop_dead_letters(dead, /*redriven=*/true);
    saved = s->save_position(true);
  }
  s->wait_saved(saved);
  if (failure) std::rethrow_exception(failure);
  return out;
}

std::size_t BrokerImpl::purge_dead_letters(const std::string& topic, const std::string& name) {
  StatePtr s = find_state(topic, name);
  std::size_t purged = 0;
  std::uint64_t saved = 0;
  {
    sync::MutexLock lock(s->mu);
    s->catch_up();
    const std::vector<DeadLetter> all = s->dead_letters();  // a copy: dropping edits the list
    purged = s->drop_dead_letters(all, /*redriven=*/false);
    saved = s->save_position(true);
  }
  s->wait_saved(saved);
  return purged;
}

bool BrokerImpl::set_paused(const std::string& topic, const std::string& name, bool paused) {
  StatePtr s = find_state(topic, name);
  bool changed = false;
  bool wake = false;
  {
    sync::MutexLock lock(s->mu);
    changed = s->set_paused(paused);
    wake = changed && !paused && s->waiting_polls > 0;
  }
  if (wake) s->log()->wake_waiters();
  // A lane that found nothing while paused sleeps until woken.
  if (changed && !paused && s->config().kind == Kind::kPush) dispatcher_->notify(s);
  return changed;
}

Lag BrokerImpl::lag(const std::string& topic, const std::string& name, Time now) const {
  if (const std::shared_ptr<Topic> t = find_any_topic(topic); !t->partitions.empty()) {
    Lag total;  // R29: the partitions' counts summed, the oldest age of any
    for (std::uint32_t p = 0; p < t->partitions.size(); ++p) {
      const Lag l = lag(partition_name(topic, p), name, now);
      total.messages += l.messages;
      total.oldest_age = std::max(total.oldest_age, l.oldest_age);
    }
    return total;
  }
  StatePtr s = find_state(topic, name);
  sync::MutexLock lock(s->mu);
  return s->lag(now);
}

Offset BrokerImpl::offset_for_time(const std::string& topic, Time time) const {
  if (time > clock_->now()) throw InvalidArgument("time must not be after the clock's now");
  std::shared_ptr<Topic> t = find_topic(topic);
  return t->log->offset_for_time(time);
}

Offset BrokerImpl::seek_to_time(const std::string& topic, const std::string& name, Time time) {
  if (time > clock_->now()) throw InvalidArgument("time must not be after the clock's now");
  StatePtr s = find_state(topic, name);
  std::uint64_t saved = 0;
  Offset offset = 0;
  bool wake = false;
  {
    sync::MutexLock lock(s->mu);
    offset = s->log()->offset_for_time(time);  // may throw IoError: then nothing changed (R14)
    s->catch_up();
    s->seek(offset);
    saved = s->save_position(true);  // a seek is durable when it returns (R19)
    wake = s->waiting_polls > 0;
  }
  if (wake) s->log()->wake_waiters();
  s->wait_saved(saved);
  if (s->config().kind == Kind::kPush) dispatcher_->notify(s);
  return offset;
}

}  // namespace broker
