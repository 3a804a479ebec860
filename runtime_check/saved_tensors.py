"""Which differentiable operations save their inputs or their output for backward,
measured on the installed torch: the table behind GL011 (inplace-on-saved-tensor).

    python -m runtime_check saved-tensors            # print the table
    python -m runtime_check saved-tensors --write    # write gradlint/data/saved_tensors.json
    python -m runtime_check saved-tensors --check    # exit 1 if the shipped table differs

Each operation runs once for every way its operands can be given: a tensor that
requires grad (`grad`), a tensor that does not (`tensor`), or a Python number
(`number`), with at least one `grad` operand (otherwise autograd records nothing and
nothing is saved). What autograd saves is read two ways, and both must agree:

1. under `torch.autograd.graph.saved_tensors_hooks`, every packed tensor is compared
   with the operands and the output (same storage: the very tensor, or a view of it);
2. without hooks (they switch the version check off), the operand or the output is
   changed in place after the operation and a backward runs: it raises "modified by an
   inplace operation" exactly when that tensor was saved.

Which operands are saved depends on which ones require grad: `w * x` saves `x` for
`w`'s gradient and `w` for `x`'s, so with only `w` requiring grad it saves `x` alone.
An operation given several variants (indexing with an integer, a slice, an index
tensor) records what every variant saves. A case that is absent from the table is
one autograd does not record.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

TABLE_PATH = Path(__file__).resolve().parent.parent / "gradlint" / "data" / "saved_tensors.json"
COMMAND = "python -m runtime_check saved-tensors --write"

GRAD, TENSOR, NUMBER = "grad", "tensor", "number"
_TENSORS = (GRAD, TENSOR)
_ANY = (GRAD, TENSOR, NUMBER)


@dataclass(frozen=True)
class Op:
    """One operation as gradlint meets it in source: `key` is an operator (`*`), a
    qualified torch function (`torch.sigmoid`, `torch.nn.functional.relu`) or a tensor
    method (`Tensor.sigmoid`, whose receiver is operand 0)."""

    key: str
    variants: tuple[Callable, ...]
    slots: tuple[tuple[str, ...], ...]
    shapes: tuple[tuple[int, ...], ...] | None = None


def _op(key: str, fn: Callable, slots, shapes=None) -> Op:
    return Op(key, (fn,), tuple(slots), shapes)


def _operations() -> list[Op]:
    import torch
    import torch.nn.functional as F

    ops: list[Op] = []
    one = (_TENSORS,)
    unary = {
        "sigmoid": torch.sigmoid,
        "tanh": torch.tanh,
        "exp": torch.exp,
        "log": torch.log,
        "relu": torch.relu,
        "sin": torch.sin,
        "cos": torch.cos,
        "sqrt": torch.sqrt,
        "rsqrt": torch.rsqrt,
        "abs": torch.abs,
        "square": torch.square,
        "reciprocal": torch.reciprocal,
        "neg": torch.neg,
        "log1p": torch.log1p,
        "expm1": torch.expm1,
        "erf": torch.erf,
        "sum": torch.sum,
        "mean": torch.mean,
        "clone": torch.clone,
        "flatten": torch.flatten,
        "t": torch.t,
    }
    for name, fn in unary.items():
        ops.append(_op(f"torch.{name}", fn, one))
        ops.append(_op(f"Tensor.{name}", getattr(torch.Tensor, name), one))
    for name in ("softmax", "log_softmax"):
        fn = getattr(torch, name)
        ops.append(_op(f"torch.{name}", lambda x, fn=fn: fn(x, -1), one))
        method = getattr(torch.Tensor, name)
        ops.append(_op(f"Tensor.{name}", lambda x, m=method: m(x, -1), one))
    ops.append(_op("torch.clamp", lambda x: torch.clamp(x, 0.6, 1.2), one))
    ops.append(_op("Tensor.clamp", lambda x: x.clamp(0.6, 1.2), one))

    binary = {"mul": (_ANY, _ANY), "div": (_ANY, _ANY), "add": (_ANY, _ANY)}
    binary |= {"sub": (_ANY, _ANY), "pow": (_ANY, _ANY), "maximum": (_TENSORS, _TENSORS)}
    binary |= {"minimum": (_TENSORS, _TENSORS), "matmul": (_TENSORS, _TENSORS)}
    binary |= {"mm": (_TENSORS, _TENSORS)}
    for name, (first, second) in binary.items():
        ops.append(_op(f"torch.{name}", getattr(torch, name), (first, second)))
        # A method's receiver is a tensor.
        ops.append(_op(f"Tensor.{name}", getattr(torch.Tensor, name), (_TENSORS, second)))
    operators = {
        "+": lambda a, b: a + b,
        "-": lambda a, b: a - b,
        "*": lambda a, b: a * b,
        "/": lambda a, b: a / b,
        "**": lambda a, b: a**b,
    }
    for key, fn in operators.items():
        ops.append(_op(key, fn, (_ANY, _ANY)))
    ops.append(_op("@", lambda a, b: a @ b, (_TENSORS, _TENSORS)))
    ops.append(_op("-x", lambda a: -a, one))
    ops.append(
        Op(
            "[]",
            (
                lambda x: x[0],
                lambda x: x[1:],
                lambda x: x[:, 0],
                lambda x: x[torch.tensor([0, 2])],
                lambda x: x[x.detach() > 0.9],
            ),
            one,
        )
    )

    functional = {
        "relu": F.relu,
        "sigmoid": F.sigmoid,
        "tanh": F.tanh,
        "gelu": F.gelu,
        "silu": F.silu,
        "elu": F.elu,
        "selu": F.selu,
        "leaky_relu": F.leaky_relu,
        "softplus": F.softplus,
        "logsigmoid": F.logsigmoid,
        "hardtanh": F.hardtanh,
        "relu6": F.relu6,
        "mish": F.mish,
        "softmax": lambda x: F.softmax(x, -1),
        "log_softmax": lambda x: F.log_softmax(x, -1),
        "normalize": F.normalize,
    }
    for name, fn in functional.items():
        ops.append(_op(f"torch.nn.functional.{name}", fn, one))
    ops.append(
        _op(
            "torch.nn.functional.linear",
            F.linear,
            (_TENSORS, _TENSORS, _TENSORS),
            shapes=((3, 3), (3, 3), (3,)),
        )
    )
    ops.append(_op("torch.nn.functional.linear", F.linear, (_TENSORS, _TENSORS)))
    for name in ("mse_loss", "l1_loss"):
        ops.append(_op(f"torch.nn.functional.{name}", getattr(F, name), (_TENSORS, _TENSORS)))
    return ops


def _operand(status: str, shape: tuple[int, ...], seed: int):
    import torch

    if status == NUMBER:
        return 2.0
    generator = torch.Generator().manual_seed(seed)
    # Positive and away from 0 and 1, so log, sqrt, pow and clamp are smooth there.
    value = torch.rand(shape, generator=generator) * 0.5 + 0.75
    return value.requires_grad_() if status == GRAD else value


def _same_storage(a, b) -> bool:
    import torch

    return (
        isinstance(a, torch.Tensor)
        and isinstance(b, torch.Tensor)
        and a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr()
    )


def _run(op_fn: Callable, statuses: Sequence[str], shapes) -> tuple[list, object]:
    operands = [_operand(s, shapes[i], seed=i) for i, s in enumerate(statuses)]
    return operands, op_fn(*operands)


def _measure_hooks(op_fn: Callable, statuses, shapes) -> tuple[set[int], bool]:
    """(operand positions saved, output saved), from the tensors autograd packs."""
    import torch

    packed: list = []

    def pack(tensor):
        packed.append(tensor)
        return tensor

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda tensor: tensor):
        operands, out = _run(op_fn, statuses, shapes)
    saved = {
        i for i, operand in enumerate(operands) if any(_same_storage(t, operand) for t in packed)
    }
    output = any(_same_storage(t, out) for t in packed) and not any(
        _same_storage(out, operand) for operand in operands
    )
    return saved, output


def _raises_after_inplace(op_fn: Callable, statuses, shapes, which: int | None) -> bool:
    """Change operand `which` (None: the output) in place after the operation, then
    backpropagate: does autograd's version check fire?"""
    import torch

    operands, out = _run(op_fn, statuses, shapes)
    target = out if which is None else operands[which]
    with torch.no_grad():
        target.mul_(1.0)  # any in-place change bumps the version counter
    try:
        out.sum().backward()
    except RuntimeError as exc:
        if "modified by an inplace operation" in str(exc):
            return True
        raise
    return False


def measure(op: Op, statuses: tuple[str, ...]) -> dict:
    shapes = op.shapes or tuple((3, 3) for _ in statuses)
    saved: set[int] | None = None
    output = True
    for variant in op.variants:
        hooked, hooked_output = _measure_hooks(variant, statuses, shapes)
        for i, status in enumerate(statuses):
            if status == NUMBER:
                continue
            raised = _raises_after_inplace(variant, statuses, shapes, i)
            if raised != (i in hooked):
                raise AssertionError(
                    f"{op.key}{statuses}: saved_tensors_hooks say operand {i} is "
                    f"{'' if i in hooked else 'not '}saved, but an in-place change of it "
                    f"{'raises' if raised else 'does not raise'} at backward"
                )
        raised = _raises_after_inplace(variant, statuses, shapes, None)
        if raised != hooked_output:
            raise AssertionError(
                f"{op.key}{statuses}: hooks and the in-place check disagree about the output"
            )
        saved = hooked if saved is None else saved & hooked
        output = output and hooked_output
    return {"operands": list(statuses), "saves": sorted(saved or ()), "output": output}


def generate() -> dict:
    """The table for the installed torch, as JSON-ready data."""
    import torch

    table: dict[str, list[dict]] = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # F.sigmoid / F.tanh deprecation notes
        torch.manual_seed(0)
        for op in _operations():
            cases = []
            for statuses in itertools.product(*op.slots):
                if GRAD not in statuses:
                    continue  # autograd records nothing, so nothing is saved
                try:
                    cases.append(measure(op, statuses))
                except TypeError:
                    continue  # not a valid call (`torch.mm(2.0, x)`)
            table.setdefault(op.key, []).extend(cases)  # e.g. linear with and without bias
    return {
        "generated_by": COMMAND,
        "torch": torch.__version__.split("+")[0],
        "statuses": {
            GRAD: "a tensor that requires grad",
            TENSOR: "a tensor that does not require grad",
            NUMBER: "a Python number",
        },
        "ops": table,
    }


def render(table: dict) -> str:
    """One case per line, so a diff of the shipped file reads as the change it is."""
    lines = ["{"]
    for key in ("generated_by", "torch", "statuses"):
        lines.append(f"  {json.dumps(key)}: {json.dumps(table[key])},")
    lines.append('  "ops": {')
    ops = list(table["ops"].items())
    for n, (key, cases) in enumerate(ops):
        lines.append(f"    {json.dumps(key)}: [")
        for m, case in enumerate(cases):
            comma = "," if m < len(cases) - 1 else ""
            lines.append(f"      {json.dumps(case)}{comma}")
        lines.append("    ]" + ("," if n < len(ops) - 1 else ""))
    lines.append("  }")
    lines.append("}")
    return "\n".join(lines) + "\n"


def shipped() -> dict:
    return json.loads(TABLE_PATH.read_text(encoding="utf-8"))


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m runtime_check saved-tensors",
        description=(
            "Measure, on the installed torch, which operations save their operands or "
            "their output for backward (the table GL011 reads), and print it."
        ),
    )
    group = parser.add_mutually_exclusive_group()
    group.add_argument(
        "--write",
        action="store_true",
        help=f"write the table to {TABLE_PATH.name} in gradlint/data",
    )
    group.add_argument(
        "--check",
        action="store_true",
        help="compare with the shipped table; exit 1 when they differ",
    )
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    text = render(generate())
    if args.write:
        TABLE_PATH.parent.mkdir(parents=True, exist_ok=True)
        TABLE_PATH.write_text(text, encoding="utf-8")
        print(f"wrote {TABLE_PATH}")
        return 0
    if args.check:
        if json.loads(text) != shipped():
            print(
                f"saved-tensors: {TABLE_PATH} does not match the installed torch; run `{COMMAND}`",
                file=sys.stderr,
            )
            return 1
        print("saved-tensors: the shipped table matches the installed torch")
        return 0
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
