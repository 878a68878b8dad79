#!/usr/bin/env bash
# Times the README's "Use it in your repository" commands as a new user runs them: the wheel
# built from this checkout, a fresh venv holding only it, a throwaway repository with a small
# FastAPI app (two commits: the app, then benchwatch added). Prints one TIME line per command.
#   scripts/time_user_repo.sh [WORK_DIR]   (default: a new temporary directory)
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
work=${1:-$(mktemp -d /tmp/benchwatch-user.XXXXXX)}
uv=${UV:-$here/.venv/bin/uv}
mkdir -p "$work" && cd "$work" && rm -rf dist venv shop-repo
T() { local s e; s=$(date +%s.%N); "$@" >>"$work/out.log" 2>&1; e=$(date +%s.%N)
      printf 'TIME %6.1fs  %s\n' "$(echo "$e - $s" | bc)" "$*"; }
T "$uv" build --wheel --out-dir dist "$here"
T "$uv" venv --quiet --python 3.11 venv
T "$uv" pip install --quiet --python venv/bin/python dist/benchwatch-*.whl
export PATH="$work/venv/bin:$HOME/.cargo/bin:$PATH"
mkdir -p shop-repo/shop && cd shop-repo
touch shop/__init__.py
cp "$here/tests/fixtures/shop/main.py" shop/main.py  # the same app as tests/test_foreign_repo.py
cp "$here/tests/fixtures/shop/requirements.txt" requirements.txt
printf 'results/\n.benchwatch/\n' > .gitignore
git init -q && git add -A && git -c user.name=t -c user.email=t@e commit -qm "A shop"
T benchwatch init
T benchwatch verify
T benchwatch run --quick --no-micro
T benchwatch run --quick
sed -i 's/return ITEMS$/return list(ITEMS)/' shop/main.py
git add -A && git -c user.name=t -c user.email=t@e commit -qm "Benchmark the shop with benchwatch"
T benchwatch compare --base HEAD~1 --head HEAD --quick --no-micro
echo "outputs: $work/out.log"
