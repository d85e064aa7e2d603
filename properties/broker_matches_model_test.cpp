// The broker (synchronous dispatcher) is checked against the reference model on random
// command sequences: every result, error and handler call must be equal after every step.
// A failure prints the whole script (for `spec-trace`) and the line to reproduce it:
//   RC_PARAMS="reproduce=..." build/default/properties/properties_test --gtest_filter=...
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include "mixes.h"

namespace props {
namespace {

RC_GTEST_PROP(BrokerMatchesModel, EveryOperationInAnyOrder, ()) { every_operation(); }

RC_GTEST_PROP(BrokerMatchesModel, PushDeliveryWithMisbehavingHandlers, ()) { push_delivery(); }

RC_GTEST_PROP(BrokerMatchesModel, PullDeliveryAroundDeadlines, ()) { pull_delivery(); }

RC_GTEST_PROP(BrokerMatchesModel, RetentionGapsAndSeeks, ()) { retention_and_seek(); }

RC_GTEST_PROP(BrokerMatchesModel, RedrivePausesLagAndSeeksByTime, ()) { consumer_controls(); }

RC_GTEST_PROP(BrokerMatchesModel, ControlsOnEveryOption, ()) { controls_on_every_option(); }

RC_GTEST_PROP(BrokerMatchesModel, PartitionedTopicsRouteByKey, ()) { partitioned_topics(); }

RC_GTEST_PROP(BrokerMatchesModel, OrderedWorkersKeepEachKeysOrder, ()) { ordered_workers(); }

RC_GTEST_PROP(BrokerMatchesModel, ConsumerGroupsShareAndFencePartitions, ()) { consumer_groups(); }
RC_GTEST_PROP(BrokerMatchesModel, PushConsumerGroupsDeliverEachPartitionToItsOwner, ()) {
  push_consumer_groups();
}

RC_GTEST_PROP(BrokerMatchesModel, DurableStateSurvivesRestartsAndCrashes, ()) {
  durable_operation();
}

RC_GTEST_PROP(BrokerMatchesModel, DurableDeliveryAcrossRestarts, ()) { durable_delivery(); }

}  // namespace
}  // namespace props
