"""What the project's files declare: stacks, apps, endpoints, set-up, questions (the TOML files'
models), the placeholder grammar and secret redaction, the app-env secret's names."""
