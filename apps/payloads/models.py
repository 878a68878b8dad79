"""Seed 002's `BusinessModel`. Every leaf is a string, as in the seed's data files.

The seed's sample files leave `resources` empty, so the shape of `Resource` (an
availability calendar of days with time slots) is ours.
"""

from pydantic import BaseModel, Field

from apps._pydantic import PYDANTIC_V2


class Customer(BaseModel):
    customer_id: str
    mobile: str
    name: str
    email: str
    dob: str
    created_at: str
    updated_at: str


class ReadableBooking(BaseModel):
    text: str
    post_back: str


class Booking(BaseModel):
    booking_id: str
    service_name: str
    date: str
    start_time: str
    readable_booking: str
    created_at: str
    updated_at: str
    num_of_customers: str
    status: str
    readable_booking_with_id: ReadableBooking


class Service(BaseModel):
    service_id: str
    name: str
    created_at: str
    updated_at: str


class TimeSlot(BaseModel):
    start_time: str
    end_time: str
    status: str


class AvailabilityDay(BaseModel):
    date: str
    slots: list[TimeSlot]


class Resource(BaseModel):
    resource_id: str
    name: str
    created_at: str
    updated_at: str
    availability: list[AvailabilityDay]


class BusinessModel(BaseModel):
    # `_id` needs an alias: a leading underscore makes a private attribute in both majors
    id: str = Field(alias="_id")
    business_name: str
    created_at: str
    updated_at: str
    customers: list[Customer]
    bookings: list[Booking]
    services: list[Service]
    resources: list[Resource]

    if PYDANTIC_V2:
        model_config = {"populate_by_name": True}
    else:

        class Config:
            allow_population_by_field_name = True
