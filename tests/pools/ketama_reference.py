# An independent reference for kvbench's pool placement, written from libmemcached's
# description (ketama weighted: MD5 ring, 40 digests x 4 points per server scaled by
# weight in single precision; modula: one-at-a-time hash mod servers). Reads the
# distribution, the members (host:port:weight) and a key range from argv; prints one
# member index per key, in key order.
import bisect
import hashlib
import math
import struct
import sys


def f32(x):
    return struct.unpack("f", struct.pack("f", x))[0]


def word(digest, n):
    return struct.unpack("<I", digest[n * 4 : n * 4 + 4])[0]


def ketama_ring(members):
    total = sum(w for _, _, w in members)
    ring = []
    for index, (host, port, weight) in enumerate(members):
        pct = f32(f32(weight) / f32(total))
        scaled = f32(f32(f32(pct * 160.0) / 4.0) * f32(len(members)))
        points = int(math.floor(scaled + 0.0000000001)) * 4
        for i in range(points // 4):
            name = f"{host}-{i}" if port == 11211 else f"{host}:{port}-{i}"
            digest = hashlib.md5(name.encode()).digest()
            for n in range(4):
                ring.append((word(digest, n), index))
    ring.sort(key=lambda p: p[0])
    return ring


def one_at_a_time(key):
    v = 0
    for b in key:
        v = (v + b) & 0xFFFFFFFF
        v = (v + (v << 10)) & 0xFFFFFFFF
        v ^= v >> 6
    v = (v + (v << 3)) & 0xFFFFFFFF
    v ^= v >> 11
    return (v + (v << 15)) & 0xFFFFFFFF


def main():
    distribution, prefix, first, last = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    members = []
    for raw in sys.argv[5:]:
        host, port, weight = raw.rsplit(":", 2)
        members.append((host, int(port), int(weight)))
    ring = ketama_ring(members) if distribution == "ketama" else []
    values = [p[0] for p in ring]
    out = []
    for k in range(first, last + 1):
        key = f"{prefix}{k}".encode()
        if len(members) == 1:
            out.append(0)
        elif distribution == "ketama":
            h = word(hashlib.md5(key).digest(), 0)
            i = bisect.bisect_left(values, h)
            out.append(ring[i if i < len(ring) else 0][1])
        else:
            out.append(one_at_a_time(key) % len(members))
    print(" ".join(map(str, out)))


main()
