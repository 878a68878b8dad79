"""Seed 003: SQLAlchemy 2.x posts read and written through FastAPI.

Sync sessions in `def` endpoints (FastAPI's threadpool), as in the seed. The database is
`DATABASE_URL` (PostgreSQL via psycopg 3) when set, else `POSTS_DATABASE_URL` (SQLite).
At startup the table is dropped, recreated and filled with `data.ROW_COUNT` fixed rows;
an unreachable database fails the startup (uvicorn exits non-zero).
"""

from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from typing import Annotated, Any

from fastapi import Depends, FastAPI
from sqlalchemy import asc, desc, exc, insert, select
from sqlalchemy.orm import Session, sessionmaker

from apps._inject import with_injected_cpu
from apps.posts.data import post_rows, synthetic_post
from apps.posts.models import Order, PostIn, PostOut, PostsOut, utc_now
from apps.posts.orm import Base, Post, database_url, make_engine, safe_url

DATABASE_URL = database_url()
engine = make_engine(DATABASE_URL)
SessionLocal = sessionmaker(engine, expire_on_commit=False)


def reset_database() -> None:
    try:
        Base.metadata.drop_all(engine)
        Base.metadata.create_all(engine)
        with SessionLocal.begin() as session:
            session.execute(insert(Post), post_rows())
    except exc.DBAPIError as error:
        reason = str(error.orig).strip().splitlines()[0] if error.orig else str(error)
        raise RuntimeError(
            f"posts: cannot prepare database {safe_url(DATABASE_URL)}: {reason}"
        ) from None
    if engine.dialect.name == "postgresql":
        with engine.begin() as connection:
            connection.exec_driver_sql(
                "SELECT setval(pg_get_serial_sequence('posts', 'id'), (SELECT max(id) FROM posts))"
            )


@asynccontextmanager
async def lifespan(_: FastAPI) -> AsyncIterator[None]:
    reset_database()
    yield
    engine.dispose()


def get_db() -> Iterator[Session]:
    with SessionLocal() as session:
        yield session


DbSession = Annotated[Session, Depends(get_db)]
api = FastAPI(lifespan=lifespan)


@api.get("/posts")
def get_posts(
    session: DbSession,
    per_page: int = 10,
    page: int = 0,
    order: Order = Order.DESC,
) -> PostsOut:
    direction = desc if order is Order.DESC else asc
    query = (
        select(Post)
        .where(Post.is_deleted.is_(False))
        .order_by(direction(Post.published_at), direction(Post.id))
        .limit(per_page)
        .offset(per_page * page)
    )
    return PostsOut(posts=session.execute(query).scalars().all())


@api.get("/posts_synthetic")
def posts_synthetic(per_page: int = 10) -> PostsOut:
    return PostsOut(posts=[PostOut(**synthetic_post(i)) for i in range(per_page)])


@api.post("/posts", response_model=PostOut)
def create_post(post_in: PostIn, session: DbSession) -> Any:
    query = (
        insert(Post)
        .values(
            updated_at=utc_now().replace(microsecond=0),
            published_at=post_in.published_at,
            title=post_in.title,
            content=post_in.content,
            is_deleted=False,
        )
        .returning(Post)
    )
    post = session.execute(query).scalar_one()
    session.commit()
    return post


app = with_injected_cpu(api)
