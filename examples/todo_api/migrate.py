"""Create and seed the to-do table (the app's 'migrations')."""

import os
import sqlite3

with sqlite3.connect(os.environ["TODO_DATABASE"]) as db:
    db.execute("DROP TABLE IF EXISTS todo")
    db.execute("CREATE TABLE todo (id INTEGER PRIMARY KEY, title TEXT NOT NULL, done INTEGER NOT NULL)")
    db.executemany(
        "INSERT INTO todo (title, done) VALUES (?, ?)",
        [(f"task {n}", n % 3 == 0) for n in range(1, 201)],
    )
