"""Assert that a training step does not grow the autograd graph: the public, pytest-friendly
face of the measurement the fixture harness uses.

    from runtime_check import assert_no_graph_growth

    def test_step_does_not_leak():
        state = {"h": torch.zeros(4, 8)}
        def step():
            ...
            return state["h"]
        assert_no_graph_growth(step)

A step "grows the graph" when, after warm-up, the graph nodes reachable from what it keeps
alive, or the bytes of saved tensors still held for backward, increase at *every* measured
iteration. Both metrics are exact (no timing, no RSS), so a leak is caught in a handful of
iterations and a correct step never trips the check.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from itertools import pairwise

from runtime_check.measure import GraphSnapshot, SavedTensorTracker, snapshot
from runtime_check.units import format_bytes, format_count

HINT = (
    "state carried across iterations is not detached, or a tensor that carries a graph is "
    "accumulated (total_loss += loss instead of loss.item())?"
)


def _strictly_increasing(values: list[int]) -> bool:
    return len(values) >= 2 and all(b > a for a, b in pairwise(values))


@dataclass(frozen=True)
class GrowthResult:
    """Snapshots taken after each measured iteration (warm-up excluded)."""

    samples: tuple[GraphSnapshot, ...]

    def _per_iteration(self, values: list[int]) -> float:
        if len(values) < 2:
            return 0.0
        return (values[-1] - values[0]) / (len(values) - 1)

    @property
    def nodes(self) -> list[int]:
        return [s.nodes for s in self.samples]

    @property
    def saved_bytes(self) -> list[int]:
        return [s.saved_bytes for s in self.samples]

    @property
    def nodes_per_iteration(self) -> float:
        return self._per_iteration(self.nodes)

    @property
    def saved_bytes_per_iteration(self) -> float:
        return self._per_iteration(self.saved_bytes)

    @property
    def cuda_bytes_per_iteration(self) -> float | None:
        values = [s.cuda_allocated for s in self.samples]
        if any(v is None for v in values):
            return None
        return self._per_iteration(values)

    @property
    def nodes_grew(self) -> bool:
        return _strictly_increasing(self.nodes)

    @property
    def saved_bytes_grew(self) -> bool:
        return _strictly_increasing(self.saved_bytes)

    @property
    def grew(self) -> bool:
        """True when either metric rose at every measured iteration."""
        return self.nodes_grew or self.saved_bytes_grew

    def message(self) -> str:
        iterations = len(self.samples)
        nodes = format_count(self.nodes_per_iteration)
        if self.saved_bytes_grew:
            head = (
                f"autograd graph grew by {format_bytes(self.saved_bytes_per_iteration)} "
                f"({nodes} nodes) per iteration"
            )
        elif self.nodes_grew:
            head = (
                f"autograd graph grew by {nodes} nodes per iteration (its saved tensors "
                "did not grow: the graph itself is kept alive)"
            )
        else:
            head = "autograd graph did not grow"
        detail = (
            f"over {iterations} measured iterations: graph nodes "
            f"{', '.join(map(str, self.nodes))}; saved tensors "
            f"{', '.join(format_bytes(b) for b in self.saved_bytes)}"
        )
        cuda = self.cuda_bytes_per_iteration
        if cuda is not None:
            detail += f"; CUDA memory_allocated {format_bytes(cuda)} per iteration"
        if self.grew:
            return f"{head}; {HINT}\n  ({detail})"
        return f"{head} ({detail})"


class GraphGrowthError(AssertionError):
    """Raised when a step grows the autograd graph. An AssertionError, so pytest reports it
    as a test failure with the message."""

    def __init__(self, result: GrowthResult) -> None:
        super().__init__(result.message())
        self.result = result


class GraphGrowthProbe:
    """Samples the graph while a SavedTensorTracker is active. Use it as a context manager
    and call `sample(*roots)` after each iteration, passing what the iteration carries."""

    def __init__(
        self, *, watch: tuple = (), scan_live_tensors: bool = True, warmup: int = 1
    ) -> None:
        self.watch = tuple(watch)
        self.scan_live_tensors = scan_live_tensors
        self.warmup = warmup
        self.tracker = SavedTensorTracker()
        self.samples: list[GraphSnapshot] = []

    def __enter__(self) -> GraphGrowthProbe:
        self.tracker.__enter__()
        return self

    def __exit__(self, *exc_info) -> None:
        self.tracker.__exit__(*exc_info)

    def sample(self, *roots: object) -> GraphSnapshot:
        shot = snapshot(roots + self.watch, self.tracker, self.scan_live_tensors)
        self.samples.append(shot)
        return shot

    def result(self) -> GrowthResult:
        return GrowthResult(tuple(self.samples[self.warmup :]))

    def check(self) -> GrowthResult:
        result = self.result()
        if len(result.samples) < 3:
            raise ValueError(
                f"need at least 3 samples after {self.warmup} warm-up sample(s) to tell "
                f"growth from a one-off allocation; got {len(result.samples)}"
            )
        if result.grew:
            raise GraphGrowthError(result)
        return result


@contextmanager
def no_graph_growth(
    *, warmup: int = 1, watch: tuple = (), scan_live_tensors: bool = True
) -> Iterator[GraphGrowthProbe]:
    """Context manager form, for loops you already have:

        with no_graph_growth() as probe:
            for batch in batches:
                hidden = train_step(batch, hidden)
                probe.sample(hidden)

    On exit it raises GraphGrowthError if the graph grew at every sampled iteration after
    the first `warmup` samples (at least 3 samples must remain)."""
    probe = GraphGrowthProbe(watch=watch, scan_live_tensors=scan_live_tensors, warmup=warmup)
    with probe:
        yield probe
    probe.check()


def assert_no_graph_growth(
    step: Callable[[], object],
    *,
    iterations: int = 4,
    warmup: int = 1,
    watch: tuple = (),
    scan_live_tensors: bool = True,
) -> GrowthResult:
    """Run `step()` `warmup + iterations` times and raise GraphGrowthError if the autograd
    graph grew at every measured iteration.

    - What `step()` returns is kept alive until the next call returns and is measured, so
      return the state your loop carries (hidden state, running loss, the model).
    - `watch`: further objects to measure (a model, an optimizer, a list of losses).
    - `scan_live_tensors` (default True) also walks every tensor the garbage collector can
      see, so state hidden in a closure or a global is found too; turn it off in very large
      processes to make each sample cheaper.
    """
    if iterations < 3:
        raise ValueError("iterations must be at least 3 to tell growth from a one-off change")
    probe = GraphGrowthProbe(watch=watch, scan_live_tensors=scan_live_tensors, warmup=warmup)
    with probe:
        carried = None
        for _ in range(warmup + iterations):
            carried = step()
            probe.sample(carried)
        del carried
    return probe.check()
