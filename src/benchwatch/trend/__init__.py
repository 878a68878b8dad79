"""Trends over time: github-action-benchmark histories, change points, acknowledged changes, a
compare's entries relative to its parent."""
