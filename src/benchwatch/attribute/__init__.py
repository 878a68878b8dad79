"""Attribution: which release (`attribute`), which commit (`bisect`), which function (`profile`)."""
