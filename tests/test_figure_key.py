"""One figure identity: every published name decodes to the key that encoded it."""

import gzip
import json
from pathlib import Path

import pytest

from benchwatch.figures.figure_key import (
    PARENT_MARK,
    SIDE_BY_SIDE,
    app_of,
    decode,
    label_for_metric,
    label_metric,
    label_without_metric,
    load_key,
    micro_key,
    open_loop_label,
    server_key,
    setting_apart,
    split_variant,
)
from benchwatch.figures.metrics import (
    CPU,
    INSTRUCTIONS,
    MICRO_INSTRUCTIONS,
    RSS_PEAK,
    SYSCALLS,
    Closed,
    Counted,
    Open,
)
from benchwatch.results.schema import Figure

RUN = Path(__file__).parent / "fixtures" / "site" / "run-quick.json.gz"


def test_every_figure_of_a_real_run_decodes_to_its_own_fields_and_encodes_back():
    figures = [Figure.model_validate(f) for f in json.loads(gzip.open(RUN).read())["figures"]]
    assert len(figures) > 500
    for figure in figures:
        key = decode(figure.name)
        assert key is not None, figure.name
        assert key.name == figure.name
        assert (key.kind, key.stack) == (figure.kind, figure.stack), figure.name
        if figure.kind == "load":
            assert (key.scenario, key.endpoint, key.metric.key) == (
                figure.scenario,
                figure.endpoint,
                figure.metric,
            )
            assert key.variant == figure.variant
            assert (key.setting.pair_params() if key.setting else None) == (
                figure.setting.pair_params() if figure.setting else None
            )
        else:
            assert key.scenario == figure.scenario and key.words[-1] == figure.metric


def test_names_of_each_shape_round_trip_with_their_marks():
    keys = [
        load_key("services@latest", "GET /services?offset=0", Closed(10), CPU),
        load_key("hello-falcon@seed-v1", "GET /", Open(0.5), CPU, SIDE_BY_SIDE),
        load_key("posts@latest", "POST /posts", Counted(), INSTRUCTIONS),
        load_key("posts@latest", "GET /posts?per_page=100&page=0&order=desc", Counted(), SYSCALLS),
        server_key("posts@seed-v2", RSS_PEAK),
        micro_key(("payloads-1MB",), "dump_json", "latest"),
        micro_key(("services",), "validate_json", "v2-pre-rust", instructions=True),
    ]
    names = [k.name for k in keys]
    assert names == [
        "services@latest GET /services?offset=0 c=10 cpu/req",
        "hello-falcon@seed-v1 GET / rate=50% cpu/req (side by side)",
        "posts@latest POST /posts seq instr/req",
        "posts@latest GET /posts?per_page=100&page=0&order=desc seq syscalls/req",
        "posts@seed-v2 rss peak",
        "micro payloads-1MB dump_json@latest",
        "micro services validate_json instructions@v2-pre-rust",
    ]
    for key in keys:
        assert decode(key.name) == key
        relative = key.marked(f" {PARENT_MARK}")
        assert decode(relative.name) == relative and relative.relative
    assert decode(names[-1]).metric is MICRO_INSTRUCTIONS and decode(names[-1]).app == "services"
    assert decode(names[1]).app == "hello" and decode(names[1]).series == "hello-falcon@seed-v1"


@pytest.mark.parametrize(
    "name",
    [
        "",
        "hello",
        "hello@latest",
        "hello@latest GET / c=10",
        "nostack GET / c=10 cpu/req",
        "hello@latest GET / q=3 cpu/req",
        "micro @latest",
        "hello@latest GET / c=10 furlongs",
    ],
)
def test_a_name_benchwatch_never_wrote_decodes_to_nothing(name):
    assert decode(name) is None


def test_the_app_and_variant_rules_live_in_one_place():
    assert (
        app_of("hello-falcon") == "hello"
        and app_of("payloads-1MB") == "payloads"
        and app_of("posts") == "posts"
    )
    assert (
        split_variant("hello-falcon@latest") == ("hello-falcon", "latest")
        and split_variant("latest") is None
    )


def test_a_figure_label_is_read_from_its_end() -> None:
    label = "hello GET /items/{id} seq instructions_per_request"
    assert label_metric(label) == "instructions_per_request"
    assert label_without_metric(label) == "hello GET /items/{id} seq"
    assert setting_apart(label_without_metric(label)) == "hello GET /items/{id}"
    assert label_for_metric(label, "syscalls_per_request") == (
        "hello GET /items/{id} seq syscalls_per_request"
    )
    assert open_loop_label("hello GET / rate=50% cpu_us_per_request")
    assert not open_loop_label("hello GET / c=10 cpu_us_per_request")
    assert not open_loop_label("micro payloads 1MB dump_json")
