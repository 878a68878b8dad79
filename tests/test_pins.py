"""declarations.pins.exact_pin: the one definition of an exact pin."""

import pytest

from benchwatch.declarations.pins import exact_pin


@pytest.mark.parametrize(
    ("requirement", "pin"),
    [
        ("fastapi==0.166.0b1", ("fastapi", "0.166.0b1")),
        ("Foo_Bar[std, x] == 1.0+cpu", ("Foo_Bar", "1.0+cpu")),
        ("pydantic-core==2.27.2", ("pydantic-core", "2.27.2")),
        ("a==1!2.0", ("a", "1!2.0")),
    ],
)
def test_an_exact_pin_gives_its_name_and_version(requirement: str, pin: tuple[str, str]) -> None:
    assert exact_pin(requirement) == pin


@pytest.mark.parametrize(
    "requirement",
    [
        "fastapi",
        "fastapi>=0.100",
        "fastapi==0.*",
        "fastapi===0.100",
        "fastapi==v1.0",
        "fastapi==0.1,==0.1",
        "fastapi==0.1.0foo",
        "fastapi @ https://example.org/fastapi.whl",
        'fastapi==0.1 ; python_version < "3.9"',
        "-e ./pkg",
        "",
    ],
)
def test_anything_else_is_no_pin(requirement: str) -> None:
    assert exact_pin(requirement) is None
