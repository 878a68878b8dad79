"""Seed 000's models, unchanged: the same code runs under Pydantic v1 and v2."""

from datetime import datetime

from pydantic import BaseModel, Field, conint


class Service(BaseModel):
    service_id: int = Field(..., title="Service ID")
    name: str = Field(..., title="Name of the service")
    version_number: conint(ge=1) = Field(..., title="Version of the service")  # type: ignore[valid-type]
    version_name: str = Field(..., title="Version name of the service")
    created_on: datetime = Field(..., title="Date of the service was created")
    updated_on: datetime = Field(..., title="Date of the service was updated")


class ServiceList(BaseModel):
    offset: int = Field(..., title="Offset of the list")
    count: int = Field(..., title="Length of the list")
    total: int = Field(..., title="Total count of the available services")
    services: list[Service] = Field(..., title="List of the services")
