from __future__ import annotations

import libcst as cst

from gradlint.analysis.registration import MODULES, PARAMETERS, UnregisteredAttribute
from gradlint.diagnostics import Applicability
from gradlint.fix_builders import wrap_expression
from gradlint.rules.base import Rule

_HELD = {
    MODULES: "layers with parameters",
    PARAMETERS: "parameters",
}


class UnregisteredParameters(Rule):
    """
    ## What it does
    Flags an attribute of an `nn.Module` subclass that holds parameters the module never
    registers: submodules (or `nn.Parameter`s) kept in a plain `list`, `tuple` or `dict`
    (`self.layers = [nn.Linear(d, d) for _ in range(n)]`, or an empty list filled by
    `self.layers.append(...)`, in the class or through a local list, or a list a
    function of the file builds and returns: `self.layers = make_layers(cfg)`, or one
    place of the tuple it returns, `self.info, self.layers = build(cfg)`), and a tensor
    made with `requires_grad=True` kept as a plain attribute instead of an
    `nn.Parameter`.

    ## Why is this bad?
    `nn.Module` registers an attribute only when the value is itself a module or a
    `Parameter`. What a plain container holds is invisible to `parameters()`,
    `state_dict()`, `.to(device)`, `.train()` / `.eval()` and `zero_grad()`: the
    optimizer built from `model.parameters()` never updates those weights, a checkpoint
    never saves them, and `.cuda()` leaves them on the CPU. Nothing raises on the CPU: the
    model trains with those layers frozen at their random initialisation. Measured by
    the fixtures under torch: after 5 SGD steps every weight in the plain list is
    bit-for-bit its initial value while the registered layers moved, and the list's
    weights are missing from `state_dict()`.

    Not flagged: `nn.ModuleList`, `nn.ModuleDict`, `nn.Sequential`, `nn.ParameterList`;
    a plain list of modules registered under other names (`[self.fc1, self.fc2]`, a
    list also passed to `nn.Sequential(*layers)`, or returned and stored in another
    attribute); a class that registers by name at run time (`add_module`, `setattr`)
    or defines its own `parameters()`; a tensor kept with `register_buffer`, or without
    `requires_grad`; lists of numbers or of parameterless layers (`nn.ReLU()`); and
    attributes an optimizer is given explicitly, whose `.parameters()` are collected by
    hand, or whose `.grad` the code reads (updated by hand).

    ## Example
    ```python
    import torch
    from torch import nn


    class MLP(nn.Module):
        def __init__(self, d, depth):
            super().__init__()
            self.layers = [nn.Linear(d, d) for _ in range(depth)]

        def forward(self, x):
            for layer in self.layers:
                x = torch.relu(layer(x))
            return x
    ```

    ## Use instead
    ```python
    import torch
    from torch import nn


    class MLP(nn.Module):
        def __init__(self, d, depth):
            super().__init__()
            self.layers = nn.ModuleList([nn.Linear(d, d) for _ in range(depth)])

        def forward(self, x):
            for layer in self.layers:
                x = torch.relu(layer(x))
            return x
    ```

    ## Fix safety
    The fix wraps the value in `nn.ModuleList`, `nn.ModuleDict`, `nn.ParameterList`,
    `nn.ParameterDict` or `nn.Parameter`. It is offered, as safe, only where every use of
    the attribute in the file is one the wrapper supports as the plain container did
    (iteration, indexing without slices, `len`, `enumerate`, `zip`, `append` / `extend` /
    `insert`, a dict's `keys` / `values` / `items`), and, for a tensor, where it is
    assigned once. A dict is wrapped only when its keys are string literals without a
    dot (what `nn.ModuleDict` accepts). The weights start training, and the model's
    `state_dict()` gains their keys: a checkpoint saved before the fix lacks them, so
    `load_state_dict` of it needs `strict=False`.

    ## On real code
    In preview. The census's development half (42 public repositories, notebooks
    included; `bench/real-code/`) labels no positive site for this rule, and its 61
    labelled look-alikes (lists of file names, numbers, agents and optimizers that are
    no `nn.Module`) stay silent. Run over every file of those repositories it reports 3
    findings, all true on reading: pytorch-book's chapter 4 module that keeps
    `nn.Linear` in a plain list (the book's own demonstration) and the `weight` and
    `bias` of d2l-pytorch's hand-written `Conv2D` made with `requires_grad=True`.
    AWD-LSTM's list of LSTMs turned into an `nn.ModuleList` a line later and the SAC
    agents' `log_alpha` (plain classes, given to their own optimizer) stay silent. 3 of
    3 is no precision figure, so the rule stays in preview until the test half is
    scored.

    A grep for plain lists, dicts and tuples of layers or Parameters on `self` in module
    classes, and for `self.x.append(...)` of one, finds 4 more positive sites on the dev
    half (`bench/real-code/newrules-dev.tsv`): pykan's `MultKAN.expand_depth` appends
    `nn.Parameter(...).requires_grad_(flag)` to four plain lists, so the added layer's
    affine parameters are missing from `parameters()` and `state_dict()`. They were
    missed because `requires_grad_` hid the Parameter; it no longer does: 7 findings,
    all true, recall 7/7 on dev. Seven findings, four of them one class, do not show
    0.90.

    The 25 repositories since added to the dev half (67 in all) add no finding, and
    the same grep finds no positive site in them.

    On the held-back test half there is no labelled site and no finding.

    ## References
    - [`torch.nn.Module`: registering submodules](https://pytorch.org/docs/stable/generated/torch.nn.Module.html)
    - [`torch.nn.ModuleList`](https://pytorch.org/docs/stable/generated/torch.nn.ModuleList.html)
    - [`torch.nn.parameter.Parameter`](https://pytorch.org/docs/stable/generated/torch.nn.parameter.Parameter.html)
    """

    code = "GL017"
    name = "unregistered-parameters"
    message = (
        "`self.{attribute}` keeps {held} {where}, which the module does not register: "
        "`parameters()`, `state_dict()` and `.to()` never see {them}, so the optimizer "
        "never updates {them}; use `nn.{wrapper}`"
    )
    fix_title = "Register it: wrap the value in `nn.ModuleList`, `nn.ModuleDict` or `nn.Parameter`"
    fix_applicability = Applicability.SAFE
    trigger_tokens = ("requires_grad", "[", "{", "(")
    also_needs_tokens = ("Module",)

    def leave_Module(self, original_node: cst.Module) -> None:
        for found in self.facts.registration.unregistered():
            self._report(found)

    def _report(self, found: UnregisteredAttribute) -> None:
        wrapper = found.wrapper
        if found.container == "tensor":
            held, where, them = (
                "a tensor made with `requires_grad=True`",
                "as a plain attribute",
                "it",
            )
        else:
            held, where, them = _HELD[found.holds], f"in a plain {found.container}", "them"
        message = self.message_for(
            attribute=found.attribute, held=held, where=where, them=them, wrapper=wrapper
        )
        fix = None
        if found.wrappable and _keys_fit(found):
            fix = wrap_expression(
                self.context,
                found.value,
                wrapper,
                f"Register it: wrap the value in `nn.{wrapper}`",
                self.fix_applicability,
            )
        related = []
        if found.element is not found.value:
            related.append((found.element, "built here, outside any registered container"))
        self.report(found.assign, message, fix, related=related)


def _keys_fit(found: UnregisteredAttribute) -> bool:
    """`nn.ModuleDict` / `nn.ParameterDict` take string keys without a dot: a dict is
    wrapped only when its keys are visibly such."""
    if found.container != "dict":
        return True
    value = found.value
    if type(value) is not cst.Dict or not value.elements:
        return False
    for element in value.elements:
        if type(element) is not cst.DictElement or type(element.key) is not cst.SimpleString:
            return False
        key = element.key.evaluated_value
        if not isinstance(key, str) or "." in key or not key:
            return False
    return True
