#!/usr/bin/env python3
"""Independent references for SPEC R29's partitioners, written from their published
definitions, not from the broker's or the model's code:

- Kafka's org.apache.kafka.common.utils.Utils.murmur2(byte[]) (Java ints: 32-bit, wrapping,
  `>>>` an unsigned shift);
- Java's String.hashCode() of `new String(bytes, StandardCharsets.UTF_8)`: s[0]*31^(n-1) +
  ... + s[n-1] over UTF-16 code units, each ill-formed sequence's maximal subpart decoded
  as one U+FFFD (Python's 'replace' handler decodes UTF-8 the same way).

Reads keys as hex, one per line, on stdin; writes "MURMUR2 JAVAHASH" (signed decimal) per
line on stdout.
"""
import sys

MASK = 0xFFFFFFFF


def int32(x):
    x &= MASK
    return x - (1 << 32) if x & 0x80000000 else x


def murmur2(data):
    length = len(data)
    seed, m, r = 0x9747B28C, 0x5BD1E995, 24
    h = (seed ^ length) & MASK
    for i in range(length // 4):
        i4 = i * 4
        k = data[i4] + (data[i4 + 1] << 8) + (data[i4 + 2] << 16) + (data[i4 + 3] << 24)
        k = (k * m) & MASK
        k ^= k >> r
        k = (k * m) & MASK
        h = (h * m) & MASK
        h ^= k
    tail = length & ~3
    rest = length % 4
    if rest == 3:
        h ^= data[tail + 2] << 16
    if rest >= 2:
        h ^= data[tail + 1] << 8
    if rest >= 1:
        h ^= data[tail]
        h = (h * m) & MASK
    h ^= h >> 13
    h = (h * m) & MASK
    h ^= h >> 15
    return int32(h)


def java_hash(data):
    units = data.decode("utf-8", errors="replace").encode("utf-16-le")
    h = 0
    for i in range(0, len(units), 2):
        h = (31 * h + (units[i] | units[i + 1] << 8)) & MASK
    return int32(h)


for line in sys.stdin:
    key = bytes.fromhex(line.strip())
    print(murmur2(key), java_hash(key))
