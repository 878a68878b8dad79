"""The installed versions, as numbers (major*1_000_000 + minor*1000 + patch): a resolver that
silently installs something else shows as a step in these plots."""

from . import compat


def track_pydantic_version():
    return compat.version_number("pydantic")


track_pydantic_version.unit = "version"


def track_fastapi_version():
    return compat.version_number("fastapi")


track_fastapi_version.unit = "version"
