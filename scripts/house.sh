#!/usr/bin/env bash
# Measures of how the module reads: lines per package, the
# arrows between the module's packages, the longest functions, and the
# functions no binary reaches (golang.org/x/tools/cmd/deadcode, fetched
# through the Go module proxy at a pinned version).
#
# Usage: scripts/house.sh [LONGEST]   (from anywhere in the checkout)
set -euo pipefail
cd "$(dirname "$0")/.."
go run ./scripts/house -longest "${1:-15}"
echo "functions no binary reaches (deadcode ./...):"
out=$(go run golang.org/x/tools/cmd/deadcode@v0.53.0 ./... 2>&1) || { echo "$out" >&2; exit 1; }
if [ -z "$out" ]; then
  echo "  0"
else
  echo "  $(printf '%s\n' "$out" | wc -l)"
  printf '%s\n' "$out" | sed 's/^/  /'
fi
