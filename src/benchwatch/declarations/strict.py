"""What every declaration model shares: unknown keys are refused and values never change."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

NAME = r"^[a-z0-9][a-z0-9_]*$"  # an app's, an endpoint's, a flavor's, a question's name


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
