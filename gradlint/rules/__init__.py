"""The rule registry, in code order."""

from __future__ import annotations

from gradlint.rules.gl002_leaf_inplace_outside_no_grad import LeafInplaceOutsideNoGrad

ALL_RULES: list = [
    LeafInplaceOutsideNoGrad,
]
