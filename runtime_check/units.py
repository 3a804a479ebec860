"""Number formatting shared by the report and the growth messages (no torch import): the
one definition is gradlint's, which the rule docs' measured figures use too."""

from __future__ import annotations

from gradlint.units import format_bytes, format_count

__all__ = ["format_bytes", "format_count"]
