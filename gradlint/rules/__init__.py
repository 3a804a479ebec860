"""The rule registry, in code order."""

from __future__ import annotations

ALL_RULES: list = []
