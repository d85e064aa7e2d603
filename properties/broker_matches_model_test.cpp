// The broker (synchronous dispatcher) is checked against the reference model on random
// command sequences: every result, error and handler call must be equal after every step.
// A failure prints the shrunk sequence as a script for `spec-trace`, and the seed:
//   RC_PARAMS="reproduce=..." ./properties_test --gtest_filter=...
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include "state_machine.h"

namespace props {
namespace {

using namespace oplang;  // NOLINT: the op kinds read as a list below

// Push delivery: scripted handlers that fail, throw, unsubscribe, publish and seek from
// inside, groups, filters, drains.
RC_GTEST_PROP(BrokerMatchesModel, PushDeliveryWithMisbehavingHandlers, ()) {
  check_broker_matches_model<CreateTopic, Publish, Publish, Subscribe, Subscribe, Unsubscribe,
                             Seek, Drain, Drain, GetStats, GetDeadLetters>();
}

// Pull delivery: workers polling, acking, nacking and extending around exact deadlines.
RC_GTEST_PROP(BrokerMatchesModel, PullDeliveryAroundDeadlines, ()) {
  check_broker_matches_model<CreateTopic, Publish, Publish, SubscribePull, Poll, Poll, Ack, Nack,
                             Extend, Expire, Advance, Advance, Seek, GetStats, GetDeadLetters>();
}

// Retention and seek: small logs, subscriptions behind the oldest kept offset.
RC_GTEST_PROP(BrokerMatchesModel, RetentionGapsAndSeeks, ()) {
  check_broker_matches_model<CreateTopic, CreateTopic, Publish, Publish, Publish, Subscribe,
                             SubscribePull, Seek, Seek, Drain, Poll, Ack, GetStats>();
}

}  // namespace
}  // namespace props
