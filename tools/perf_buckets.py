#!/usr/bin/env python3
"""Where a server's CPU goes, from `perf script` call stacks, in buckets.

Record the measured server while `capstan-bench` loads it, then bucket:

    perf record -F 499 --call-graph dwarf,32768 -p SERVER_PID -o create.perf -- sleep 4
    perf script -i create.perf -F comm,tid,ip,sym > create.stacks
    tools/perf_buckets.py create.stacks

Each sample goes to the first bucket (in the order below) one of its
frames matches, so a bucket is inclusive of what it calls and exclusive
of the buckets above it. Shares, not times: they compare two builds
profiled on a machine whose speed drifts, as this shared one does.
"""

import collections
import re
import sys

BUCKETS = [
    ("managedFields (apply::record_update)", r"capstan_api::apply::record_update"),
    ("admission chain", r"capstan_core::admission::"),
    ("create, the rest", r"create_authorized"),
    ("request body decode", r"capstan_facade::negotiation::decode"),
    ("facade, the rest", r"capstan_facade::"),
    ("gRPC service (decode, encode, tonic)", r"capstan_core::grpc::|tonic::"),
    ("store commit (redb)", r"WriteTransaction::commit"),
    ("store writer, the rest", r"capstan_storage::embedded::Writer"),
    ("store watch feed", r"EmbeddedStore as capstan_storage::Storage>::watch"),
    ("watch cache", r"WatchCache::run"),
    ("TLS read", r"read_tls|poll_fill_buf|process_new_packets"),
    ("TLS and TCP write", r"write_vectored|ChunkVecBuffer|poll_flush|BatchedWrites"),
    ("HTTP/2 connection", r"^<?h2::"),
    ("hyper, tower, axum", r"hyper|tower|axum"),
    ("tokio scheduler", r"tokio::runtime"),
]


def samples(path):
    """Each sample as [thread name, frame, frame, ...], innermost first."""
    current = None
    with open(path, errors="replace") as lines:
        for line in lines:
            line = line.rstrip("\n")
            if not line.strip():
                if current:
                    yield current
                current = None
            elif not line.startswith((" ", "\t")):
                current = [line.split()[0]]
            elif current is not None:
                parts = line.strip().split(None, 1)
                current.append(parts[1] if len(parts) > 1 else "?")
    if current:
        yield current


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    compiled = [(name, re.compile(pattern)) for name, pattern in BUCKETS]
    counts = collections.Counter()
    total = 0
    for sample in samples(sys.argv[1]):
        total += 1
        frames = sample[1:]
        bucket = next(
            (name for name, rx in compiled if any(rx.search(f) for f in frames)),
            f"other ({sample[0]})",
        )
        counts[bucket] += 1
    print(f"| where | share of {total} samples |")
    print("| --- | ---: |")
    for name, count in counts.most_common():
        print(f"| {name} | {100 * count / total:.1f} % |")


if __name__ == "__main__":
    main()
