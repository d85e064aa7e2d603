// The Redis target's Lua scripts (conformance/redis_target.h): each call that reads and
// changes a consumer group runs as one script, so it is one atomic step on the server, also
// when several workers call at once. Every script takes KEYS[1] = the stream, KEYS[2] = the
// subscription's dead-letter stream.
#pragma once

#include <string>

namespace conformance::redis_scripts {

// Goes before each script below (with_bury). A message is dead: XACK it and XADD it to the
// dead-letter stream with its stream id, attempts, reason and the model time, and its own
// fields (payload "p", headers "h:<key>").
inline constexpr const char* kBury = R"lua(
local function bury(stream, dlq, group, id, attempts, reason, now)
  local entry = redis.call('XRANGE', stream, id, id)[1]
  redis.call('XACK', stream, group, id)
  local args = {dlq, '*', 'id', id, 'attempts', attempts, 'reason', reason, 'died_at', now}
  if entry then
    for i = 1, #entry[2] do args[#args + 1] = entry[2][i] end
  end
  redis.call('XADD', unpack(args))
end
)lua";

// ARGV: group, member, ack timeout (real ms), max deliveries (0: no limit), how many, model
// now, then the header filter as key, value pairs. Returns {{id, attempt, payload}, ...}:
// first what passed its deadline or was returned (XAUTOCLAIM, lowest id first), then new
// entries (XREADGROUP >); a new entry the filter does not match is XACKed, never offered.
// What passed its deadline with no deliveries left is dead-lettered first: the expire that
// did not run yet would have done that (R7).
inline constexpr const char* kPoll = R"lua(
local stream, dlq = KEYS[1], KEYS[2]
local group, member = ARGV[1], ARGV[2]
local timeout, maxd, want = tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])
local now = ARGV[6]
local function matches(fields)
  for i = 7, #ARGV, 2 do
    local found = false
    for j = 1, #fields, 2 do
      if fields[j] == 'h:' .. ARGV[i] and fields[j + 1] == ARGV[i + 1] then found = true end
    end
    if not found then return false end
  end
  return true
end
local function payload(fields)
  for j = 1, #fields, 2 do
    if fields[j] == 'p' then return fields[j + 1] end
  end
  return ''
end
if maxd > 0 then
  for _, p in ipairs(redis.call('XPENDING', stream, group, 'IDLE', timeout, '-', '+', 1000000)) do
    if p[4] >= maxd then bury(stream, dlq, group, p[1], p[4], 'ack deadline expired', now) end
  end
end
local out = {}
local cursor = '0-0'
for round = 1, 100000 do
  if #out >= want then break end
  local r = redis.call('XAUTOCLAIM', stream, group, member, timeout, cursor, 'COUNT', want - #out)
  for _, e in ipairs(r[2]) do
    local p = redis.call('XPENDING', stream, group, e[1], e[1], 1)[1]
    out[#out + 1] = {e[1], p[4], payload(e[2] or {})}
  end
  cursor = r[1]
  if cursor == '0-0' then break end
end
for round = 1, 100000 do
  if #out >= want then break end
  local r = redis.call('XREADGROUP', 'GROUP', group, member, 'COUNT', want - #out,
                       'STREAMS', stream, '>')
  if not r then break end
  for _, e in ipairs(r[1][2]) do
    if matches(e[2]) then
      out[#out + 1] = {e[1], 1, payload(e[2])}
    else
      redis.call('XACK', stream, group, e[1])
    end
  end
end
return out
)lua";

// ARGV: group, member, stream id, ack timeout (real ms), action (ack, nack, term, extend), max
// deliveries, model now, the idle time that marks a returned message, and optionally the
// reason a nack at max deliveries is dead-lettered with (default "nacked": a push handler's
// failure passes its own, R7). Returns 1 if done, 0
// if the member does not hold the message (another consumer's, past its deadline, returned,
// or not pending at all). A nack at max deliveries dead-letters (R7); any other nack makes
// the entry idle enough for the next XAUTOCLAIM, its delivery count unchanged (JUSTID). An
// extend claims it to the same member with idle time 0 (JUSTID: the count stays): its
// deadline, which the adapter reads as the idle time reaching the ack timeout, starts again.
inline constexpr const char* kSettle = R"lua(
local stream, dlq = KEYS[1], KEYS[2]
local group, member, id = ARGV[1], ARGV[2], ARGV[3]
local timeout, action, maxd = tonumber(ARGV[4]), ARGV[5], tonumber(ARGV[6])
local now, returned, failed = ARGV[7], ARGV[8], ARGV[9] or 'nacked'
local p = redis.call('XPENDING', stream, group, id, id, 1)[1]
if not p or p[2] ~= member or p[3] >= timeout then return 0 end
if action == 'ack' then
  redis.call('XACK', stream, group, id)
elseif action == 'term' then
  bury(stream, dlq, group, id, p[4], 'terminated', now)
elseif action == 'extend' then
  redis.call('XCLAIM', stream, group, member, 0, id, 'IDLE', 0, 'JUSTID')
elseif maxd > 0 and p[4] >= maxd then
  bury(stream, dlq, group, id, p[4], failed, now)
else
  redis.call('XCLAIM', stream, group, member, 0, id, 'IDLE', returned, 'JUSTID')
end
return 1
)lua";

// ARGV: group, ack timeout (real ms), max deliveries, model now, the idle time that marks a
// returned message. Every entry past its deadline and not yet returned is returned (as a
// nack does) or, at max deliveries, dead-lettered. Returns {{id, dead (0/1)}, ...}, lowest
// id first.
inline constexpr const char* kExpire = R"lua(
local stream, dlq = KEYS[1], KEYS[2]
local group, timeout, maxd = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
local now, returned = ARGV[4], tonumber(ARGV[5])
local out = {}
for _, p in ipairs(redis.call('XPENDING', stream, group, 'IDLE', timeout, '-', '+', 1000000)) do
  if p[3] < returned then
    if maxd > 0 and p[4] >= maxd then
      bury(stream, dlq, group, p[1], p[4], 'ack deadline expired', now)
      out[#out + 1] = {p[1], 1}
    else
      redis.call('XCLAIM', stream, group, p[2], 0, p[1], 'IDLE', returned, 'JUSTID')
      out[#out + 1] = {p[1], 0}
    end
  end
end
return out
)lua";

/// The script as sent: kBury, then body.
inline std::string with_bury(const char* body) { return std::string(kBury) + body; }

}  // namespace conformance::redis_scripts
