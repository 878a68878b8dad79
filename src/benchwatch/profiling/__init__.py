"""Where the time went: py-spy profiles of base's and head's servers, as speedscope files and a
table."""
