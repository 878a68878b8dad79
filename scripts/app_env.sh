# The reusable workflows' `app-env` secret as the apps' ${NAME} variables, for the one step that
# runs benchwatch (sourced there: `source tool/scripts/app_env.sh`; never a file, never $GITHUB_ENV).
# APP_ENV holds dotenv-style lines NAME=value (blank lines and # comments skipped; one pair of
# surrounding quotes dropped). Each value is masked in the log, then exported; APP_ENV is unset.
# A NAME that is not ^[A-Z_][A-Z0-9_]*$, or that the runner or the shell owns (GITHUB_*, RUNNER_*,
# ACTIONS_*, PATH, HOME, …: the servers never get those, measure/server.py RUNNER_PREFIXES), is
# refused with exit 3 naming the line, never the value. bash only.

_app_env_refuse() {
  echo "::error::app-env secret, line $1: $2 (give NAME=value lines, NAME in capitals, not one the runner owns)"
  exit 3
}

_app_env_load() {
  local number=0 line name value
  while IFS= read -r line || [[ -n "$line" ]]; do
    number=$((number + 1))
    line=${line%$'\r'}
    [[ "$line" =~ ^[[:space:]]*(#.*)?$ ]] && continue
    [[ "$line" == *=* ]] || _app_env_refuse "$number" "no '='"
    name=${line%%=*} value=${line#*=}
    name=${name#export }
    [[ "$name" =~ ^[A-Z_][A-Z0-9_]*$ ]] || _app_env_refuse "$number" "the name is not ^[A-Z_][A-Z0-9_]*\$"
    case "$name" in
      GITHUB_* | RUNNER_* | ACTIONS_* | BASH* | PATH | HOME | USER | SHELL | PWD | OLDPWD | IFS | PS4 | ENV | \
      LD_* | PYTHON* | VIRTUAL_ENV | UV_* | BENCHWATCH_* | CI | TMPDIR | APP_ENV)
        _app_env_refuse "$number" "$name belongs to the runner, the shell or benchwatch" ;;
    esac
    if [[ ${#value} -ge 2 && ( "$value" == \"*\" || "$value" == \'*\' ) && "${value:0:1}" == "${value: -1}" ]]; then
      value=${value:1:${#value}-2}
    fi
    if [[ -n "$value" ]]; then echo "::add-mask::$value"; fi
    export "$name=$value"
  done <<< "${APP_ENV:-}"
}

_app_env_load
unset APP_ENV
unset -f _app_env_load _app_env_refuse
