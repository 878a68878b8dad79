"""The extras split by stage (results/stage_facts.py): nested in memory, the same flat keys in
the same order on disk, so files written before still load and files written now keep their bytes."""

import json
from pathlib import Path

import pytest
from pydantic import BaseModel

from benchwatch.judge.verdict import CompareExtra, Comparison, ConfirmationInfo
from benchwatch.results.files import json_text
from benchwatch.results.schema import RunExtra
from benchwatch.results.stage_facts import FlatExtra, StageFacts

REHEARSAL = Path(__file__).parent / "fixtures" / "rehearsal" / "pushes"


@pytest.mark.parametrize("saved", sorted(REHEARSAL.glob("*/compare/compare.json")), ids=str)
def test_a_saved_compare_json_extra_is_written_again_in_its_order(saved: Path) -> None:
    """(These files predate some keys, which are written with their defaults.)"""
    data = json.loads(saved.read_text())["extra"]
    again = Comparison.model_validate_json(saved.read_text()).extra.model_dump(mode="json")
    assert json_text({k: v for k, v in again.items() if k in data}) == json_text(data)


def test_the_compare_stages_read_and_write_their_flat_keys() -> None:
    flat = {
        "load_plan": None,
        "rounds_short": [],
        "instructions_unavailable": "no benchmarks",
        "counts_unavailable": "--no-counts",
        "counts_seconds": None,
        "cost_unavailable": "no counts",
        "confirmation": {"flagged": ["a"], "confirmed": [], "seconds": 0.0, "skipped": ""},
    }
    extra = CompareExtra.model_validate(flat)
    assert extra.micro.skipped == "no benchmarks" and not extra.micro.ran
    assert extra.counts.skipped == "--no-counts" and extra.cost.skipped == "no counts"
    assert extra.confirmation is not None and extra.confirmation.skipped is None
    written = extra.model_dump(mode="json")
    assert list(written) == [k if isinstance(k, str) else k[0] for k in CompareExtra.DISK_KEYS]
    assert {k: written[k] for k in flat} == flat
    assert "counts" not in written and "load" not in written


def test_a_skipped_confirmation_keeps_its_place_and_its_empty_string() -> None:
    assert ConfirmationInfo(skipped="--no-confirm").model_dump() == {
        "flagged": [],
        "confirmed": [],
        "seconds": 0.0,
        "skipped": "--no-confirm",
    }
    assert ConfirmationInfo().model_dump()["skipped"] == ""


def test_an_old_run_extra_loads_and_is_written_again_in_its_order() -> None:
    old = {
        "loadgen": None,
        "load_plan": {
            "rounds": 3,
            "warmup_s": 1.0,
            "duration_s": 2.0,
            "open_duration_s": 2.0,
            "concurrencies": [10],
            "rate_fractions": [],
            "quick": True,
        },
        "aa_noise": None,
        "side_by_side": None,
        "micro": {"skipped": "no benchmarks/"},
        "reference_stack": "v2",
        "stack_order": ["v2"],
        "shard": None,
        "shards": [],
        "timings": {},
        "micro_inject": None,
        "counts": {"skipped": "strace is missing"},
    }
    extra = RunExtra.model_validate(old)
    assert extra.load.plan is not None and extra.load.plan.rounds == 3
    assert extra.counts == StageFacts(skipped="strace is missing")
    assert json.dumps(extra.model_dump(mode="json")) == json.dumps(old)


def test_flat_keywords_build_the_stages() -> None:
    extra = RunExtra(shard="1/2", load_plan=None, aa_noise=None)
    assert extra.shard == "1/2" and extra.load.plan is None


def test_a_field_without_a_key_on_disk_is_refused_when_the_class_is_made() -> None:
    class Stage(BaseModel):
        kept: int = 0
        forgotten: int = 0

    with pytest.raises(AssertionError, match="forgotten"):

        class Extra(FlatExtra):
            DISK_KEYS = (("kept", "stage", "kept"),)
            stage: Stage = Stage()
