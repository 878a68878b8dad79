"""An N+1 planted in a real app: a blog on SQLite through SQLAlchemy whose `GET /posts` loads every
post's comments in one more statement (`selectinload`); the planted commit drops that option, so
each post's comments are read lazily, one statement per post. `compare` of the two commits, by their
counts, exits 1 naming the statement and its count per request; a no-op compare of the same app is
quiet on the statements (its endpoint that sends none among them, 0 → 0). On SQLite and on
PostgreSQL (psycopg through SQLAlchemy: the same statements, `%(param_1)s` for `?`)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import textwrap
from pathlib import Path

import pytest
from conftest import REPO, benchwatch, uvicorn_processes

from benchwatch.figures.metrics import STATEMENTS

# two compares by their counts only (no timing verdict): four boots under valgrind and strace each
pytestmark = [pytest.mark.slow, pytest.mark.load_independent, pytest.mark.timeout(1800)]

POSTS = 20
LOADED_TOGETHER = "OPTIONS = (selectinload(Post.comments),)"
LOADED_ONE_BY_ONE = "OPTIONS = ()  # each post's comments read when used: one statement per post"
APP = textwrap.dedent(
    f'''
    """A blog on SQLite or PostgreSQL: posts and their comments."""

    import os

    from fastapi import FastAPI
    from sqlalchemy import ForeignKey, create_engine, select
    from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column, relationship, selectinload
    from sqlalchemy.pool import StaticPool


    class Base(DeclarativeBase):
        pass


    class Post(Base):
        __tablename__ = "post"
        id: Mapped[int] = mapped_column(primary_key=True)
        title: Mapped[str]
        comments: Mapped[list["Comment"]] = relationship(back_populates="post")


    class Comment(Base):
        __tablename__ = "comment"
        id: Mapped[int] = mapped_column(primary_key=True)
        post_id: Mapped[int] = mapped_column(ForeignKey("post.id"))
        body: Mapped[str]
        post: Mapped[Post] = relationship(back_populates="comments")


    URL = os.environ.get("BLOG_DATABASE_URL", "")  # the boot's PostgreSQL database, or SQLite in memory
    engine = (
        create_engine(URL.replace("postgresql://", "postgresql+psycopg://", 1))
        if URL
        else create_engine(
            "sqlite://", poolclass=StaticPool, connect_args={{"check_same_thread": False}}
        )
    )
    Base.metadata.create_all(engine)
    with Session(engine) as session:
        session.add_all(
            [Post(title=f"post {{i}}", comments=[Comment(body=f"on {{i}}")]) for i in range({POSTS})]
        )
        session.commit()

    {LOADED_TOGETHER}
    app = FastAPI()


    @app.get("/posts")
    def posts():
        with Session(engine) as session:
            found = session.scalars(select(Post).options(*OPTIONS).order_by(Post.id)).all()
            return [{{"id": p.id, "title": p.title, "comments": len(p.comments)}} for p in found]


    @app.get("/health")
    def health():
        return {{"ok": True}}
    '''
)
DECLARED = textwrap.dedent(
    """
    name = "blog"
    app = "app:app"
    stacks = ["latest"]
    {database}

    [[endpoints]]
    name = "posts"
    path = "/posts"

    [[endpoints]]
    name = "health"
    path = "/health"
    """
)


def _git(root: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@t", *args],
        check=True,
        capture_output=True,
    )


POSTGRES = 'database = "postgresql"\nenv = { BLOG_DATABASE_URL = "{database_url}" }'


@pytest.fixture(
    scope="module", params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)]
)
def blog(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A repository with the blog at its first commit and the N+1 planted in its second: on SQLite
    in the server's memory, or on a fresh PostgreSQL database every boot (TEST_DATABASE_URL's
    cluster, else one benchwatch starts)."""
    if request.param == "postgresql":
        from benchwatch.measure import database

        if not os.environ.get("TEST_DATABASE_URL") and database.server_bin() is None:
            pytest.skip("no TEST_DATABASE_URL and no PostgreSQL server binaries")
    root = tmp_path_factory.mktemp(f"statements-{request.param}") / "repo"
    (root / "blog").mkdir(parents=True)
    shutil.copy(REPO / "stacks.toml", root / "stacks.toml")
    (root / "benchwatch.toml").write_text(
        '[benchwatch]\napps = ["blog"]\ndefault_stacks = ["latest"]\n'
    )
    (root / "blog" / "app.py").write_text(APP)
    (root / "blog" / "benchwatch-app.toml").write_text(
        DECLARED.replace("{database}", POSTGRES if request.param == "postgresql" else "")
    )
    (root / ".gitignore").write_text("results/\n.benchwatch/\n__pycache__/\n")
    _git(root, "init", "-q")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "a blog")
    (root / "blog" / "app.py").write_text(APP.replace(LOADED_TOGETHER, LOADED_ONE_BY_ONE))
    _git(root, "commit", "-qam", "comments read per post")
    return root


def _compare(root: Path, out: Path, base: str, head: str) -> tuple[int, dict, str, str]:
    from benchwatch.measure import database

    configured = os.environ.get("TEST_DATABASE_URL")
    done = benchwatch(
        "compare",
        "--base",
        base,
        "--head",
        head,
        "--quick",
        "--no-load",
        "--no-micro",
        "--out",
        str(out),
        root=root,
        env={database.URL_ENV: configured} if configured else None,
        timeout=1500,
    )
    assert "Traceback" not in done.stderr, done.stderr[-3000:]
    data = json.loads((out / "compare.json").read_text())
    return done.returncode, data, (out / "comment.md").read_text(), done.stderr


def _statements(data: dict) -> dict[str, dict]:
    return {r["endpoint"]: r for r in data["rows"] if r["metric"] == STATEMENTS.key}


def test_a_planted_n_plus_one_exits_1_naming_the_statement_and_its_count_per_request(
    blog: Path, tmp_path: Path
) -> None:
    code, data, comment, stderr = _compare(blog, tmp_path / "n1", "HEAD~1", "HEAD")
    rows = _statements(data)
    posts, health = rows["GET /posts"], rows["GET /health"]
    print(json.dumps({k: (r["base_value"], r["head_value"], r["detail"]) for k, r in rows.items()}))
    assert code == 1, stderr[-2000:]
    assert posts["verdict"] == "regression" and posts["gating"]
    # the posts, and their comments in one statement; then the posts, and one statement per post
    assert posts["base_value"] == 2 and posts["head_value"] == 1 + POSTS
    lazily = "SELECT … FROM comment WHERE ? = comment.post_id"
    assert posts["detail"][lazily] == [None, POSTS]
    assert health["verdict"] == "unchanged" and health["base_value"] == health["head_value"] == 0
    assert f"statements 2 → {1 + POSTS} per request (+{POSTS - 1})" in comment
    assert f"`{lazily}` ×{POSTS} (new)" in comment
    assert "SQL statements per request 2 → 21 (blog GET /posts)" in comment
    assert uvicorn_processes(str(blog)) == []  # every server of this repository stopped


def test_a_no_op_compare_of_the_same_app_is_quiet_on_its_statements(
    blog: Path, tmp_path: Path
) -> None:
    _, data, comment, _ = _compare(blog, tmp_path / "noop", "HEAD", "HEAD")
    rows = _statements(data)
    assert set(rows) == {"GET /posts", "GET /health"}
    assert all(r["verdict"] == "unchanged" for r in rows.values()), rows
    assert rows["GET /posts"]["base_value"] == rows["GET /posts"]["head_value"] == 1 + POSTS
    assert "SQL statements per request" not in comment
