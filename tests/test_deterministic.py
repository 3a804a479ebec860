"""The same input gives the same report on every run: nothing a finding says may depend
on the order Python iterates a set in (which PYTHONHASHSEED changes)."""

from __future__ import annotations

import libcst as cst

from gradlint.analysis.facts import FileFacts

# A helper handed two models it evaluates, one an attribute of the other: a finding at
# its call names one of them, and must name the same one on every run (gpytorch's
# `get_metric(model, model.likelihood, ...)` named either, by hash seed).
TWO_MODELS_ONE_HELPER = """\
import torch


def get_metric(model, likelihood, data, metric):
    model.eval()
    likelihood.eval()
    return metric(likelihood(model(data)), data)
"""


def test_a_helpers_forwarded_parameters_come_in_source_order() -> None:
    facts = FileFacts(cst.parse_module(TWO_MODELS_ONE_HELPER))
    helper = facts.index.functions[0]
    summary = facts.summaries.of(helper)
    # `metric(likelihood(model(data)), data)`: the outer calls are met first
    assert list(summary.forwarded_params) == ["metric", "likelihood", "model"]
