"""runtime_check: run gradlint's fixtures under torch and prove what the linter claims;
and, for your own tests, assert that a training step does not grow the autograd graph.

    import runtime_check
    report = runtime_check.run(["fixtures"], device="cpu")   # -> Report (.ok, .rows)

    from runtime_check import assert_no_graph_growth, no_graph_growth

The harness side (run, Report) never imports torch in the calling process; the measurement
side (assert_no_graph_growth and friends) does, on first use.
"""

from __future__ import annotations

from runtime_check.harness import run
from runtime_check.judge import Growth, Row
from runtime_check.report import Report

_MEASUREMENT = {
    "assert_no_graph_growth": "runtime_check.growth",
    "no_graph_growth": "runtime_check.growth",
    "GraphGrowthError": "runtime_check.growth",
    "GraphGrowthProbe": "runtime_check.growth",
    "GrowthResult": "runtime_check.growth",
    "SavedTensorTracker": "runtime_check.measure",
    "GraphSnapshot": "runtime_check.measure",
    "count_graph_nodes": "runtime_check.measure",
    "collect_tensors": "runtime_check.measure",
    "snapshot": "runtime_check.measure",
}

__all__ = ["run", "Report", "Row", "Growth", *_MEASUREMENT]


def __getattr__(name: str):
    # Lazy, so `python -m runtime_check` and `runtime_check.run` stay free of torch.
    if name in _MEASUREMENT:
        import importlib

        return getattr(importlib.import_module(_MEASUREMENT[name]), name)
    raise AttributeError(f"module 'runtime_check' has no attribute {name!r}")
