"""asv micro-benchmarks of validation and serialization; one source for Pydantic v1 and v2."""

import sys
from pathlib import Path

# the models live in the repository's apps/ package, next to this directory
_ROOT = str(Path(__file__).resolve().parent.parent)
if _ROOT not in sys.path:
    sys.path.insert(0, _ROOT)
