"""posts on PostgreSQL with a data volume: older posts added after the app's own rows, and the
index the read's order uses.

`python -m apps.posts.volume ROWS` is posts_pg's set-up command (its benchwatch-app.toml declares
ROWS, the same on both sides of a compare): after every boot, once the app has written its
`data.ROW_COUNT` rows, it adds ROWS archived posts published before all of them (ids from
`ROW_COUNT + 1`, every 50th (+7) deleted), written by PostgreSQL itself (`generate_series`: a
second, not a minute of Python), moves the id sequence past them, creates `ix_posts_published_at_id`
on (published_at, id), and vacuums and analyzes the table, so plans and pages do not change under
the measurement (no autovacuum after the bulk insert). The read's first pages (`ORDER BY
published_at DESC, id DESC LIMIT 100`) are the app's own rows: its answer is the same as without
the archive. With the index the read walks it backwards (an Index Scan); without it PostgreSQL
reads the whole table and sorts it (a Seq Scan, a top-N Sort).
"""

from __future__ import annotations

import sys

from sqlalchemy import Connection, text

from apps.posts.data import FIRST_PUBLISHED, ROW_COUNT
from apps.posts.orm import database_url, make_engine

READ_INDEX = "ix_posts_published_at_id"


def add_archive(connection: Connection, rows: int) -> None:
    """ROWS posts published a minute apart before the app's first one, newest first."""
    connection.execute(
        text(
            "INSERT INTO posts (id, created_at, updated_at, published_at, title, content, is_deleted) "
            "SELECT :first + g, p - interval '1 day', p + interval '30 minutes', p, "
            "'Archived post ' || (:first + g), "
            "'Body of post ' || (:first + g) || '. ' || repeat('Lorem ipsum dolor sit amet. ', 1 + (:first + g) % 5), "
            "(:first + g) % 50 = 7 "
            "FROM generate_series(1, :rows) AS g, "
            "LATERAL (SELECT CAST(:newest AS timestamp) - g * interval '1 minute' AS p) AS t"
        ),
        {"first": ROW_COUNT, "rows": rows, "newest": FIRST_PUBLISHED},
    )
    connection.execute(
        text("SELECT setval(pg_get_serial_sequence('posts', 'id'), (SELECT max(id) FROM posts))")
    )


def create_read_index(connection: Connection) -> None:
    """The index `GET /posts` reads in order (backwards for the newest first)."""
    connection.execute(text(f"CREATE INDEX {READ_INDEX} ON posts (published_at, id)"))


def main(argv: list[str]) -> int:
    if len(argv) != 1 or not argv[0].isdigit():
        print("ERROR: give the number of archived posts to add, e.g. 100000", file=sys.stderr)
        return 3
    rows = int(argv[0])
    engine = make_engine(database_url())
    if engine.dialect.name != "postgresql":
        print(f"ERROR: {engine.dialect.name}: the data volume is for PostgreSQL", file=sys.stderr)
        return 3
    with engine.begin() as connection:
        add_archive(connection, rows)
        create_read_index(connection)
    with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as connection:
        connection.execute(text("VACUUM (ANALYZE) posts"))
        total = connection.execute(text("SELECT count(*) FROM posts")).scalar_one()
    engine.dispose()
    print(f"posts: {rows} archived posts added, {total} in all")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
