#!/bin/bash
# Idle memory of one capstan binary: starts it on a fresh data directory,
# reads VmRSS, RssAnon (heap, stacks) and RssFile (the binary's mapped code
# and data) from /proc 3 s after spawn (when capstan-bench reads its idle
# RSS) and 30 s after (once start-up garbage has been handed back), and the
# server's CPU by then. Runs in about 31 s; alternate binaries for an A/B:
#
#   for i in 1 2 3; do bench/scripts/idle-rss.sh /tmp/capstan-base base; \
#     bench/scripts/idle-rss.sh /tmp/capstan-head head; done
set -euo pipefail
binary=$1
label=${2:-$1}
dir=$(mktemp -d /tmp/capstan-idle-rss-XXXX)
"$binary" serve --data-dir "$dir" --secure-port 0 > "$dir.log" 2>&1 &
pid=$!
trap 'kill -INT $pid 2>/dev/null; wait $pid 2>/dev/null; rm -rf "$dir" "$dir.log"' EXIT
started=$(date +%s%N)
until [ -f "$dir/admin.kubeconfig" ]; do sleep 0.01; done
kubeconfig_ms=$(( ($(date +%s%N) - started) / 1000000 ))
memory() {
  awk '/^(VmRSS|RssAnon|RssFile):/ { printf "%s %.1f MiB  ", $1, $2 / 1024 }' "/proc/$pid/status"
}
sleep 3
at3=$(memory)
sleep 27
at30=$(memory)
cpu_ms=$(awk '{ print ($14 + $15) * 1000 / '"$(getconf CLK_TCK)"' }' "/proc/$pid/stat")
echo "$label | kubeconfig written after ${kubeconfig_ms} ms | 3 s: $at3| 30 s: $at30| server CPU ${cpu_ms} ms"
