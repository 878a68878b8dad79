"""The stages as commands chain them: the load stage from end to end (environments, rounds, counts)."""
