#!/usr/bin/env bash
# actions/setup-python stand-in (see action.yml): an installed interpreter, never a download.
set -euo pipefail
[[ "$VERSION" =~ ^3\.[0-9]+$ ]] || { echo "::error::setup-python stand-in: give MAJOR.MINOR, got '$VERSION'"; exit 1; }
found=""
for candidate in "$HOME"/.pyenv/versions/"$VERSION".*/bin/"python$VERSION" "/usr/bin/python$VERSION" "$(command -v "python$VERSION" || true)"; do
  if [[ -n "$candidate" && -x "$candidate" ]] && "$candidate" -c 'import sys' 2>/dev/null; then
    found=$(cd "$(dirname "$candidate")" && pwd)/python$VERSION
    break
  fi
done
[[ -n "$found" ]] || { echo "::error::setup-python stand-in: no Python $VERSION installed on this host (it downloads nothing)"; exit 1; }
echo "setup-python stand-in: $found ($("$found" -V 2>&1))"
dirname "$found" >> "$GITHUB_PATH"
echo "python-version=$("$found" -c 'import platform; print(platform.python_version())')" >> "$GITHUB_OUTPUT"
echo "python-path=$found" >> "$GITHUB_OUTPUT"
