"""Deterministic rows for the `posts` table and the seed's synthetic posts.

Must not be changed — only appended — so figures stay comparable over time. Every 20th
post is published in 2100 (so `is_published` is false until then), every 50th (+7) is
deleted. Datetimes are naive and whole seconds, which Pydantic v1 and v2 serialize alike.
"""

from datetime import datetime, timedelta
from typing import Any

ROW_COUNT = 1000
FIRST_PUBLISHED = datetime(2023, 7, 1, 8, 0, 0)
FUTURE_PUBLISHED = datetime(2100, 1, 1, 8, 0, 0)
SYNTHETIC_TIME = datetime(2023, 6, 30, 12, 0, 0)
SYNTHETIC_TITLE = "Статья"
SYNTHETIC_CONTENT = "Съешь ещё этих мягких французских булок, да выпей же чаю."


def post_row(i: int) -> dict[str, Any]:
    base = FUTURE_PUBLISHED if i % 20 == 0 else FIRST_PUBLISHED
    published_at = base + timedelta(hours=i)
    return {
        "id": i,
        "created_at": published_at - timedelta(days=1),
        "updated_at": published_at + timedelta(minutes=30),
        "published_at": published_at,
        "title": f"Post {i}",
        "content": f"Body of post {i}. " + "Lorem ipsum dolor sit amet. " * (1 + i % 5),
        "is_deleted": i % 50 == 7,
    }


def post_rows(count: int = ROW_COUNT) -> list[dict[str, Any]]:
    return [post_row(i) for i in range(1, count + 1)]


def synthetic_post(i: int) -> dict[str, Any]:
    return {
        "id": i,
        "published_at": SYNTHETIC_TIME,
        "updated_at": SYNTHETIC_TIME,
        "title": SYNTHETIC_TITLE,
        "content": SYNTHETIC_CONTENT,
    }
