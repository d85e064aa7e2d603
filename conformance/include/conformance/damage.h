// Damage at rest, the fault kit's way: one bit flipped, or one file cut short, somewhere in
// a stopped server's data directory, at a place drawn from a number (so a schedule replays
// it byte for byte).
#pragma once

#include <cstdint>
#include <string>

namespace conformance {

/// Damages one non-empty regular file under dir (sorted by path, chosen by `where`): three
/// draws in four flip one bit of one byte, one in four cuts the file at a byte before its
/// end; all chosen from `where`. Returns what it did ("flipped bit B of byte N of PATH",
/// "cut PATH from S to N bytes", PATH relative to dir), or "nothing to damage" if no file
/// has a byte. Throws std::runtime_error if a file cannot be read or written.
std::string damage_at_rest(const std::string& dir, std::uint64_t where);

}  // namespace conformance
