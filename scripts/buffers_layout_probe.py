"""How far database buffers move between boots of the same code and data when the keys are random.

    .venv/bin/python scripts/buffers_layout_probe.py --port 55440 [--boots 30] [--writes 0] [--user bench]

Each "boot" is a fresh database on a running cluster (127.0.0.1:PORT, trust auth) built as the
template-shaped fixture's boot builds it (tests/fixtures/fullstack_repo: its migrations' tables and
`ix_item_owner_id`, the first superuser created at start-up with a fresh uuid, then its seed
command: 2,000 other users with 10 items each and the superuser's 10, every id
`gen_random_uuid()`, then VACUUM ANALYZE; then its set-up's request that adds one item of the
superuser's, after the vacuum). Then the items list's two statements for the
superuser (its count, an index-only scan; its page, a bitmap scan), each run twice under
`EXPLAIN (ANALYZE, BUFFERS)`, the second run's shared buffers (hit + read) kept per plan node.
Prints one line per boot and how often each total was seen. Judge/buffers_layout.py's allowance
(2 pages per statement call) is what this measures (docs/counts.md, "Layout").
"""

from __future__ import annotations

import argparse
import collections
import json
import subprocess
from pathlib import Path

PSQL = Path("/usr/lib/postgresql/15/bin/psql")
SCHEMA = """
CREATE TABLE "user" (id uuid PRIMARY KEY, email varchar(255) NOT NULL, is_active boolean NOT NULL,
  is_superuser boolean NOT NULL, full_name varchar(255), hashed_password varchar NOT NULL);
CREATE UNIQUE INDEX ix_user_email ON "user" (email);
CREATE TABLE item (id uuid PRIMARY KEY, title varchar(255) NOT NULL, description varchar(255),
  owner_id uuid NOT NULL REFERENCES "user" (id) ON DELETE CASCADE);
CREATE INDEX ix_item_owner_id ON item (owner_id);
INSERT INTO "user" VALUES (gen_random_uuid(), 'admin@example.com', true, true, NULL, 'x');
INSERT INTO "user" (id, email, is_active, is_superuser, hashed_password)
  SELECT gen_random_uuid(), 'seeded' || g || '@example.org', true, false, 'x'
  FROM generate_series(1, 2000) g;
INSERT INTO item (id, title, owner_id) SELECT gen_random_uuid(), 'item ' || g, u.id
  FROM generate_series(1, 10) g CROSS JOIN "user" u
  WHERE u.email LIKE 'seeded%' OR u.email = 'admin@example.com';
"""
# the fixture's set-up request after the seed: POST /api/v1/items/ of the logged-in superuser
NEW_ITEM = """INSERT INTO item (id, title, owner_id) SELECT gen_random_uuid(), 'Groceries', id
  FROM "user" WHERE email = 'admin@example.com'"""
OWNER = "(SELECT id FROM \"user\" WHERE email = 'admin@example.com')"
STATEMENTS = {
    "count": "SELECT count(*) FROM (SELECT item.id FROM item WHERE item.owner_id = $1) AS owned",
    "list": "SELECT item.title, item.description, item.id, item.owner_id FROM item "
    "WHERE item.owner_id = $1 ORDER BY item.title, item.id LIMIT 100 OFFSET 0",
}


def psql(port: int, user: str, database: str, sql: str) -> str:
    argv = [str(PSQL), "-X", "-q", "-A", "-t", "-h", "127.0.0.1", "-p", str(port), "-U", user]
    done = subprocess.run(
        [*argv, "-d", database, "-v", "ON_ERROR_STOP=1", "-c", sql],
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout


def nodes(plan: dict) -> list[tuple[str, int]]:
    """(node, its own shared buffers hit + read) for a plan node and those under it."""
    below = [n for child in plan.get("Plans", []) for n in nodes(child)]
    total = plan["Shared Hit Blocks"] + plan["Shared Read Blocks"]
    own = total - sum(
        c["Shared Hit Blocks"] + c["Shared Read Blocks"] for c in plan.get("Plans", [])
    )
    name = plan["Node Type"] + (f" {plan['Index Name']}" if "Index Name" in plan else "")
    return [(name, own), *below]


def boot(port: int, user: str, writes: int) -> dict[str, list[tuple[str, int]]]:
    psql(port, user, "postgres", "DROP DATABASE IF EXISTS layout_probe")
    psql(port, user, "postgres", "CREATE DATABASE layout_probe")
    psql(port, user, "layout_probe", SCHEMA)
    psql(port, user, "layout_probe", "VACUUM ANALYZE")  # its own: not in a transaction
    for _ in range(1 + writes):  # one statement each, as the app's requests
        psql(port, user, "layout_probe", NEW_ITEM)
    owner = psql(port, user, "layout_probe", OWNER.strip("()")).strip()
    found = {}
    for name, statement in STATEMENTS.items():
        sql = statement.replace("$1", f"'{owner}'::uuid")
        explain = f"EXPLAIN (ANALYZE, BUFFERS, TIMING OFF, FORMAT JSON) {sql}"
        psql(port, user, "layout_probe", explain)  # the first run reads the catalog too
        (plan,) = json.loads(psql(port, user, "layout_probe", explain))
        found[name] = [n for n in nodes(plan["Plan"]) if n[1]]
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--user", default="bench")
    parser.add_argument("--boots", type=int, default=30)
    parser.add_argument(
        "--writes", type=int, default=0, help="items more of the superuser's (the warm-up's POSTs)"
    )
    options = parser.parse_args()
    totals: collections.Counter[tuple[int, ...]] = collections.Counter()
    for n in range(options.boots):
        found = boot(options.port, options.user, options.writes)
        total = tuple(sum(pages for _, pages in found[name]) for name in STATEMENTS)
        totals[total] += 1
        print(f"boot {n + 1:2}: " + "; ".join(f"{k} {found[k]}" for k in STATEMENTS), flush=True)
    psql(options.port, options.user, "postgres", "DROP DATABASE IF EXISTS layout_probe")
    for total, seen in sorted(totals.items()):
        print(
            f"{' + '.join(map(str, total))} = {sum(total)} pages "
            f"({', '.join(STATEMENTS)}): {seen} of {options.boots} boots"
        )


if __name__ == "__main__":
    main()
