"""Attribution: which release (`attribute`), which commit (`bisect`) made a change, and by which
packages, steps and mechanism."""
