# The reusable workflows' `app-env` secret as the apps' ${NAME} variables, for the one step that
# runs benchwatch (sourced there: `source tool/scripts/app_env.sh`; never a file, never $GITHUB_ENV).
# APP_ENV holds dotenv-style lines NAME=value (blank lines and # comments skipped; one pair of
# surrounding quotes dropped). Each value is masked in the log (escaped as the runner's commands
# require: `%`, CR and LF, else the runner would mask another string), then exported; APP_ENV is
# unset, and BENCHWATCH_SECRET_NAMES lists the names, so benchwatch redacts every value. A NAME
# that is not ^[A-Z_][A-Z0-9_]*$, or that the runner, the shell or benchwatch owns (GITHUB_*,
# PATH, BENCHWATCH_*, …: the list is src/benchwatch/declarations/app_env.py, which init uses too; the login init
# declares, BENCHWATCH_USER and BENCHWATCH_PASSWORD, is accepted), is refused with exit 3 naming
# the line, never the value. bash only.

_app_env_refuse() {
  echo "::error::app-env secret, line $1: $2 (give NAME=value lines, NAME in capitals, not one the runner owns)"
  exit 3
}

_app_env_mask() {
  # the runner unescapes %25, %0D and %0A in a command's data: escape them, `%` first
  local escaped=${1//%/%25}
  escaped=${escaped//$'\r'/%0D}
  escaped=${escaped//$'\n'/%0A}
  echo "::add-mask::$escaped"
}

_app_env_load() {
  local number=0 line name value names=""
  while IFS= read -r line || [[ -n "$line" ]]; do
    number=$((number + 1))
    line=${line%$'\r'}
    [[ "$line" =~ ^[[:space:]]*(#.*)?$ ]] && continue
    [[ "$line" == *=* ]] || _app_env_refuse "$number" "no '='"
    name=${line%%=*} value=${line#*=}
    name=${name#export }
    [[ "$name" =~ ^[A-Z_][A-Z0-9_]*$ ]] || _app_env_refuse "$number" "the name is not ^[A-Z_][A-Z0-9_]*\$"
    # --- the names: written from src/benchwatch/declarations/app_env.py by scripts/app_env_names.py ---
    case "$name" in
      BENCHWATCH_USER | BENCHWATCH_PASSWORD) ;;  # init's login: the app's user
      GITHUB_* | RUNNER_* | ACTIONS_* | CI)
        _app_env_refuse "$number" "$name belongs to the runner" ;;
      BASH* | PATH | HOME | USER | SHELL | PWD | OLDPWD | IFS | PS4 | ENV | TMPDIR)
        _app_env_refuse "$number" "$name belongs to the shell" ;;
      LD_* | PYTHON* | VIRTUAL_ENV | UV_*)
        _app_env_refuse "$number" "$name belongs to the loader, Python or uv" ;;
      BENCHWATCH_* | APP_ENV)
        _app_env_refuse "$number" "$name belongs to benchwatch" ;;
    esac
    # --- end of the names ---
    if [[ ${#value} -ge 2 && ( "$value" == \"*\" || "$value" == \'*\' ) && "${value:0:1}" == "${value: -1}" ]]; then
      value=${value:1:${#value}-2}
    fi
    if [[ -n "$value" ]]; then _app_env_mask "$value"; fi
    export "$name=$value"
    names+="${names:+ }$name"
  done <<< "${APP_ENV:-}"
  # benchwatch redacts these values wherever it writes, even where no ${NAME} reads them (a server
  # inherits them): redaction.SECRET_NAMES_ENV
  if [[ -n "$names" ]]; then export BENCHWATCH_SECRET_NAMES="${BENCHWATCH_SECRET_NAMES:+$BENCHWATCH_SECRET_NAMES }$names"; fi
}

_app_env_load
unset APP_ENV
unset -f _app_env_load _app_env_refuse _app_env_mask
