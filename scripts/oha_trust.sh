#!/usr/bin/env bash
# oha from the Actions cache is used only when its sha256 is the one recorded in the repository.
#   oha_trust.sh check BINARY HASHFILE KEY   exit 0: trusted; else the binary is removed (build it)
#   oha_trust.sh line BINARY KEY             the line to record in HASHFILE for a binary built here
# KEY is the cache key, oha-<version>-<os>-<arch>. HASHFILE (.github/oha.sha256) holds lines
# "<64 hex> <key>". A job that installs new releases (the nightly) may have written a cache entry
# under a future key; without a recorded hash nothing restored is run. bash and coreutils only.
set -euo pipefail

say() { echo "$*" >&2; }
digest() { sha256sum "$1" | cut -d' ' -f1; }

case "${1:-}" in
  check)
    [ $# -eq 4 ] || { say "ERROR: usage: $0 check BINARY HASHFILE KEY"; exit 3; }
    binary=$2 hashfile=$3 key=$4
    if [ ! -e "$binary" ] && [ ! -L "$binary" ]; then say "oha: nothing restored for $key"; exit 1; fi
    want=$(awk -v key="$key" '$2 == key && length($1) == 64 && $1 ~ /^[0-9a-f]+$/ { print $1; exit }' "$hashfile" 2>/dev/null || true)
    if [ -f "$binary" ] && [ ! -L "$binary" ] && [ -n "$want" ] && [ "$(digest "$binary")" = "$want" ]; then
      say "oha: restored $key matches the recorded sha256"
      exit 0
    fi
    if [ -z "$want" ]; then
      why="no sha256 recorded for $key in $hashfile"
    else
      why="its sha256 is not the one recorded for $key"
    fi
    rm -f "$binary"
    echo "::warning::oha restored from the cache is not used: $why; building it from source"
    exit 1
    ;;
  line)
    [ $# -eq 3 ] || { say "ERROR: usage: $0 line BINARY KEY"; exit 3; }
    echo "$(digest "$2") $3"
    ;;
  *) say "ERROR: usage: $0 check BINARY HASHFILE KEY | line BINARY KEY"; exit 3 ;;
esac
