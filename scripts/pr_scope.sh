#!/usr/bin/env bash
# The merge base of a pull request and, optionally, the scenarios it touches, as lines for
# $GITHUB_OUTPUT (reusable-pr.yml's measure job; tests/test_workflow_attacks.py runs it on a
# real repository).
#   pr_scope.sh REPO BASE_SHA HEAD_SHA [--by-apps-folder]
# merge_base=<40 hex>
# patterns=<comma-separated -k globs>   empty: every scenario. With --by-apps-folder a change
#           only under apps/<name>/ selects "<name>*@*"; a change anywhere else selects everything.
set -euo pipefail
[ $# -ge 3 ] || { echo "ERROR: usage: $0 REPO BASE_SHA HEAD_SHA [--by-apps-folder]" >&2; exit 3; }
repo=$1 base=$2 head=$3 by_apps=${4:-}
for sha in "$base" "$head"; do
  [[ "$sha" =~ ^[0-9a-f]{40}$ ]] || { echo "ERROR: '$sha' is not a 40-hex commit" >&2; exit 3; }
done
merge_base=$(git -C "$repo" merge-base "$base" "$head")
echo "merge_base=$merge_base"
if [ "$by_apps" != "--by-apps-folder" ]; then echo "patterns="; exit 0; fi
scenarios=() all=false
while IFS= read -r path; do
  if [[ "$path" =~ ^apps/([a-z0-9_]+)/ ]]; then scenarios+=("${BASH_REMATCH[1]}*@*"); else all=true; fi
done < <(git -C "$repo" diff --name-only "$merge_base" "$head")
if [[ "$all" == true || ${#scenarios[@]} -eq 0 ]]; then
  echo "patterns="
else
  echo "patterns=$(printf '%s\n' "${scenarios[@]}" | sort -u | paste -sd, -)"
fi
