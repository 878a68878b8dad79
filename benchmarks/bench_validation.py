"""Validation: from a dict, from JSON bytes, a list of models, the failure path, constraints."""

import time
from typing import ClassVar

from . import common, compat, inject


class Validation:
    params: ClassVar = [common.CASES]
    param_names: ClassVar = ["case"]
    timer = time.process_time

    def setup(self, name):
        self.case = common.case(name)
        self.validate_list = compat.list_validator(self.case.item)
        self.validate_list_json = compat.list_json_validator(self.case.item)

    def time_validate_dict(self, name):
        compat.validate(self.case.model, self.case.data)

    def time_validate_json(self, name):
        compat.validate_json(self.case.model, self.case.raw)

    def time_validate_list(self, name):
        self.validate_list(self.case.items)

    def time_validate_list_json(self, name):
        self.validate_list_json(self.case.items_raw)

    def time_validation_error(self, name):
        try:
            compat.validate(self.case.model, self.case.invalid)
        except compat.ValidationError:
            return
        raise AssertionError(f"{name}: invalid input was accepted")


class Constraints:
    """The price of `conint(ge=1)` and datetime parsing: seed 000's services, 20 per list."""

    params: ClassVar = [[common.SERVICES]]
    param_names: ClassVar = ["case"]
    timer = time.process_time

    def setup(self, name):
        case = common.case(name)
        self.constrained = compat.list_validator(case.item)
        self.plain = compat.list_validator(common.PlainService)
        self.with_datetimes = case.items
        self.with_strings = [
            {
                **item,
                "created_on": item["created_on"].isoformat(),
                "updated_on": item["updated_on"].isoformat(),
            }
            for item in case.items
        ]

    def time_validate_constrained(self, name):
        self.constrained(self.with_datetimes)

    def time_validate_datetime_strings(self, name):
        self.constrained(self.with_strings)

    def time_validate_plain(self, name):
        self.plain(self.with_strings)


class ValidationMemory:
    params: ClassVar = [common.LARGE_PAYLOADS]
    param_names: ClassVar = ["case"]

    def setup(self, name):
        self.case = common.case(name)

    def peakmem_validate_dict(self, name):
        compat.validate(self.case.model, self.case.data)

    def peakmem_validate_json(self, name):
        compat.validate_json(self.case.model, self.case.raw)


inject.inject_into(Validation, Constraints)  # off unless BENCHWATCH_MICRO_INJECT is set
