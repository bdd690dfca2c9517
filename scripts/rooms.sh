#!/usr/bin/env bash
# rooms.sh: each package's non-test lines of Go (docs/architecture.md), largest first, and
# cmd/'s total; a package past 6,000 lines or cmd/ past 3,000 is marked. Usage: scripts/rooms.sh
set -euo pipefail
cd "$(dirname "$0")/.."
for d in $(go list -f '{{.Dir}}' ./...); do
  rel=${d#"$PWD"/}; [ "$rel" = "$PWD" ] && rel=.
  n=$(find "$d" -maxdepth 1 -name '*.go' ! -name '*_test.go' -exec cat {} + | wc -l)
  mark=""; [ "$n" -gt 6000 ] && mark="  over ~6k: two ideas?"
  printf '%6d  %s%s\n' "$n" "$rel" "$mark"
done | sort -rn
n=$(find cmd -name '*.go' ! -name '*_test.go' -exec cat {} + | wc -l)
mark=""; [ "$n" -gt 3000 ] && mark="  over ~3k: more than flags and wiring?"
printf '%6d  cmd/ (all)%s\n' "$n" "$mark"
