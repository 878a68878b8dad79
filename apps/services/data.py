"""Deterministic raw input for `services` (the seed used `datetime.now()`; we use fixed times).

Must not be changed — only appended — so figures stay comparable over time.
Datetimes are naive and whole seconds: Pydantic v1 and v2 then serialize them identically.
"""

from datetime import datetime, timedelta
from typing import Any

SERVICE_COUNT = 20
FIRST_CREATED = datetime(2023, 6, 21, 9, 0, 0)


def raw_services(count: int = SERVICE_COUNT) -> list[dict[str, Any]]:
    return [
        {
            "service_id": i,
            "name": f"service-{i}",
            "version_number": i,
            "version_name": f"v{i}",
            "created_on": FIRST_CREATED + timedelta(hours=i),
            "updated_on": FIRST_CREATED + timedelta(days=1, hours=i, minutes=30),
        }
        for i in range(1, count + 1)
    ]
