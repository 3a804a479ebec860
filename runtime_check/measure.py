"""What the autograd graph holds, measured deterministically (shared/pitfalls.md, Part 2).

Two primary metrics, both exact and device-independent:

- graph nodes: distinct autograd Nodes reachable from the `grad_fn` of the tensors you
  point at (and of their `.grad`), walking `next_functions`. Catches growth that holds no
  activations at all (`total_loss += loss` with a backward every step).
- saved-tensor bytes: storage bytes of the tensors autograd saved for backward, packed
  while a `SavedTensorTracker` was active and still alive now, de-duplicated by storage.

RSS, tracemalloc and the profiler are deliberately absent: they are blind to tensor
storage, nondeterministic, or both.
"""

from __future__ import annotations

import gc
import types
import warnings
import weakref
from collections.abc import Iterable
from dataclasses import dataclass

import torch

from runtime_check.units import format_bytes  # noqa: F401  (re-exported)

_OPAQUE = (
    type,
    types.ModuleType,
    types.FunctionType,
    types.BuiltinFunctionType,
    types.MethodType,
    types.CodeType,
    types.FrameType,
    types.GeneratorType,
    str,
    bytes,
    bytearray,
    int,
    float,
    complex,
    bool,
)


def collect_tensors(*roots: object) -> list[torch.Tensor]:
    """Every tensor reachable from `roots` through containers, modules, optimizers and
    plain objects' attributes (and each tensor's `.grad`), each once."""
    seen: set[int] = set()
    tensors: list[torch.Tensor] = []
    keep_alive: list[object] = []  # ids stay unique only while the objects live
    stack: list[object] = list(roots)
    while stack:
        obj = stack.pop()
        if obj is None or id(obj) in seen:
            continue
        seen.add(id(obj))
        keep_alive.append(obj)
        if isinstance(obj, torch.Tensor):
            tensors.append(obj)
            grad = obj.grad if obj.is_leaf or obj.retains_grad else None
            if grad is not None:
                stack.append(grad)
            continue
        if isinstance(obj, _OPAQUE):
            continue
        if isinstance(obj, dict):
            stack.extend(obj.keys())
            stack.extend(obj.values())
        elif isinstance(obj, (list, tuple, set, frozenset)):
            stack.extend(obj)
        else:
            attrs = getattr(obj, "__dict__", None)
            if isinstance(attrs, dict):
                stack.extend(attrs.values())
    return tensors


def live_tensors(collect: bool = True) -> list[torch.Tensor]:
    """Every tensor the garbage collector knows about: a handle-free root set for code
    that keeps its state somewhere you cannot point at (a closure, a global)."""
    if collect:
        gc.collect()
    with warnings.catch_warnings():
        # isinstance() on the deprecated torch.distributed.reduce_op warns.
        warnings.simplefilter("ignore")
        return [obj for obj in gc.get_objects() if isinstance(obj, torch.Tensor)]


def _graph_nodes(tensors: Iterable[torch.Tensor]) -> list:
    seen: dict[int, object] = {}  # holding the node keeps its id from being reused
    stack = [t.grad_fn for t in tensors if t.grad_fn is not None]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen[id(node)] = node
        for child, _ in node.next_functions:
            if child is not None and id(child) not in seen:
                stack.append(child)
    return list(seen.values())


def count_graph_nodes(tensors: Iterable[torch.Tensor]) -> int:
    """Distinct autograd Nodes reachable from the tensors' grad_fn (AccumulateGrad
    included)."""
    return len(_graph_nodes(tensors))


def _storage_entry(tensor: torch.Tensor, fallback_key: object) -> tuple[tuple, int]:
    try:
        storage = tensor.untyped_storage()
        return (str(tensor.device), storage.data_ptr()), storage.nbytes()
    except (RuntimeError, NotImplementedError, TypeError):
        # sparse, nested or wrapper tensors have no plain storage
        return ("object", fallback_key), tensor.numel() * tensor.element_size()


def graph_saved_bytes(tensors: Iterable[torch.Tensor]) -> tuple[int, int]:
    """(saved tensors, bytes) read from the `_saved_*` attributes of the graph reachable
    from `tensors`. The fallback for code that refuses saved-tensor hooks (torch.func):
    unlike the tracker it sees only graphs reachable from what you point at."""
    storages: dict[tuple, int] = {}
    count = 0
    for node in _graph_nodes(tensors):
        for name in dir(node):
            if not name.startswith("_saved_"):
                continue
            try:
                value = getattr(node, name)
            except RuntimeError:  # freed by a backward without retain_graph
                continue
            values = value if isinstance(value, (tuple, list)) else (value,)
            for item in values:
                if isinstance(item, torch.Tensor):
                    count += 1
                    key, nbytes = _storage_entry(item, id(item))
                    storages[key] = max(storages.get(key, 0), nbytes)
    return count, sum(storages.values())


class _Saved:
    """What autograd keeps instead of a saved tensor while a tracker is active."""

    __slots__ = ("tensor", "version", "__weakref__")


class SavedTensorTracker:
    """Context manager: records every tensor autograd saves for backward while active, so
    that `live_bytes()` later tells how much of it is still held by a live graph.

    Two traps of `saved_tensors_hooks` are handled (pitfalls.md, Part 2):
    - the pack hook stores `t.detach()`, never `t`: storing `t` forms an uncollectable
      cycle (tensor -> grad_fn -> saved variable -> holder -> tensor) for saved outputs;
    - hooks switch off autograd's version-counter check, so the tracker does it itself:
      the version is recorded at pack time and unpack raises if it changed (`detach()`
      shares the version counter). Without this an in-place bug would yield a silently
      wrong gradient under measurement instead of an error.
    """

    def __init__(self) -> None:
        self._holders: weakref.WeakSet[_Saved] = weakref.WeakSet()
        self._hooks = None
        # Everything saved while active, freed or not: what the forwards cost even when
        # their graphs are dropped at once (a forward whose result is only read as
        # numbers). Each tensor's own bytes, not its storage's: a view saves its view.
        self.packed_tensors = 0
        self.packed_bytes = 0

    def _count(self, tensor: torch.Tensor) -> None:
        self.packed_tensors += 1
        self.packed_bytes += tensor.numel() * tensor.element_size()

    def _pack(self, tensor: torch.Tensor) -> _Saved:
        self._count(tensor)
        holder = _Saved()
        holder.tensor = tensor.detach()
        try:
            holder.version = tensor._version
        except RuntimeError:  # inference tensors have no version counter
            holder.version = None
        self._holders.add(holder)
        return holder

    @staticmethod
    def _unpack(holder: _Saved) -> torch.Tensor:
        tensor = holder.tensor
        if holder.version is not None and tensor._version != holder.version:
            raise RuntimeError(
                "one of the variables needed for gradient computation has been modified by "
                f"an inplace operation: [{tensor.type()} {list(tensor.shape)}] is at version "
                f"{tensor._version}; expected version {holder.version} instead (caught by "
                "runtime_check's saved-tensor tracker)"
            )
        return tensor

    def __enter__(self) -> SavedTensorTracker:
        self._hooks = torch.autograd.graph.saved_tensors_hooks(self._pack, self._unpack)
        self._hooks.__enter__()
        # Hooks the measured code installs itself replace these while they are active
        # (only the innermost pair runs): theirs are wrapped so that what they pack is
        # still counted, unchanged otherwise.
        self._original_hooks = torch.autograd.graph.saved_tensors_hooks
        tracker = self

        class _CountingHooks(self._original_hooks):  # type: ignore[misc, valid-type]
            def __init__(self, pack_hook, unpack_hook) -> None:
                def counted(tensor):
                    tracker._count(tensor)
                    return pack_hook(tensor)

                super().__init__(counted, unpack_hook)

        torch.autograd.graph.saved_tensors_hooks = _CountingHooks  # type: ignore[misc]
        return self

    def __exit__(self, *exc_info) -> None:
        torch.autograd.graph.saved_tensors_hooks = self._original_hooks  # type: ignore[misc]
        hooks, self._hooks = self._hooks, None
        hooks.__exit__(*exc_info)

    def live(self) -> tuple[int, int]:
        """(number of saved tensors still alive, their bytes de-duplicated by storage)."""
        storages: dict[tuple, int] = {}
        count = 0
        for holder in list(self._holders):
            count += 1
            key, nbytes = _storage_entry(holder.tensor, id(holder))
            storages[key] = max(storages.get(key, 0), nbytes)
        return count, sum(storages.values())

    def live_bytes(self) -> int:
        return self.live()[1]


@dataclass(frozen=True)
class GraphSnapshot:
    nodes: int
    saved_tensors: int
    saved_bytes: int
    cuda_allocated: int | None = None  # bytes, when CUDA is in use

    def to_dict(self) -> dict:
        return {
            "nodes": self.nodes,
            "saved_tensors": self.saved_tensors,
            "saved_bytes": self.saved_bytes,
            "cuda_allocated": self.cuda_allocated,
        }


def cuda_allocated() -> int | None:
    """Bytes held by tensors on the current CUDA device, or None when CUDA is not in use.
    Never initialises CUDA itself."""
    if not (torch.cuda.is_available() and torch.cuda.is_initialized()):
        return None
    torch.cuda.synchronize()
    return torch.cuda.memory_allocated()


def snapshot(
    roots: tuple = (), tracker: SavedTensorTracker | None = None, scan_live_tensors: bool = False
) -> GraphSnapshot:
    """Measure now. The caller must keep `roots` alive until this returns."""
    gc.collect()
    tensors = collect_tensors(*roots)
    if scan_live_tensors:
        tensors += collect_tensors(live_tensors(collect=False))
    saved_count, saved_bytes = tracker.live() if tracker is not None else (0, 0)
    return GraphSnapshot(count_graph_nodes(tensors), saved_count, saved_bytes, cuda_allocated())
