"""A pytest plugin: a user's own test asserts that a training step keeps no autograd graph
alive from one iteration to the next. Installing torch-gradlint registers it (entry point
`pytest11`); without the install, `pytest -p runtime_check.pytest_plugin`.

    @pytest.mark.no_graph_growth(iterations=4)
    def test_step(trainer):          # the body is one training step; it runs 1 + 4 times
        ...
        return running_loss          # what the step carries is measured

    def test_loop(assert_no_graph_growth):
        assert_no_graph_growth(step)   # runtime_check.assert_no_graph_growth, as a fixture

Importing this module imports neither torch nor the measurement: every pytest run in an
environment with the plugin installed loads it, and most of them never use it.
"""

from __future__ import annotations

import inspect

import pytest

MARKER = "no_graph_growth"
_OPTIONS = ("iterations", "warmup", "watch", "scan_live_tensors")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        f"{MARKER}(iterations=4, warmup=1, watch=(), scan_live_tensors=True): run the test's "
        "body warmup + iterations times as one training step each (same fixtures) and fail "
        "if the autograd graph it keeps alive grows at every measured iteration",
    )


@pytest.fixture
def assert_no_graph_growth():
    """`assert_no_graph_growth(step, *, iterations=4, warmup=1, watch=(),
    scan_live_tensors=True)`: runtime_check's assertion, without an import."""
    from runtime_check.growth import assert_no_graph_growth as check

    return check


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function):
    marker = pyfuncitem.get_closest_marker(MARKER)
    if marker is None:
        return None
    unknown = set(marker.kwargs) - set(_OPTIONS)
    if marker.args or unknown:
        raise pytest.UsageError(
            f"{pyfuncitem.nodeid}: @pytest.mark.{MARKER} takes keyword options only "
            f"({', '.join(_OPTIONS)}); got {', '.join(map(repr, marker.args)) or ''}"
            f"{', '.join(sorted(unknown))}"
        )
    function = pyfuncitem.obj
    if inspect.iscoroutinefunction(function):
        raise pytest.UsageError(f"{pyfuncitem.nodeid}: @pytest.mark.{MARKER} needs a sync test")
    from runtime_check.growth import assert_no_graph_growth as check

    arguments = {name: pyfuncitem.funcargs[name] for name in pyfuncitem._fixtureinfo.argnames}
    # The body is the step: the same fixtures each time, as one training loop's state.
    check(lambda: function(**arguments), **marker.kwargs)
    return True
