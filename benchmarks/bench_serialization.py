"""Serialization: to a dict, to JSON, FastAPI's jsonable_encoder, orjson of the dumped dict,
and the whole path FastAPI takes for a `response_model` with the default response class."""

import time
from typing import ClassVar

import orjson

from . import common, compat, inject


class Serialization:
    params: ClassVar = [common.CASES]
    param_names: ClassVar = ["case"]
    timer = time.process_time

    def setup(self, name):
        from fastapi.encoders import jsonable_encoder

        self.instance = common.case(name).instance
        self.jsonable_encoder = jsonable_encoder

    def time_dump_dict(self, name):
        compat.dump(self.instance)

    def time_dump_json(self, name):
        compat.dump_json(self.instance)

    def time_jsonable_encoder(self, name):
        self.jsonable_encoder(self.instance)

    def time_orjson_dumped_dict(self, name):
        orjson.dumps(compat.dump(self.instance))


class FastAPIResponse:
    """`fastapi.routing.serialize_response` on the route's own response field, then the body."""

    params: ClassVar = [common.CASES]
    param_names: ClassVar = ["case"]
    timer = time.process_time

    def setup(self, name):
        self.case = common.case(name)
        self.respond = compat.fastapi_response_path(self.case.model)

    def time_response_model(self, name):
        self.respond(self.case.instance)

    def time_response_model_from_dict(self, name):
        self.respond(self.case.data)


class SerializationMemory:
    params: ClassVar = [common.LARGE_PAYLOADS]
    param_names: ClassVar = ["case"]

    def setup(self, name):
        self.case = common.case(name)
        self.respond = compat.fastapi_response_path(self.case.model)

    def peakmem_dump_json(self, name):
        compat.dump_json(self.case.instance)

    def peakmem_response_model(self, name):
        self.respond(self.case.instance)


inject.inject_into(Serialization, FastAPIResponse)  # off unless BENCHWATCH_MICRO_INJECT is set
