// Writing and checking the records Messages are read from (the layout is in message.h).
#pragma once

#include <cstddef>
#include <string_view>

#include "broker/message.h"

namespace broker::record {

/// The bytes a record of these fields takes. Throws std::length_error if a field is
/// 4 GiB or longer (its length would not fit the record's u32).
std::size_t size_of(std::string_view payload, const Headers& headers, std::string_view key);
/// Writes the record into out, which has size_of(payload, headers, key) bytes.
void write(unsigned char* out, Offset offset, Time publish_time, std::string_view payload,
           const Headers& headers, std::string_view key);
/// The length of the well-formed record `bytes` starts with, or 0 if they do not start
/// with one (a length runs past their end). Never reads past bytes.
std::size_t length(std::string_view bytes);
/// The message whose record starts at p (a whole record the log or make_message wrote).
inline const Message& at(const unsigned char* p) { return *reinterpret_cast<const Message*>(p); }

}  // namespace broker::record
