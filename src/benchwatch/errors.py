class UserError(Exception):
    """Bad input or a missing prerequisite: shown as one `ERROR: ...` line, no traceback."""

    def __init__(self, message: str, exit_code: int = 1) -> None:
        super().__init__(message)
        self.exit_code = exit_code
