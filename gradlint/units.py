"""Number formatting for measured figures: the rule docs' consequences and runtime_check's
report share it (no torch import)."""

from __future__ import annotations


def format_bytes(value: float) -> str:
    """1536 -> '1.5 KiB'; binary units, as torch.cuda.memory_summary uses."""
    sign = "-" if value < 0 else ""
    value = abs(value)
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if value >= scale:
            return f"{sign}{value / scale:.1f} {unit}"
    return f"{sign}{value:.0f} B"


def format_count(value: float) -> str:
    """Per-iteration rates are usually whole numbers; show decimals only when they are not."""
    return f"{value:.0f}" if float(value).is_integer() else f"{value:.2f}"
