"""`compare --shard K/N`: a compare's counts split over N runners. The declared endpoints of the
matched variant pairs are ordered by (pair, endpoint label) and dealt round-robin, so every shard
counts the same number of endpoints give or take one, the same endpoints on every run, and base
and head of one endpoint always in one shard. Timings cannot be split: shard 1 (TIMED_SHARD) also
runs the load rounds of the `quick` set (and the micro-benchmarks), side by side as a compare
without shards would. Each shard writes shard.json beside its compare.json: what
`benchwatch compare-merge` (compare/merge_shards.py) needs to make the one comment."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel

from benchwatch.errors import UserError
from benchwatch.project.variants import Variant

TIMED_SHARD = 1
SHARD_FILE = "shard.json"
_SPEC = re.compile(r"(\d+)/(\d+)")

EndpointKey = tuple[str, str]  # (what the pair is matched on, the endpoint's label)


@dataclass(frozen=True)
class Shard:
    index: int  # 1-based
    count: int

    @property
    def timed(self) -> bool:
        return self.index == TIMED_SHARD

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


def parse_shard(text: str) -> Shard:
    """`K/N` with 1 <= K <= N; anything else is bad input."""
    found = _SPEC.fullmatch(text.strip())
    if found is None:
        raise UserError(f"--shard {text!r}: give K/N, e.g. 1/4 (shard K of N, counting from 1)")
    index, count = int(found[1]), int(found[2])
    if count < 1 or not 1 <= index <= count:
        raise UserError(f"--shard {text!r}: K must be between 1 and N (N at least 1)")
    return Shard(index, count)


def endpoint_keys(pairs: Sequence[tuple[str, Variant, Variant]]) -> list[EndpointKey]:
    """Every (pair key, endpoint label) of the matched pairs, either side's endpoints, sorted."""
    keys = {
        (key, endpoint.label)
        for key, base, head in pairs
        for endpoint in (*base.endpoints, *head.endpoints)
    }
    return sorted(keys)


def owners(keys: Sequence[EndpointKey], count: int) -> dict[EndpointKey, int]:
    """Each endpoint's shard (1-based): dealt round-robin over the sorted keys."""
    return {key: i % count + 1 for i, key in enumerate(keys)}


def digest(keys: Sequence[EndpointKey], count: int) -> str:
    """What the partition was made from: shards of one compare share it."""
    text = json.dumps([count, [list(k) for k in keys]])
    return hashlib.sha256(text.encode()).hexdigest()[:16]


class ShardFacts(BaseModel):
    """shard.json: one shard of a compare, as the merge reads it."""

    index: int
    count: int
    timed: bool
    partition: str  # digest() of the endpoints it was dealt from
    counted: list[EndpointKey]  # this shard's endpoints
    # every (variant, endpoint label) the comment's coverage lists, in its order (judge/coverage.py)
    order: list[tuple[str, str]]


@dataclass(frozen=True)
class Partition:
    """A shard's view of the partition of one compare's endpoints."""

    shard: Shard
    keys: list[EndpointKey]
    owner: dict[EndpointKey, int]

    def counts_here(self, key: str, label: str) -> bool:
        return self.owner.get((key, label)) == self.shard.index

    def facts(self, order: list[tuple[str, str]]) -> ShardFacts:
        return ShardFacts(
            index=self.shard.index,
            count=self.shard.count,
            timed=self.shard.timed,
            partition=digest(self.keys, self.shard.count),
            counted=[k for k in self.keys if self.owner[k] == self.shard.index],
            order=order,
        )


def partition(shard: Shard, pairs: Sequence[tuple[str, Variant, Variant]]) -> Partition:
    keys = endpoint_keys(pairs)
    return Partition(shard, keys, owners(keys, shard.count))


def coverage_order(pairs: Sequence[tuple[Variant, Variant]]) -> list[tuple[str, str]]:
    """(variant, endpoint label) in the order judge/coverage.py walks them."""
    order = []
    for base, head in pairs:
        head_labels = {e.label for e in head.endpoints}
        for label in dict.fromkeys(
            [*(e.label for e in head.endpoints), *(e.label for e in base.endpoints)]
        ):
            order.append((head.id if label in head_labels else base.id, label))
    return order


def write_facts(out: Path, facts: ShardFacts) -> None:
    from benchwatch.results.files import write_json_atomic

    write_json_atomic(out / SHARD_FILE, facts.model_dump(mode="json"))
