"""The environments servers and benchmarks run in: uv, interpreters, an app's own pins, the stacks'
virtualenvs, the newest releases on the index."""
