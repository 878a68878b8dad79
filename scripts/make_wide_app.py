"""Write a generated FastAPI app with 100 declared endpoints (the "wide" app) into a folder, the same
text every time: four routers of five resources each, a Pydantic model per resource, a login that
hands out a bearer token (an OAuth2 password flow), and an SQLite database (in memory, seeded at
import, so every boot starts from the same rows). Each resource has five endpoints: its list, one
record, a summary of one record (path parameters), a create and an update. The first five
resources are behind the login: their lists are what `benchwatch init` picks for `quick`.

    python scripts/make_wide_app.py DIR [--init] [--resources 20]

`--init` also runs `benchwatch init` in DIR (a git repository is made there first) with the login's
credentials set, so DIR holds the declarations a team's `init` would write; scripts/time_shards.py
and the shard tests use it. Standard library only (the app's own dependencies are pinned in its
requirements.txt)."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

RESOURCES = [
    ["projects", "tasks", "notes", "invoices", "orders"],
    ["customers", "suppliers", "products", "warehouses", "shipments"],
    ["articles", "comments", "tags", "authors", "reviews"],
    ["events", "venues", "tickets", "bookings", "payments"],
]
ROUTERS = ["work", "trade", "content", "events"]
PROTECTED = set(RESOURCES[0])  # behind the login: their lists become the quick set
SEED_ROWS = 12
LIST_LIMIT = 10
USER = "admin@example.com"
PASSWORD = "wide-app-pw-1"  # a fixture's account, not a secret: the app creates it at import
REQUIREMENTS = """fastapi==0.165.0
pydantic==2.14.4
uvicorn==0.54.0
python-multipart==0.0.34
"""

DB = '''"""The app's SQLite database: in memory, one connection, seeded at import with the same rows."""

import sqlite3
import threading

RESOURCES = {resources!r}
SEED_ROWS = {seed}

connection = sqlite3.connect(":memory:", check_same_thread=False)
lock = threading.Lock()


def _seed() -> None:
    for table in RESOURCES:
        connection.execute(
            f"CREATE TABLE {{table}} (id INTEGER PRIMARY KEY, name TEXT NOT NULL, "
            "quantity INTEGER NOT NULL, price REAL NOT NULL, note TEXT NOT NULL)"
        )
        connection.executemany(
            f"INSERT INTO {{table}} (name, quantity, price, note) VALUES (?, ?, ?, ?)",
            [(f"{{table}} {{i}}", i, i * 2.5, f"seeded {{table}} row {{i}}") for i in range(1, SEED_ROWS + 1)],
        )
    connection.commit()


def rows(sql: str, *args: object) -> list[tuple]:
    with lock:
        return connection.execute(sql, args).fetchall()


def write(sql: str, *args: object) -> int:
    with lock:
        cursor = connection.execute(sql, args)
        connection.commit()
        return cursor.lastrowid or 0


_seed()
'''

AUTH = '''"""A login that hands out a bearer token (an OAuth2 password flow) and the check of it."""

import hashlib
import hmac
from typing import Annotated

from fastapi import APIRouter, Depends, HTTPException
from fastapi.security import OAuth2PasswordBearer, OAuth2PasswordRequestForm
from pydantic import BaseModel

USER = {user!r}
PASSWORD = {password!r}
KEY = b"wide-app-signing-key"

router = APIRouter(tags=["login"])
bearer = OAuth2PasswordBearer(tokenUrl="/login/access-token")


class Token(BaseModel):
    access_token: str
    token_type: str = "bearer"


def _sign(user: str) -> str:
    return user + "." + hmac.new(KEY, user.encode(), hashlib.sha256).hexdigest()


@router.post("/login/access-token")
async def login(form: Annotated[OAuth2PasswordRequestForm, Depends()]) -> Token:
    if form.username != USER or form.password != PASSWORD:
        raise HTTPException(status_code=400, detail="Incorrect email or password")
    return Token(access_token=_sign(form.username))


async def current_user(token: Annotated[str, Depends(bearer)]) -> str:
    user = token.rpartition(".")[0]
    if not hmac.compare_digest(token, _sign(user)):
        raise HTTPException(status_code=401, detail="Could not validate credentials")
    return user
'''

MODELS_HEAD = '''"""The Pydantic models: per resource, what is created and what is answered."""

from pydantic import BaseModel, Field
'''

MODEL = """

class {cls}In(BaseModel):
    name: str = Field(min_length=1, max_length=80, examples=["{singular} one"])
    quantity: int = Field(ge=0, examples=[3])
    price: float = Field(ge=0, examples=[9.5])
    note: str = Field(default="", max_length=200, examples=["a {singular}"])


class {cls}({cls}In):
    id: int


class {cls}Page(BaseModel):
    data: list[{cls}]
    count: int


class {cls}Summary(BaseModel):
    id: int
    label: str
    total: float
    words: int
"""

ROUTER_HEAD = '''"""The {router} router: {names}."""

from typing import Annotated

from fastapi import APIRouter, Depends, HTTPException

from app import db
from app.auth import current_user
from app.models import {imports}

router = APIRouter()
'''

ENDPOINTS = """

@router.get("/{table}/", response_model={cls}Page, tags=["{table}"])
async def list_{table}({auth}skip: int = 0, limit: int = {limit}) -> {cls}Page:
    found = db.rows("SELECT id, name, quantity, price, note FROM {table} ORDER BY id LIMIT ? OFFSET ?", limit, skip)
    count = db.rows("SELECT COUNT(*) FROM {table}")[0][0]
    return {cls}Page(data=[{cls}(id=r[0], name=r[1], quantity=r[2], price=r[3], note=r[4]) for r in found], count=count)


@router.get("/{table}/{{id}}", response_model={cls}, tags=["{table}"])
async def read_{singular}({auth}id: int) -> {cls}:
    found = db.rows("SELECT id, name, quantity, price, note FROM {table} WHERE id = ?", id)
    if not found:
        raise HTTPException(status_code=404, detail="{singular} not found")
    r = found[0]
    return {cls}(id=r[0], name=r[1], quantity=r[2], price=r[3], note=r[4])


@router.get("/{table}/{{id}}/summary", response_model={cls}Summary, tags=["{table}"])
async def summarize_{singular}({auth}id: int) -> {cls}Summary:
    found = db.rows("SELECT id, name, quantity, price, note FROM {table} WHERE id = ?", id)
    if not found:
        raise HTTPException(status_code=404, detail="{singular} not found")
    r = found[0]
    return {cls}Summary(id=r[0], label=r[1].upper(), total=round(r[2] * r[3], 2), words=len(r[4].split()))


@router.post("/{table}/", response_model={cls}, tags=["{table}"])
async def create_{singular}({auth}body: {cls}In) -> {cls}:
    new = db.write(
        "INSERT INTO {table} (name, quantity, price, note) VALUES (?, ?, ?, ?)",
        body.name, body.quantity, body.price, body.note,
    )
    return {cls}(id=new, **body.model_dump())


@router.put("/{table}/{{id}}", response_model={cls}, tags=["{table}"])
async def update_{singular}({auth}id: int, body: {cls}In) -> {cls}:
    if not db.rows("SELECT id FROM {table} WHERE id = ?", id):
        raise HTTPException(status_code=404, detail="{singular} not found")
    db.write(
        "UPDATE {table} SET name = ?, quantity = ?, price = ?, note = ? WHERE id = ?",
        body.name, body.quantity, body.price, body.note, id,
    )
    return {cls}(id=id, **body.model_dump())
"""

MAIN = '''"""A generated FastAPI app with 100 endpoints (scripts/make_wide_app.py): benchwatch's wide fixture."""

from fastapi import FastAPI

from app import auth
{imports}

app = FastAPI(title="wide")
app.include_router(auth.router)
{includes}
'''


def singular(table: str) -> str:
    return table[:-1] if table.endswith("s") else table


def class_name(table: str) -> str:
    return singular(table).capitalize()


def files(resources: int = 20) -> dict[str, str]:
    """Relative path -> text of every file of the app, in a fixed order: the first `resources`
    resources (five endpoints each; the tests' small compare takes one)."""
    tables = [t for group in RESOURCES for t in group][:resources]
    out = {
        "requirements.txt": REQUIREMENTS,
        "app/__init__.py": "",
        "app/db.py": DB.format(resources=tables, seed=SEED_ROWS),
        "app/auth.py": AUTH.format(user=USER, password=PASSWORD),
        "app/models.py": MODELS_HEAD
        + "".join(MODEL.format(cls=class_name(t), singular=singular(t)) for t in tables),
        "app/routers/__init__.py": "",
    }
    routers = []
    for router, every in zip(ROUTERS, RESOURCES, strict=True):
        group = [t for t in every if t in tables]
        if not group:
            continue
        routers.append(router)
        imports = ", ".join(
            f"{class_name(t)}{s}" for t in group for s in ("", "In", "Page", "Summary")
        )
        text = ROUTER_HEAD.format(router=router, names=", ".join(group), imports=imports)
        for table in group:
            auth = "user: Annotated[str, Depends(current_user)], " if table in PROTECTED else ""
            text += ENDPOINTS.format(
                table=table,
                cls=class_name(table),
                singular=singular(table),
                auth=auth,
                limit=LIST_LIMIT,
            )
        out[f"app/routers/{router}.py"] = text
    out["app/main.py"] = MAIN.format(
        imports="\n".join(f"from app.routers import {r}" for r in routers),
        includes="\n".join(f"app.include_router({r}.router)" for r in routers),
    )
    return out


def write(folder: Path, resources: int = 20) -> None:
    for name, text in files(resources).items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def credentials() -> dict[str, str]:
    """The environment `init`, `verify` and `compare` of the app need: its login's account."""
    return {"BENCHWATCH_USER": USER, "BENCHWATCH_PASSWORD": PASSWORD}


def git(folder: Path, *args: str) -> None:
    subprocess.run(
        [
            "git",
            "-C",
            str(folder),
            "-c",
            "user.name=wide",
            "-c",
            "user.email=wide@example.com",
            *args,
        ],
        check=True,
        capture_output=True,
    )


def init(folder: Path, benchwatch: list[str]) -> None:
    """A git repository with the app committed, then `benchwatch init` run in it and committed."""
    git(folder, "init", "-q")
    git(folder, "add", "-A")
    git(folder, "commit", "-qm", "the wide app")
    done = subprocess.run(
        [*benchwatch, "init", "--workflows-from=someone/benchwatch@" + "0" * 40],
        cwd=folder,
        env={k: v for k, v in os.environ.items() if k != "BENCHWATCH_ROOT"} | credentials(),
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        sys.exit(f"ERROR: benchwatch init failed in {folder}:\n{done.stdout}{done.stderr}")
    print(done.stdout, end="")
    git(folder, "add", "-A")
    git(folder, "commit", "-qm", "benchwatch init")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument(
        "--init", action="store_true", help="a git repository, then benchwatch init"
    )
    parser.add_argument(
        "--resources", type=int, default=20, help="how many resources (5 endpoints each; 20)"
    )
    args = parser.parse_args()
    if args.folder.exists() and any(args.folder.iterdir()):
        print(f"ERROR: {args.folder} is not empty; give a new folder", file=sys.stderr)
        return 3
    write(args.folder, args.resources)
    if args.init:
        init(args.folder, [sys.executable, "-m", "benchwatch"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
