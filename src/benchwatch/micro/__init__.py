"""The asv micro-benchmarks: timed per stack (asv) and in pairs (side by side), and counted in
instructions under cachegrind."""
