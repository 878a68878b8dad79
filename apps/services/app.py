"""Seed 000: a list of 20 validated `Service` models (`uvicorn apps.services.app:app`)."""

from fastapi import FastAPI, Query

from apps._inject import with_injected_cpu
from apps._pydantic import validate
from apps.services.data import raw_services
from apps.services.models import Service, ServiceList

api = FastAPI()


@api.get("/services")
async def get_services(
    offset: int = Query(default=0, ge=0, title="Offset of the list"),
) -> ServiceList:
    services = raw_services()
    return ServiceList(
        offset=offset,
        count=len(services),
        total=len(services),
        services=[validate(Service, s) for s in services],
    )


app = with_injected_cpu(api)
