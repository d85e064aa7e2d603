// Little-endian encoding of the storage records' fields, and a bounds-checked reader.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace broker::storage {

/// Appends fields to a byte string.
class Encoder {
 public:
  void u8(std::uint8_t v) { out_.push_back(static_cast<char>(v)); }
  void u32(std::uint32_t v) { put(v, 4); }
  void u64(std::uint64_t v) { put(v, 8); }
  void i64(std::int64_t v) { put(static_cast<std::uint64_t>(v), 8); }
  /// A length (u32) and the bytes.
  void str(std::string_view s) {
    u32(static_cast<std::uint32_t>(s.size()));
    out_.append(s);
  }
  void raw(std::string_view s) { out_.append(s); }
  [[nodiscard]] const std::string& bytes() const { return out_; }
  std::string take() { return std::move(out_); }

 private:
  void put(std::uint64_t v, int n) {
    for (int i = 0; i < n; ++i) out_.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  }
  std::string out_;
};

/// Reads fields back; every read past the end sets failed() and yields zero or empty, so a
/// caller checks once at the end (a short record is never undefined behaviour).
class Decoder {
 public:
  explicit Decoder(std::string_view in) : in_(in) {}
  std::uint8_t u8() { return static_cast<std::uint8_t>(get(1)); }
  std::uint32_t u32() { return static_cast<std::uint32_t>(get(4)); }
  std::uint64_t u64() { return get(8); }
  std::int64_t i64() { return static_cast<std::int64_t>(get(8)); }
  std::string str() {
    const std::uint32_t n = u32();
    if (failed_ || n > in_.size() - pos_) {
      failed_ = true;
      return {};
    }
    std::string s(in_.substr(pos_, n));
    pos_ += n;
    return s;
  }
  [[nodiscard]] bool failed() const { return failed_; }
  /// Bytes not read yet.
  [[nodiscard]] std::size_t remaining() const { return in_.size() - pos_; }
  /// Whether every byte was read and nothing ran short.
  [[nodiscard]] bool done() const { return !failed_ && pos_ == in_.size(); }

 private:
  std::uint64_t get(int n) {
    if (failed_ || static_cast<std::size_t>(n) > in_.size() - pos_) {
      failed_ = true;
      return 0;
    }
    std::uint64_t v = 0;
    for (int i = 0; i < n; ++i) {
      v |= static_cast<std::uint64_t>(static_cast<unsigned char>(in_[pos_ + i])) << (8 * i);
    }
    pos_ += n;
    return v;
  }
  std::string_view in_;
  std::size_t pos_ = 0;
  bool failed_ = false;
};

}  // namespace broker::storage
