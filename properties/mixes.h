// The command mixes of the broker-versus-model state machine. Each is a list of op kinds
// drawn uniformly (a kind listed twice is drawn twice as often).
#pragma once

#include "state_machine.h"

namespace props {

using namespace oplang;  // NOLINT: op kinds read as lists below

/// Every operation; the kinds that build state listed twice. Each kind is >= 5% of steps.
inline void every_operation() {
  check_broker_matches_model<CreateTopic, DeleteTopic, Publish, Publish, Subscribe, Subscribe,
                             SubscribePull, Unsubscribe, Seek, Drain, Poll, Ack, Nack, Extend,
                             Expire, Advance, GetStats, GetDeadLetters>();
}

/// Push delivery: scripted handlers that fail, throw, unsubscribe, publish and seek from
/// inside, groups, filters, drains.
inline void push_delivery() {
  check_broker_matches_model<CreateTopic, Publish, Publish, Publish, Subscribe, Subscribe,
                             Unsubscribe, Seek, Drain, Drain, Drain, GetStats, GetDeadLetters>();
}

/// Pull delivery: workers polling, acking, nacking and extending around exact deadlines.
inline void pull_delivery() {
  check_broker_matches_model<CreateTopic, Publish, Publish, Publish, SubscribePull, SubscribePull,
                             Poll, Poll, Poll, Ack, Ack, Nack, Extend, Expire, Expire, Advance,
                             Advance, Seek, GetStats, GetDeadLetters>();
}

/// Retention and seek: small logs, subscriptions behind the oldest kept offset.
inline void retention_and_seek() {
  check_broker_matches_model<CreateTopic, Publish, Publish, Publish, Subscribe, SubscribePull, Seek,
                             Seek, Drain, Poll, Ack, GetStats>();
}

}  // namespace props
