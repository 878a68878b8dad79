#!/usr/bin/env bash
# actions/checkout stand-in (see action.yml): git only, from the URL the real action would use.
set -euo pipefail
repository=${REPOSITORY:-$GITHUB_REPOSITORY}
dir="$GITHUB_WORKSPACE/${TARGET:-}"
url="$GITHUB_SERVER_URL/$repository"
ref=${REF:-}
if [[ -z "$ref" && "$repository" == "$GITHUB_REPOSITORY" ]]; then ref=$GITHUB_SHA; fi
echo "checkout stand-in: $url at ${ref:-the default branch} into $dir (fetch-depth ${DEPTH})"
mkdir -p "$dir"
git init -q "$dir"
cd "$dir"
git remote add origin "$url"
if [[ -n "${SPARSE:-}" ]]; then
  cone=(--no-cone)
  [[ "$CONE" == false ]] || cone=(--cone)
  mapfile -t patterns < <(printf '%s\n' "$SPARSE" | sed '/^[[:space:]]*$/d')
  git sparse-checkout set "${cone[@]}" "${patterns[@]}"
fi
depth=()
[[ "$DEPTH" == 0 ]] || depth=(--depth "$DEPTH")
if [[ "$DEPTH" == 0 ]]; then git fetch -q origin '+refs/heads/*:refs/remotes/origin/*'; fi
if [[ -z "$ref" ]]; then
  git fetch -q "${depth[@]}" origin HEAD
  git checkout -q --detach FETCH_HEAD
elif [[ "$ref" =~ ^[0-9a-f]{40}$ ]]; then
  git fetch -q "${depth[@]}" origin "$ref"
  git checkout -q --detach "$ref"
else
  branch=${ref#refs/heads/}
  git fetch -q "${depth[@]}" origin "+refs/heads/$branch:refs/remotes/origin/$branch"
  git checkout -q -B "$branch" "refs/remotes/origin/$branch"
fi
echo "checkout stand-in: HEAD is $(git rev-parse HEAD)"
