#!/usr/bin/env bash
# The git half of a record job (publish.yml, nightly.yml): put prepared files into gh-pages,
# record which commits this publish covers, push once, rebase and retry when another record
# job pushed first. Runs nothing but git and coreutils; tests/test_record_push.py rehearses it
# against a local bare repository.
#
#   record_push.sh --repo DIR --remote URL --message TEXT
#                  [--put SRC DEST]... [--add DIR DEST]... [--state PATH --sha SHA [--skip-published]]
#                  [--attempts N]
#
# --repo     a clone whose local `gh-pages` branch may hold commits not pushed yet (what
#            github-action-benchmark leaves with auto-push: false); fetched from --remote if absent
# --remote   where to fetch gh-pages from and push it to (a URL, or a path in the rehearsal)
# --put      replace DEST (relative to the gh-pages root) with a copy of SRC; DEST "." replaces
#            each top-level entry of the directory SRC in the root, and only the dashboard's own
#            names (SITE_NAMES below): never dev/, nightly/, weekly/, asv/ or CNAME, which other
#            jobs (or the site's owner) keep
# --add      copy each regular file of the directory DIR into the folder DEST, keeping DEST's
#            other files (the nightly's attribution history grows one file a night); a name DEST
#            already holds is refused unless its content is the same (a re-run): never replaced
# A --put or --add source holding a symlink or a .git (any case, at any depth) is refused.
# --skip-published  push nothing when the published --state already covers --sha (the same
#            commit, or an older one whose record job ran late): what is published is newer.
#            For publish jobs (one data point per commit); a nightly measures the same commit again.
# --state    JSON file (relative to the root) naming the last published commit; with --sha the
#            new state says which first-parent commits since the previous one this publish
#            covers, and which of them were skipped (superseded pushes: no data point of their own)
# Exit 0 when pushed (or nothing to push), 1 with one ERROR line otherwise.
# A data.js the commits to push change must keep every entry it had (github-action-benchmark reads
# one it cannot parse as an empty history and writes the new point alone): else nothing is pushed.
set -euo pipefail

fail() { echo "ERROR: $*" >&2; exit 1; }
# the top-level entries `benchwatch site` writes (publish/site.py); the only ones `--put SRC .` replaces
SITE_NAMES=(index.html trends.html releases.html assets latest)
say() { echo "record: $*" >&2; }

repo="" remote="" message="" state="" sha="" attempts=5 skip_published=0
puts=() adds=()
while [ $# -gt 0 ]; do
  case "$1" in
    --repo) repo=${2:?--repo needs a directory}; shift 2 ;;
    --remote) remote=${2:?--remote needs a URL}; shift 2 ;;
    --message) message=${2:?--message needs text}; shift 2 ;;
    --put) [ $# -ge 3 ] || fail "--put needs SRC and DEST"; puts+=("$2" "$3"); shift 3 ;;
    --add) [ $# -ge 3 ] || fail "--add needs DIR and DEST"; adds+=("$2" "$3"); shift 3 ;;
    --state) state=${2:?--state needs a path}; shift 2 ;;
    --sha) sha=${2:?--sha needs a commit}; shift 2 ;;
    --attempts) attempts=${2:?--attempts needs a number}; shift 2 ;;
    --skip-published) skip_published=1; shift ;;
    *) fail "unknown argument '$1' (see the header of $0)" ;;
  esac
done
[ -n "$repo" ] && [ -n "$remote" ] && [ -n "$message" ] || fail "--repo, --remote and --message are required"
git -C "$repo" rev-parse --git-dir >/dev/null 2>&1 || fail "--repo $repo is not a git repository"
[[ "$attempts" =~ ^[1-9][0-9]?$ ]] || fail "--attempts must be 1..99, got '$attempts'"
if [ -n "$sha$state" ]; then
  [ -n "$sha" ] && [ -n "$state" ] || fail "--state and --sha go together"
  [[ "$sha" =~ ^[0-9a-f]{40}$ ]] || fail "--sha must be a full 40-hex commit, got '$sha'"
fi
[ "$skip_published" = 0 ] || [ -n "$state" ] || fail "--skip-published needs --state and --sha"
# a source holds plain files and folders only: a symlink could copy what it points at (or a
# link) into gh-pages, and a `.git` anywhere in it is pushed as a gitlink or a nested repository
plain_source() {
  local found
  found=$(find "$1" \( -type l -o -iname .git \) -print -quit 2>/dev/null) || fail "$2 $1: cannot be listed"
  [ -z "$found" ] || fail "$2 $1 holds '$found' (a symlink or a .git): nothing pushed"
}
for ((i = 0; i < ${#puts[@]}; i += 2)); do
  [ -e "${puts[i]}" ] || [ -L "${puts[i]}" ] || fail "--put source ${puts[i]} does not exist"
  dest=${puts[i + 1]}
  [[ "$dest" != /* && "/$dest/" != */../* && "$dest" != .git* && "/${dest,,}/" != */.git/* ]] || fail "--put destination '$dest' must stay inside gh-pages"
  plain_source "${puts[i]}" --put
  [ "$dest" = "." ] || continue
  [ -d "${puts[i]}" ] || fail "--put ${puts[i]} . needs a directory"
  for entry in "${puts[i]}"/* "${puts[i]}"/.[!.]*; do
    [ -e "$entry" ] || [ -L "$entry" ] || continue
    name=$(basename "$entry")
    [[ " ${SITE_NAMES[*]} " == *" $name "* ]] || fail "--put ${puts[i]} . holds '$name', not one of the site's names (${SITE_NAMES[*]}): nothing pushed"
  done
done

for ((i = 0; i < ${#adds[@]}; i += 2)); do
  [ -d "${adds[i]}" ] && [ ! -L "${adds[i]}" ] || fail "--add ${adds[i]} needs a directory"
  dest=${adds[i + 1]}
  [[ "$dest" != /* && "$dest" != . && "/$dest/" != */../* && "$dest" != .git* && "/${dest,,}/" != */.git/* ]] || fail "--add destination '$dest' must be a folder inside gh-pages"
  plain_source "${adds[i]}" --add
done

bot=(-c user.name="github-actions[bot]" -c user.email="41898282+github-actions[bot]@users.noreply.github.com")
if ! git -C "$repo" rev-parse --verify -q refs/heads/gh-pages >/dev/null; then
  git -C "$repo" fetch -q "$remote" gh-pages:gh-pages || fail "cannot fetch gh-pages from the remote (create it first: docs/github.md)"
fi
site=$(mktemp -d "${RUNNER_TEMP:-/tmp}/gh-pages.XXXXXX")
cleanup() { git -C "$repo" worktree remove --force "$site" >/dev/null 2>&1 || rm -rf "$site"; }
trap cleanup EXIT
git -C "$repo" worktree add -q "$site" gh-pages

# 0. A record job that runs after a newer one (out of commit order) or twice pushes nothing.
#    REF: what gh-pages is checked against (HEAD, or FETCH_HEAD after a rejected push).
already_published() {
  [ "$skip_published" = 1 ] || return 1
  local text previous
  text=$(git -C "$site" show "$1:$state" 2>/dev/null) || return 1
  previous=$(printf '%s\n' "$text" | sed -n 's/^ *"commit": *"\([0-9a-f]\{40\}\)".*/\1/p' | head -n 1)
  [ -n "$previous" ] || return 1
  if [ "$previous" = "$sha" ] || printf '%s' "$text" | grep -q "\"$sha\""; then
    say "$sha is already published ($state names it): nothing pushed"
  elif git -C "$repo" cat-file -e "$previous^{commit}" 2>/dev/null && git -C "$repo" merge-base --is-ancestor "$sha" "$previous"; then
    say "$sha is older than the published $previous (its record job ran late): nothing pushed"
  else
    return 1
  fi
}

# 1. The prepared files, one commit (none when nothing changed).
for ((i = 0; i < ${#puts[@]}; i += 2)); do
  src=${puts[i]} dest=${puts[i + 1]}
  if [ "$dest" = "." ]; then
    for name in "${SITE_NAMES[@]}"; do
      [ -e "$src/$name" ] || continue
      rm -rf "${site:?}/$name"
      cp -R "$src/$name" "$site/$name"
    done
  else
    rm -rf "${site:?}/$dest"
    mkdir -p "$(dirname "$site/$dest")"
    cp -R "$src" "$site/$dest"
  fi
done
for ((i = 0; i < ${#adds[@]}; i += 2)); do
  src=${adds[i]} dest=${adds[i + 1]}
  mkdir -p "$site/$dest"
  for entry in "$src"/*; do
    [ -f "$entry" ] && [ ! -L "$entry" ] || continue
    target="$site/$dest/$(basename "$entry")"
    # what is added is never replaced: the same name again (a re-run) only with the same content
    if [ -e "$target" ] || [ -L "$target" ]; then
      cmp -s "$entry" "$target" || fail "--add $entry: $dest/$(basename "$entry") is already published with other content; nothing pushed"
      continue
    fi
    cp "$entry" "$target"
  done
done
git -C "$site" add -A
if ! git -C "$site" diff --cached --quiet; then
  git -C "$site" "${bot[@]}" commit -q -m "$message"
fi

# 2. The state: which commits this publish covers. Rewritten after every rebase, so it is
#    always computed against the state the push lands on.
previous_commit() {
  [ -f "$site/$state" ] || return 0
  sed -n 's/^ *"commit": *"\([0-9a-f]\{40\}\)".*/\1/p' "$site/$state" | head -n 1
}
json_list() { local first=1; printf '['; for c in "$@"; do [ $first = 1 ] || printf ', '; printf '"%s"' "$c"; first=0; done; printf ']'; }
write_state() {
  local previous note covers=() skipped=()
  previous=$(previous_commit)
  if [ -z "$previous" ]; then
    note="first publish recorded"
    covers=("$sha")
  elif [ "$previous" = "$sha" ]; then
    say "$sha is already the last published commit: state unchanged"
    return 0
  elif ! git -C "$repo" cat-file -e "$previous^{commit}" 2>/dev/null; then
    note="previous published commit $previous is not in this clone's history"
    covers=("$sha")
  elif git -C "$repo" merge-base --is-ancestor "$previous" "$sha"; then
    mapfile -t covers < <(git -C "$repo" rev-list --first-parent --reverse "$previous..$sha")
    note="covers ${#covers[@]} commit(s) since $previous"
  else
    note="previous published commit $previous is not an ancestor of $sha"
    covers=("$sha")
  fi
  skipped=("${covers[@]:0:${#covers[@]}-1}")
  mkdir -p "$(dirname "$site/$state")"
  {
    printf '{\n  "commit": "%s",\n' "$sha"
    if [ -n "$previous" ]; then printf '  "previous": "%s",\n' "$previous"; else printf '  "previous": null,\n'; fi
    printf '  "covers": %s,\n' "$(json_list "${covers[@]}")"
    printf '  "skipped": %s,\n' "$(json_list "${skipped[@]}")"
    printf '  "note": "%s"\n}\n' "$note"
  } >"$site/$state"
  say "$sha: $note"
  if [ ${#skipped[@]} -gt 0 ]; then
    say "skipped, published without a data point of their own: ${skipped[*]}"
    [ -z "${GITHUB_ACTIONS:-}" ] || echo "::warning::publish of $sha also covers ${#skipped[@]} commit(s) that were skipped (no data point of their own): ${skipped[*]}"
    [ -z "${GITHUB_STEP_SUMMARY:-}" ] || printf '### Publish of %s\n%s; skipped: %s\n' "$sha" "$note" "${skipped[*]}" >>"$GITHUB_STEP_SUMMARY"
  fi
  local body=(-m "Record published commit $sha" -m "$note")
  [ ${#skipped[@]} -eq 0 ] || body+=(-m "Skipped (no data point of their own): ${skipped[*]}")
  git -C "$site" add "$state"
  git -C "$site" "${bot[@]}" commit -q "${body[@]}"
  state_committed=1
}

# 2b. Never a history with less: every data.js the commits to push change holds at least as many
#     entries (`"commit": {`, one per entry as github-action-benchmark and benchwatch write them) as
#     it held where those commits start (a damaged data.js on gh-pages becomes one point otherwise).
entries() { { grep -o '"commit": *{' || true; } | wc -l; }
check_histories() {
  local base path old new
  git -C "$site" fetch -q "$remote" gh-pages || fail "cannot fetch gh-pages from the remote"
  base=$(git -C "$site" merge-base HEAD FETCH_HEAD) || return 0
  while IFS= read -r path; do
    old=$(git -C "$site" show "$base:$path" 2>/dev/null | entries) || old=0
    [ "$old" -gt 0 ] || continue
    new=$(git -C "$site" show "HEAD:$path" 2>/dev/null | entries) || new=0
    [ "$new" -ge "$old" ] || fail "$path: gh-pages holds $old entries and this push would leave $new (a data.js github-action-benchmark could not read is started again empty): nothing pushed; repair $path on gh-pages, then re-run"
  done < <(git -C "$site" diff --name-only "$base" HEAD -- '*data.js')
}
check_histories

# 3. Push; when rejected, drop the state commit, rebase on what was pushed meanwhile, retry.
for ((attempt = 1; ; attempt++)); do
  state_committed=0
  if already_published HEAD; then exit 0; fi
  [ -z "$state" ] || write_state
  if git -C "$site" push -q "$remote" gh-pages:gh-pages; then
    say "pushed gh-pages (attempt $attempt)"
    exit 0
  fi
  [ "$attempt" -lt "$attempts" ] || fail "gh-pages push still rejected after $attempts attempts"
  say "push rejected (attempt $attempt): rebasing on the remote gh-pages and retrying"
  [ "$state_committed" = 0 ] || git -C "$site" reset -q --hard HEAD~1
  sleep "$attempt"
  git -C "$site" fetch -q "$remote" gh-pages || fail "cannot fetch gh-pages from the remote"
  if already_published FETCH_HEAD; then exit 0; fi
  if ! git -C "$site" "${bot[@]}" rebase -q FETCH_HEAD >/dev/null 2>&1; then
    conflicts=$(git -C "$site" diff --name-only --diff-filter=U | paste -sd' ' -)
    git -C "$site" rebase --abort || true
    fail "gh-pages changed underneath in the same files ($conflicts): another record job of the same kind pushed; re-run this one"
  fi
done
