// SPEC R30's properties of partition assignment, on random groups and histories: every
// partition has exactly one owner, shares differ by at most one, sticky moves no more than
// the model's minimum, cooperative revokes only what moves and eager everything, and a
// chain of joins and leaves keeps all of it.
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <set>

#include "broker/assignment.h"
#include "broker/errors.h"
#include "model/assignment.h"
#include "uniform.h"

namespace props {
namespace {

using broker::Assignment;
using broker::Assignor;

const std::vector<std::string> kNames = {"a", "b", "c", "d", "e", "f", "g"};
const std::vector<Assignor> kAssignors = {Assignor::kRange, Assignor::kRoundRobin,
                                          Assignor::kSticky, Assignor::kCooperativeSticky};

rc::Gen<std::vector<std::string>> gen_members() {
  return rc::gen::map(rc::gen::container<std::vector<int>>(props::uniform_in(0, 7)),
                      [](std::vector<int> picks) {
                        std::vector<std::string> out;
                        for (int p : picks) {
                          if (std::find(out.begin(), out.end(), kNames[p]) == out.end())
                            out.push_back(kNames[p]);
                        }
                        return out;
                      });
}

// A history: the assignment a chain of rebalances (joins and leaves) left behind, or now
// and then an arbitrary one (partitions out of range, listed twice, members gone).
Assignment gen_previous(Assignor assignor, std::uint32_t n) {
  Assignment previous;
  if (props::one_in(4)) {
    for (const std::string& m : *gen_members()) {
      previous[m] = *rc::gen::container<std::vector<std::uint32_t>>(
          props::uniform_in<std::uint32_t>(0, n + 2));
    }
    return previous;
  }
  const int steps = *props::uniform_in(0, 4);
  for (int i = 0; i < steps; ++i) {
    previous = broker::rebalance(assignor, *gen_members(), n, previous).assignment;
  }
  return previous;
}

std::string show(const Assignment& a) {
  std::string out;
  for (const auto& [m, ps] : a) {
    out += m + ":[";
    for (std::uint32_t p : ps) out += std::to_string(p) + " ";
    out += "] ";
  }
  return out;
}

void check_exactly_one_owner_and_balanced(const std::vector<std::string>& members, std::uint32_t n,
                                          const Assignment& a) {
  RC_ASSERT(a.size() == members.size());
  if (members.empty()) return;  // no one to own anything
  std::multiset<std::uint32_t> owned;
  std::size_t lo = SIZE_MAX, hi = 0;
  for (const std::string& m : members) {
    auto it = a.find(m);
    RC_ASSERT(it != a.end());
    RC_ASSERT(std::is_sorted(it->second.begin(), it->second.end()));
    owned.insert(it->second.begin(), it->second.end());
    lo = std::min(lo, it->second.size());
    hi = std::max(hi, it->second.size());
  }
  std::multiset<std::uint32_t> all;
  for (std::uint32_t p = 0; p < n; ++p) all.insert(p);
  RC_ASSERT(owned == all);  // each partition exactly once
  RC_ASSERT(hi - lo <= 1);  // balanced
}

// Partitions whose previous owner (the first in join order that listed it) is still a
// member and owns it no more.
std::uint32_t moves(const std::vector<std::string>& members, const Assignment& previous,
                    const Assignment& now) {
  std::map<std::uint32_t, std::string> before, after;
  for (const auto& [m, ps] : now) {
    for (std::uint32_t p : ps) after[p] = m;
  }
  for (const std::string& m : members) {  // a member gone: its partitions move anyway
    if (!previous.contains(m)) continue;
    for (std::uint32_t p : previous.at(m)) before.try_emplace(p, m);
  }
  std::uint32_t out = 0;
  for (const auto& [p, m] : before) {
    if (after.contains(p) && after[p] != m) ++out;
  }
  return out;
}

RC_GTEST_PROP(Assignment, R30EveryPartitionHasOneOwnerAndSharesDifferByAtMostOne, ()) {
  const Assignor assignor = *rc::gen::elementOf(kAssignors);
  const std::vector<std::string> members = *gen_members();
  const auto n = *props::uniform_in<std::uint32_t>(0, 13);
  const Assignment previous = gen_previous(assignor, n);
  const broker::Rebalance r = broker::rebalance(assignor, members, n, previous);
  RC_LOG() << "previous " << show(previous) << "\nnow " << show(r.assignment) << "\n";
  check_exactly_one_owner_and_balanced(members, n, r.assignment);
}

RC_GTEST_PROP(Assignment, R30StickyMovesNoMorePartitionsThanTheModelsMinimum, ()) {
  const Assignor assignor = *rc::gen::element(Assignor::kSticky, Assignor::kCooperativeSticky);
  const std::vector<std::string> members = *gen_members();
  const auto n = *props::uniform_in<std::uint32_t>(0, 13);
  const Assignment previous = gen_previous(assignor, n);
  const broker::Rebalance r = broker::rebalance(assignor, members, n, previous);
  RC_LOG() << "previous " << show(previous) << "\nnow " << show(r.assignment) << "\n";
  RC_ASSERT(moves(members, previous, r.assignment) == model::minimal_moves(members, n, previous));
}

RC_GTEST_PROP(Assignment, R30CooperativeRevokesOnlyWhatMovesEagerEverything, ()) {
  const Assignor assignor = *rc::gen::elementOf(kAssignors);
  const std::vector<std::string> members = *gen_members();
  const auto n = *props::uniform_in<std::uint32_t>(0, 13);
  const Assignment previous = gen_previous(assignor, n);
  const broker::Rebalance r = broker::rebalance(assignor, members, n, previous);
  RC_LOG() << "previous " << show(previous) << "\nnow " << show(r.assignment) << "\nrevoked "
           << show(r.revoked) << "\n";
  for (const auto& [member, had] : previous) {
    std::set<std::uint32_t> expect(had.begin(), had.end());
    if (assignor == Assignor::kCooperativeSticky && r.assignment.contains(member)) {
      for (std::uint32_t p : r.assignment.at(member)) expect.erase(p);
    }
    const std::vector<std::uint32_t>& got = r.revoked.at(member);
    RC_ASSERT(std::set<std::uint32_t>(got.begin(), got.end()) == expect);
  }
  // Nothing is given to a member that another member still has to give up.
  for (const auto& [member, mine] : r.assignment) {
    for (std::uint32_t p : mine) {
      for (const auto& [other, had] : previous) {
        if (other == member || !std::count(had.begin(), had.end(), p)) continue;
        const std::vector<std::uint32_t>& gone = r.revoked.at(other);
        RC_ASSERT(std::count(gone.begin(), gone.end(), p) > 0);
      }
    }
  }
}

// Seed 003's ConsumerGroupAssignment.assign: partition i goes to members.get(i % size).
TEST(Assignment, R30Seed003AssignIsRoundRobinInMemberOrder) {
  const broker::Rebalance r = broker::rebalance(Assignor::kRoundRobin, {"A", "B"}, 4);
  EXPECT_EQ(r.assignment, (Assignment{{"A", {0, 2}}, {"B", {1, 3}}}));
  const broker::Rebalance three = broker::rebalance(Assignor::kRoundRobin, {"A", "B", "C"}, 4);
  EXPECT_EQ(three.assignment, (Assignment{{"A", {0, 3}}, {"B", {1}}, {"C", {2}}}));
  const broker::Rebalance range = broker::rebalance(Assignor::kRange, {"A", "B", "C"}, 4);
  EXPECT_EQ(range.assignment, (Assignment{{"A", {0, 1}}, {"B", {2}}, {"C", {3}}}));
}

TEST(Assignment, R30AStickyJoinMovesOnlyTheNewMembersShare) {
  const Assignment two = broker::rebalance(Assignor::kSticky, {"A", "B"}, 6).assignment;
  const broker::Rebalance three =
      broker::rebalance(Assignor::kCooperativeSticky, {"A", "B", "C"}, 6, two);
  EXPECT_EQ(moves({"A", "B", "C"}, two, three.assignment), 2u);
  EXPECT_EQ(three.assignment.at("C").size(), 2u);
  std::size_t revoked = 0;
  for (const auto& [m, ps] : three.revoked) revoked += ps.size();
  EXPECT_EQ(revoked, 2u);  // eager would revoke all 6
}

TEST(Assignment, R30BadMemberNamesAreInvalidArgument) {
  EXPECT_THROW(broker::rebalance(Assignor::kRange, {"a", "a"}, 3), broker::InvalidArgument);
  EXPECT_THROW(broker::rebalance(Assignor::kRange, {""}, 3), broker::InvalidArgument);
  EXPECT_TRUE(broker::rebalance(Assignor::kSticky, {}, 3).assignment.empty());
}

}  // namespace
}  // namespace props
