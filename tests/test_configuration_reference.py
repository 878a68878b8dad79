"""docs/configuration.md is generated from the models; it must say what they say."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from benchwatch.scaffold.reference import GENERATOR, TABLES, Table, render

DOC = Path(__file__).resolve().parents[1] / "docs" / "configuration.md"


def test_docs_configuration_is_what_the_models_say():
    assert DOC.read_text() == render(), f"docs/configuration.md is out of date: run `{GENERATOR}`"


def test_every_key_of_every_file_has_a_description():
    missing = []
    for table in TABLES:
        schema = table.model.model_json_schema(by_alias=True)
        for name, model in [(table.model.__name__, schema), *schema.get("$defs", {}).items()]:
            missing += [
                f"{name}.{key}"
                for key, prop in model["properties"].items()
                if not prop.get("description")
            ]
    assert not missing, f"add Field(description=...) to: {', '.join(missing)}"


class _Limit(BaseModel):
    model_config = ConfigDict(extra="forbid")
    seconds: float = Field(default=1.5, gt=0, description="how long")


class _Step(BaseModel):
    """One step."""

    model_config = ConfigDict(extra="forbid")
    name: str = Field(pattern=r"^[a-z]+$", description="its name")
    limit: _Limit = Field(default=_Limit(), description="its limit")


class _Plan(BaseModel):
    """A plan."""

    model_config = ConfigDict(extra="forbid")
    key: str = Field(description="the table's key")
    mode: str | None = Field(default=None, description="a mode")
    steps: list[_Step] = Field(min_length=1, description="the steps")
    extras: dict[str, _Limit] = Field(default={}, description="more limits")


def test_nested_tables_get_their_own_sections_with_toml_headers():
    text = render((Table("plan.toml", "plans.<name>", _Plan, key_field="key"),))
    headers = [line for line in text.splitlines() if line.startswith("### ")]
    assert headers == [
        "### [plans.<name>]",
        "### [[plans.<name>.steps]]",
        "### [plans.<name>.steps.limit]",
        "### [plans.<name>.extras.<name>]",
    ]
    assert "| `key` |" not in text  # given by the table's key, described in the intro instead
    assert "A plan. `<name>` is the table's key (string)." in text
    assert "| `mode` | string | — | a mode |" in text
    assert "| `steps` | array of tables, at least 1 | required | the steps |" in text
    assert "| `name` | string matching `^[a-z]+$` | required | its name |" in text
    assert "| `limit` | table | the defaults below | its limit |" in text
    assert "| `seconds` | number, > 0 | `1.5` | how long |" in text
    assert "| `extras` | tables by name | `{}` | more limits |" in text
