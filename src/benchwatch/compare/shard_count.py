"""How many runners a pull request's compare takes when the caller leaves it to benchwatch
(reusable-pr.yml's `shards: 0`, the default): one per ENDPOINTS_PER_SHARD declared endpoints, at
most MAX_SHARDS, at least one. The counts cost time in proportion to the endpoints (every declared
endpoint is counted, both sides on one runner: compare/shard.py); the figure per shard is what
one runner counted within the issue's 6 minutes, measured in docs/shards.md."""

from __future__ import annotations

from collections.abc import Sequence

from benchwatch.errors import UserError
from benchwatch.project.variants import Variant

# a shard of the generated 100-endpoint app (scripts/time_shards.py, 4 shards) counts 25
# endpoints, both sides, in 5-6 minutes on a busy 2-core machine (docs/shards.md)
ENDPOINTS_PER_SHARD = 25
MAX_SHARDS = 10  # runners at once: a free GitHub plan runs 20 jobs, other workflows need some


def declared_endpoints(variants: Sequence[Variant]) -> int:
    """The endpoints a compare of these variants counts: each (variant, endpoint label) once."""
    return len({(v.id, e.label) for v in variants for e in v.endpoints})


def shards_for(endpoints: int, per_shard: int = ENDPOINTS_PER_SHARD, most: int = MAX_SHARDS) -> int:
    """ceil(endpoints / per_shard), between 1 and `most`."""
    if per_shard < 1 or most < 1:
        raise UserError(f"--per-shard {per_shard}, --most {most}: give numbers of at least 1")
    return max(1, min(most, -(-endpoints // per_shard)))


def output_lines(endpoints: int, count: int) -> list[str]:
    """What the workflow's `shards` job appends to $GITHUB_OUTPUT: the count and the matrix."""
    return [
        f"endpoints={endpoints}",
        f"count={count}",
        f"list=[{','.join(str(k) for k in range(1, count + 1))}]",
    ]
