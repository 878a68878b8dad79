#!/usr/bin/env bash
# The last step of a measure job: say what benchwatch's exit code means and end the job with it.
#   verdict.sh CODE [WHAT]
# The table is src/benchwatch/errors.py's (tests/test_workflow_attacks.py checks both agree):
# 0 ok, 1 regression, 2 not measured, 3 bad input. A missing or unknown code counts as 2: the
# command did not say, so nothing was measured as far as anyone can tell. bash only, so a job
# that must not run project Python can use it too.
set -euo pipefail
code=${1:-}
what=${2:-benchwatch}
case "$code" in
  0) echo "::notice::$what: ok (exit 0)" ;;
  1) echo "::error::$what: regression (exit 1): a gating figure regressed" ;;
  2) echo "::error::$what: not measured (exit 2): something could not be measured; not a performance result" ;;
  3) echo "::error::$what: bad input (exit 3): a configuration, declaration or option was refused; not a performance result" ;;
  *) echo "::error::$what: not measured (no exit code recorded)"; code=2 ;;
esac
exit "$code"
