"""Seeded generator of `BusinessModel` payloads of about 1 kB, 10 kB, 100 kB and 1 MB.

Must not be changed — only appended — so figures stay comparable over time. Sizes are
of compact JSON (no spaces), ASCII only. The same seed always gives the same bytes.
"""

from __future__ import annotations

import json
import random
import string
from collections.abc import Callable
from enum import StrEnum
from functools import cache
from typing import Any

SEED = 2023
_ALPHABET = string.ascii_letters + string.digits


class PayloadSize(StrEnum):
    kb1 = "1kb"
    kb10 = "10kb"
    kb100 = "100kb"
    mb1 = "1mb"


TARGET_BYTES = {
    PayloadSize.kb1: 1_000,
    PayloadSize.kb10: 10_000,
    PayloadSize.kb100: 100_000,
    PayloadSize.mb1: 1_000_000,
}


def compact_size(value: Any) -> int:
    return len(json.dumps(value, separators=(",", ":")))


class _Words:
    def __init__(self, seed: int) -> None:
        self.random = random.Random(seed)

    def text(self, low: int, high: int, spaces: bool = False) -> str:
        alphabet = _ALPHABET + " " if spaces else _ALPHABET
        return "".join(self.random.choices(alphabet, k=self.random.randint(low, high)))

    def maybe_empty(self, low: int, high: int) -> str:
        return "" if self.random.random() < 0.2 else self.text(low, high)

    def customer(self) -> dict[str, Any]:
        return {
            "customer_id": self.text(8, 8),
            "mobile": self.text(10, 10),
            "name": self.text(4, 12),
            "email": self.maybe_empty(10, 24),
            "dob": self.maybe_empty(10, 10),
            "created_at": self.text(10, 10, spaces=True),
            "updated_at": self.text(10, 10),
        }

    def booking(self) -> dict[str, Any]:
        return {
            "booking_id": self.text(14, 14),
            "service_name": self.text(10, 24),
            "date": self.text(10, 10),
            "start_time": self.text(8, 8),
            "readable_booking": self.text(40, 80, spaces=True),
            "created_at": self.text(10, 10),
            "updated_at": self.text(10, 10),
            "num_of_customers": self.maybe_empty(1, 2),
            "status": self.text(6, 6),
            "readable_booking_with_id": {
                "text": self.text(40, 80, spaces=True),
                "post_back": self.text(14, 14),
            },
        }

    def service(self) -> dict[str, Any]:
        return {
            "service_id": self.text(20, 20),
            "name": self.text(8, 20),
            "created_at": self.text(24, 24),
            "updated_at": self.text(24, 24),
        }

    def resource(self) -> dict[str, Any]:
        return {
            "resource_id": self.text(12, 12),
            "name": self.text(6, 16),
            "created_at": self.text(10, 10),
            "updated_at": self.text(10, 10),
            "availability": [
                {
                    "date": self.text(10, 10),
                    "slots": [
                        {
                            "start_time": self.text(5, 5),
                            "end_time": self.text(5, 5),
                            "status": self.text(4, 8),
                        }
                        for _ in range(self.random.randint(2, 6))
                    ],
                }
                for _ in range(self.random.randint(1, 4))
            ],
        }


def generate(target_bytes: int, seed: int = SEED) -> dict[str, Any]:
    """A payload whose compact JSON is at most `target_bytes`, grown one item at a time."""
    words = _Words(seed)
    payload: dict[str, Any] = {
        "_id": words.text(24, 24, spaces=True),
        "business_name": words.text(9, 9),
        "created_at": "",
        "updated_at": "",
        "customers": [],
        "bookings": [],
        "services": [],
        "resources": [],
    }
    makers: list[tuple[str, Callable[[], dict[str, Any]]]] = [
        ("customers", words.customer),
        ("bookings", words.booking),
        ("services", words.service),
        ("resources", words.resource),
    ]
    size = compact_size(payload)
    index = 0
    while True:
        key, make = makers[index % len(makers)]
        item = make()
        added = compact_size(item) + (1 if payload[key] else 0)
        if size + added > target_bytes:
            return payload
        payload[key].append(item)
        size += added
        index += 1


@cache
def payload(size: PayloadSize) -> dict[str, Any]:
    return generate(TARGET_BYTES[size])


def all_payloads() -> dict[PayloadSize, dict[str, Any]]:
    return {size: payload(size) for size in PayloadSize}
