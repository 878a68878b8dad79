"""A run's files: run.json's models, the github-action-benchmark files, the environment fingerprint,
atomic writes that redact, shard merge."""
