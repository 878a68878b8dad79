"""Continuous benchmarks for FastAPI + Pydantic services."""

__version__ = "0.1.0"
