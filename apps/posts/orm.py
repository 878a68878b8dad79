"""Seed 003's SQLAlchemy 2.x `Post` table, and the database the app talks to."""

from __future__ import annotations

import os
import tempfile
from datetime import datetime
from pathlib import Path

from sqlalchemy import Engine, create_engine, func
from sqlalchemy.engine import make_url
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column
from sqlalchemy.types import Text


class Base(DeclarativeBase):
    pass


class Post(Base):
    __tablename__ = "posts"

    id: Mapped[int] = mapped_column(primary_key=True)
    created_at: Mapped[datetime] = mapped_column(server_default=func.now())
    updated_at: Mapped[datetime] = mapped_column(onupdate=func.now())
    published_at: Mapped[datetime] = mapped_column(nullable=False)
    title: Mapped[str] = mapped_column(Text)
    content: Mapped[str] = mapped_column(Text)
    is_deleted: Mapped[bool] = mapped_column(nullable=False, default=False)


def database_url() -> str:
    """`DATABASE_URL` (PostgreSQL) wins over `POSTS_DATABASE_URL` (SQLite by default)."""
    url = os.environ.get("DATABASE_URL") or os.environ.get("POSTS_DATABASE_URL")
    if not url:
        return f"sqlite:///{Path(tempfile.gettempdir()) / 'benchwatch-posts.db'}"
    if url.startswith(("postgresql://", "postgres://")):
        url = "postgresql+psycopg://" + url.split("://", 1)[1]
    return url


def make_engine(url: str) -> Engine:
    if make_url(url).get_backend_name() == "sqlite":
        return create_engine(url, connect_args={"check_same_thread": False})
    return create_engine(url, pool_size=10, max_overflow=10, pool_pre_ping=False)


def safe_url(url: str) -> str:
    return make_url(url).render_as_string(hide_password=True)
