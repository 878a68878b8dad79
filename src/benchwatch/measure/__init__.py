"""Boot, verify and load-test the real servers: the session of a command, a server's launch and
teardown, databases and set-up, oha, the interleaved rounds."""
