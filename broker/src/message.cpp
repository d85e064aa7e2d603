#include "broker/message.h"

#include <bit>
#include <stdexcept>

#include "message_record.h"

namespace broker {

static_assert(std::endian::native == std::endian::little,
              "records are read in place: a big-endian host needs byte swaps in Message");

template <class Visit>
bool Message::each_header(Visit visit) const {
  std::size_t at = kKeyAt + 4 + u32(kKeyAt);
  const std::uint32_t n = u32(at);
  at += 4;
  for (std::uint32_t i = 0; i < n; ++i) {
    const std::string_view k = str(at);
    at += 4 + k.size();
    const std::string_view v = str(at);
    at += 4 + v.size();
    if (!visit(k, v)) return false;
  }
  return true;
}

std::optional<std::string_view> Message::header(std::string_view name) const {
  std::optional<std::string_view> found;
  each_header([&](std::string_view k, std::string_view v) {
    if (k == name) found = v;
    return !found;
  });
  return found;
}

Headers Message::headers() const {
  Headers out;
  each_header([&](std::string_view k, std::string_view v) {
    out.emplace(k, v);
    return true;
  });
  return out;
}

std::string_view Message::record() const {
  const std::size_t at = payload_at();
  return {reinterpret_cast<const char*>(bytes()), at + 4 + u32(at)};
}

MessagePtr make_message(Offset offset, std::string_view payload, const Headers& headers,
                        std::string_view key, Time publish_time) {
  const std::size_t size = record::size_of(payload, headers, key);
  std::shared_ptr<unsigned char[]> storage(new unsigned char[size]);
  record::write(storage.get(), offset, publish_time, payload, headers, key);
  return MessagePtr(storage, &record::at(storage.get()));
}

namespace record {
namespace {

std::size_t field(std::string_view s) {
  if (s.size() > 0xffffffffu) throw std::length_error("a message field is 4 GiB or longer");
  return 4 + s.size();
}

unsigned char* put(unsigned char* out, std::uint64_t v, std::size_t n) {
  std::memcpy(out, &v, n);  // little-endian host (static_assert above)
  return out + n;
}

unsigned char* put(unsigned char* out, std::string_view s) {
  out = put(out, s.size(), 4);
  if (!s.empty()) std::memcpy(out, s.data(), s.size());
  return out + s.size();
}

}  // namespace

std::size_t size_of(std::string_view payload, const Headers& headers, std::string_view key) {
  if (headers.size() > 0xffffffffu) throw std::length_error("too many headers");
  std::size_t n = 8 + 8 + field(key) + 4 + field(payload);  // offset, time, key, count, payload
  for (const auto& [k, v] : headers) n += field(k) + field(v);
  return n;
}

void write(unsigned char* out, Offset offset, Time publish_time, std::string_view payload,
           const Headers& headers, std::string_view key) {
  out = put(out, offset, 8);
  out = put(out, static_cast<std::uint64_t>(publish_time.time_since_epoch().count()), 8);
  out = put(out, key);
  out = put(out, headers.size(), 4);
  for (const auto& [k, v] : headers) {
    out = put(out, k);
    out = put(out, v);
  }
  put(out, payload);
}

std::size_t length(std::string_view bytes) {
  std::size_t at = 16;
  const auto len = [&]() -> std::optional<std::uint32_t> {
    if (bytes.size() < at + 4) return std::nullopt;
    std::uint32_t v;
    std::memcpy(&v, bytes.data() + at, 4);
    at += 4;
    return v;
  };
  const auto skip = [&]() {
    const std::optional<std::uint32_t> n = len();
    if (!n || *n > bytes.size() - at) return false;
    at += *n;
    return true;
  };
  if (!skip()) return 0;  // key
  const std::optional<std::uint32_t> headers = len();
  if (!headers) return 0;
  for (std::uint64_t i = 0; i < 2ull * *headers; ++i) {
    if (!skip()) return 0;
  }
  if (!skip()) return 0;  // payload
  return at;
}

}  // namespace record
}  // namespace broker
