"""Seed 002: one `BusinessModel` payload through eight ways of returning it.

Paths are named `<returned>_<response model>_<response class>`, as in the seed's table;
`?file=1kb|10kb|100kb|1mb` picks the payload. Payloads (dicts and validated models) are
built once at import. Endpoints are `def` (threadpool), like the seed's.
"""

from typing import Any

from fastapi import FastAPI, Response
from fastapi.responses import JSONResponse, ORJSONResponse

from apps._inject import with_injected_cpu
from apps._pydantic import to_dict, to_json, validate
from apps.payloads.data import PayloadSize, all_payloads
from apps.payloads.models import BusinessModel

DATA: dict[PayloadSize, dict[str, Any]] = all_payloads()
DATA_OBJ: dict[PayloadSize, BusinessModel] = {
    size: validate(BusinessModel, data) for size, data in DATA.items()
}

api = FastAPI()


@api.get("/dict_none_default")
def dict_none_default(file: PayloadSize) -> Any:
    return DATA[file]


@api.get("/dict_model_default", response_model=BusinessModel)
def dict_model_default(file: PayloadSize) -> Any:
    return DATA[file]


@api.get("/model_model_default", response_model=BusinessModel)
def model_model_default(file: PayloadSize) -> Any:
    return DATA_OBJ[file]


@api.get("/dict_model_json", response_model=BusinessModel)
def dict_model_json(file: PayloadSize) -> Any:
    return JSONResponse(DATA[file])


@api.get("/dict_none_orjson")
def dict_none_orjson(file: PayloadSize) -> Any:
    return ORJSONResponse(DATA[file])


@api.get("/dict_model_orjson", response_model=BusinessModel)
def dict_model_orjson(file: PayloadSize) -> Any:
    return ORJSONResponse(DATA[file])


@api.get("/model_model_orjson", response_model=BusinessModel)
def model_model_orjson(file: PayloadSize) -> Any:
    return ORJSONResponse(to_dict(DATA_OBJ[file]))


@api.get("/model_model_pydantic_json", response_model=BusinessModel)
def model_model_pydantic_json(file: PayloadSize) -> Any:
    return Response(to_json(DATA_OBJ[file]), media_type="application/json")


app = with_injected_cpu(api)
