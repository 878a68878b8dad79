"""Errors a user sees, and the one exit-code table every command and workflow reads.

| code | meaning |
|---|---|
| 0 | ok: everything asked for was measured (or done) and nothing gating regressed |
| 1 | regression: a gating figure (or change point) regressed |
| 2 | not measured: something could not be measured (a side that fails to boot, invalid
      measurements, too few samples); said per row, never guessed; also benchwatch's own
      failure (a bug: its traceback, then one `ERROR:` line), never 1 |
| 3 | bad input: a bad option, configuration or declaration, or a missing prerequisite |
| 130 | interrupted (Ctrl-C); servers stopped |
"""

EXIT_OK = 0
EXIT_REGRESSION = 1
EXIT_UNMEASURED = 2
EXIT_BAD_INPUT = 3
EXIT_INTERRUPTED = 130

EXIT_CODES: dict[int, str] = {
    EXIT_OK: "ok",
    EXIT_REGRESSION: "regression",
    EXIT_UNMEASURED: "not measured",
    EXIT_BAD_INPUT: "bad input",
    EXIT_INTERRUPTED: "interrupted",
}


class UserError(Exception):
    """Bad input or a missing prerequisite: shown as one `ERROR: ...` line, no traceback."""

    def __init__(self, message: str, exit_code: int = EXIT_BAD_INPUT) -> None:
        super().__init__(message)
        self.exit_code = exit_code
