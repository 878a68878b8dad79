"""A user's own FastAPI app: a to-do list on SQLite, migrated by a pre-start command."""

import os
import sqlite3

from fastapi import FastAPI
from pydantic import BaseModel

DATABASE = os.environ["TODO_DATABASE"]


class Todo(BaseModel):
    id: int
    title: str
    done: bool


class NewTodo(BaseModel):
    title: str


app = FastAPI()


@app.get("/todos")
def list_todos(limit: int = 50) -> list[Todo]:
    with sqlite3.connect(DATABASE) as db:
        rows = db.execute("SELECT id, title, done FROM todo ORDER BY id LIMIT ?", (limit,))
        return [Todo(id=i, title=t, done=bool(d)) for i, t, d in rows]


@app.post("/todos", status_code=201)
def add_todo(todo: NewTodo) -> Todo:
    with sqlite3.connect(DATABASE) as db:
        cursor = db.execute("INSERT INTO todo (title, done) VALUES (?, 0)", (todo.title,))
        return Todo(id=cursor.lastrowid, title=todo.title, done=False)
