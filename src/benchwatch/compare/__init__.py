"""`benchwatch compare` and `benchwatch calibrate`: the two sides, base and head measured side by
side round by round, confirmed, judged, written."""
