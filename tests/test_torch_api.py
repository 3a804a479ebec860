"""The torch vocabulary (gradlint/analysis/torch_api.py) matches the installed torch: every
Tensor, nn.Module and torch name it lists exists, and what it says a call does is what
the call does, where that can be measured on the CPU."""

from __future__ import annotations

import importlib
import inspect
from copy import deepcopy

import pytest

from gradlint.analysis import torch_api as api

torch = pytest.importorskip("torch")
nn = torch.nn

# Trailing-underscore Tensor methods that are not in-place changes of the values, each
# with why (the keys must be exactly torch_api.NOT_INPLACE_METHODS).
NOT_INPLACE_REASONS = {
    "requires_grad_": "sets a flag; the values are untouched",
    "detach_": "cuts the history; the values are untouched",
    "share_memory_": "moves the storage to shared memory; the values are untouched",
}
# Qualified names the import map produces that are not attributes in torch itself.
NOT_IN_TORCH = {
    # `from torch.autograd.grad_mode import *` style re-exports resolved by the import map
    "torch.autograd.grad_mode.grad",
}


def _resolve(qualified: str):
    """The object a dotted torch name stands for, or None."""
    parts = qualified.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for part in parts[cut:]:
            if not hasattr(obj, part):
                return None
            obj = getattr(obj, part)
        return obj
    return None


def _leaf(*shape: int):
    return torch.randn(*shape or (3,), requires_grad=True)


# -- in place -------------------------------------------------------------------------


INPLACE_SETS = {
    "OVERWRITING_METHODS": api.OVERWRITING_METHODS,
    "UPDATING_METHODS": api.UPDATING_METHODS,
    "NOT_INPLACE_METHODS": api.NOT_INPLACE_METHODS,
    "FRESH_PRESERVING_METHODS (in place)": {
        m for m in api.FRESH_PRESERVING_METHODS if m.endswith("_")
    },
    "COMMON_TENSOR_METHODS (in place)": {m for m in api.COMMON_TENSOR_METHODS if m.endswith("_")},
}


@pytest.mark.parametrize("name", sorted(INPLACE_SETS))
def test_inplace_methods_are_tensor_methods_named_in_place(name):
    for method in INPLACE_SETS[name]:
        assert hasattr(torch.Tensor, method), method
        assert method.endswith("_") or method in api.INPLACE_DUNDERS, method


def test_inplace_dunders_exist():
    for dunder in api.INPLACE_DUNDERS:
        assert hasattr(torch.Tensor, dunder), dunder


def test_every_inplace_twin_is_known():
    """Every public `x_` of torch.Tensor with an out-of-place twin `x` is in place by
    `is_inplace_method`, or excluded with a reason."""
    assert set(NOT_INPLACE_REASONS) == api.NOT_INPLACE_METHODS
    for name in dir(torch.Tensor):
        if name.endswith("_") and not name.startswith("_") and hasattr(torch.Tensor, name[:-1]):
            assert api.is_inplace_method(name) != (name in NOT_INPLACE_REASONS), name


@pytest.mark.parametrize("method", sorted(api.NOT_INPLACE_METHODS))
def test_not_inplace_methods_leave_the_values(method):
    x = torch.randn(3)
    before = x.clone()
    getattr(x, method)()
    assert torch.equal(x, before)


@pytest.mark.parametrize("method", sorted(api.OVERWRITING_METHODS | api.UPDATING_METHODS))
def test_overwriting_and_updating_methods_change_the_tensor_in_place(method):
    x = torch.ones(3)
    other = torch.full((3,), 2.0)
    args = {"zero_": (), "fill_": (5.0,), "lerp_": (other, 0.5)}.get(method)
    if args is None:
        args = (other, other) if method in ("addcdiv_", "addcmul_") else (other,)
    result = getattr(x, method)(*args)
    assert result is x
    assert not torch.equal(x, torch.ones(3))


def test_zeroing_and_inplace_function_modules_exist():
    for qualified in api.ZEROING_FUNCTIONS:
        assert callable(_resolve(qualified)), qualified
        assert qualified.rsplit(".", 1)[0] in api.INPLACE_FUNCTION_MODULES


# -- graph cuts and numbers -----------------------------------------------------------


def test_number_methods_make_plain_numbers():
    x = _leaf(1)
    for method in api.PYTHON_NUMBER_METHODS:
        value = getattr(x, method)()
        assert not isinstance(value, torch.Tensor), method
    with pytest.raises(RuntimeError, match="requires grad"):
        x.numpy()  # the raise result_uses reports
    assert api.PYTHON_NUMBER_METHODS < api.NUMBER_METHODS


@pytest.mark.parametrize("method", sorted(api.METADATA_METHODS))
def test_metadata_methods_return_plain_values(method):
    value = getattr(_leaf(2, 3), method)()
    assert not isinstance(value, torch.Tensor) or not value.requires_grad, method


# Arguments for the methods that need one.
_SECOND = {"eq", "ne", "lt", "le", "gt", "ge", "isclose", "equal", "allclose"}


@pytest.mark.parametrize(
    "method",
    sorted(api.NON_DIFFERENTIABLE_METHODS | api.INDEX_METHODS | api.DETACHING_METHODS),
)
def test_graph_cutting_methods_give_no_history(method):
    x = _leaf(3)
    source = x * 1  # a non-leaf, so that detach_ is allowed
    args = (source.detach(),) if method in _SECOND else ()
    if method == "multinomial":
        source, args = torch.rand(3, requires_grad=True) * 1, (1,)
    value = getattr(source, method)(*args)
    assert not isinstance(value, torch.Tensor) or not value.requires_grad, method


@pytest.mark.parametrize("method", sorted(api.ZERO_GRADIENT_METHODS))
def test_zero_gradient_methods_record_a_zero_gradient(method):
    x = _leaf(3)
    value = getattr(x, method)()
    assert value.requires_grad  # why it is not a NON_DIFFERENTIABLE_METHOD
    (grad,) = torch.autograd.grad(value.sum(), x)
    assert torch.count_nonzero(grad) == 0


def test_graph_cutting_methods_are_the_union():
    parts = (
        api.DETACHING_METHODS,
        api.NUMBER_METHODS,
        api.INDEX_METHODS,
        api.METADATA_METHODS,
        api.NON_DIFFERENTIABLE_METHODS,
        api.ZERO_GRADIENT_METHODS,
    )
    assert api.GRAPH_CUTTING_METHODS == frozenset().union(*parts)
    for method in api.GRAPH_CUTTING_METHODS:
        assert hasattr(torch.Tensor, method), method


def test_attributes():
    x = _leaf(3)
    for attribute in api.METADATA_ATTRIBUTES - api.NAMED_TENSOR_API:
        assert not isinstance(getattr(x, attribute), torch.Tensor), attribute
    for attribute in api.DETACHING_ATTRIBUTES:
        assert not getattr(x, attribute).requires_grad
    for attribute in api.TRANSPOSE_ATTRIBUTES | api.HISTORY_KEEPING_ATTRIBUTES:
        y = torch.randn(2, 2, dtype=torch.complex64, requires_grad=True)
        assert getattr(y, attribute).requires_grad, attribute
    assert hasattr(x, api.GRAD_ATTRIBUTE)


@pytest.mark.parametrize("method", sorted(api.DIFFERENTIABLE_METHODS))
def test_differentiable_methods_keep_history(method):
    x = _leaf(2, 2)
    args = {
        "view": (4,),
        "reshape": (4,),
        "permute": (1, 0),
        "transpose": (0, 1),
        "unsqueeze": (0,),
        "expand": (2, 2),
        "repeat": (2, 1),
        "pow": (2,),
        "softmax": (0,),
        "log_softmax": (0,),
        "to": (torch.float64,),
    }.get(method)
    if method in ("mul", "add", "sub", "div", "matmul"):
        args = (torch.ones(2, 2),)
    if method == "cuda" and not torch.cuda.is_available():
        pytest.skip("no CUDA")
    assert getattr(x, method)(*(args or ())).requires_grad, method


def test_tensor_method_sets_exist():
    for name, names in {
        "VIEW_METHODS": api.VIEW_METHODS,
        "COMMON_TENSOR_METHODS": api.COMMON_TENSOR_METHODS,
        "FRESH_PRESERVING_METHODS": api.FRESH_PRESERVING_METHODS,
        "SAME_VALUE_STEPS": api.SAME_VALUE_STEPS,
        "GRAPH_KEEPING_METHODS": api.GRAPH_KEEPING_METHODS - {"manual_backward"},
        "RELEAFING_METHODS": api.RELEAFING_METHODS,
        "DETACHING_INPLACE_METHODS": api.DETACHING_INPLACE_METHODS,
    }.items():
        for method in names:
            assert hasattr(torch.Tensor, method), (name, method)


def test_named_tensor_api_is_the_only_api_torch_lacks():
    for name in api.NAMED_TENSOR_API:
        assert not hasattr(torch.Tensor, name), f"{name} is back: check it like the rest"
    assert api.NAMED_TENSOR_API <= api.ALIASING_CALLS | api.METADATA_ATTRIBUTES


def test_aliasing_calls_exist_somewhere_in_torch():
    for name in api.ALIASING_CALLS - api.NAMED_TENSOR_API:
        assert (
            hasattr(torch.Tensor, name) or hasattr(torch, name) or hasattr(nn.functional, name)
        ), name


def test_torch_functions_exist():
    qualified = (
        api.TENSOR_FACTORIES
        | api.NON_DIFFERENTIABLE_FUNCTIONS
        | api.AS_TENSOR_FUNCTIONS
        | api.DATA_COPYING_FUNCTIONS
        | api.AUTOGRAD_GRAD
        | api.AUTOGRAD_BACKWARD
        | api.PARAMETER_CLASSES
        | api.VARIABLE_CLASSES
        | api.CHECKPOINT_FUNCTIONS
        | api.CHECKPOINT_SEQUENTIAL_FUNCTIONS
        | api.SAVING_FUNCTIONS
        | api.CONTAINER_CLASSES
        | api.SINGLE_STATE_RECURRENT
        | {name for name in api.FRESH_TENSOR_MAKERS}
        | {name for name in api.GRAPH_CUTTING_FUNCTIONS if name.startswith("torch.")}
    )
    missing = sorted(q for q in qualified - NOT_IN_TORCH if _resolve(q) is None)
    assert not missing


# The second argument of the history-free functions that take two: what `x` is
# compared with, or the boundaries it is sorted into.
_SECOND_ARGUMENTS = {
    "torch.multinomial": 1,
    "torch.bucketize": torch.tensor([0.2, 0.5]),
}
_BINARY = {"eq", "ne", "gt", "lt", "ge", "le", "isclose", "equal", "allclose"} | {
    "logical_and",
    "logical_or",
    "logical_xor",
}


def test_factories_make_tensors_without_history():
    x = torch.rand(3, requires_grad=True)  # probabilities, for multinomial
    for qualified in api.NON_DIFFERENTIABLE_FUNCTIONS:
        function = _resolve(qualified)
        if qualified == "torch.searchsorted":
            value = function(torch.tensor([0.2, 0.5]), x)
        elif qualified in _SECOND_ARGUMENTS:
            value = function(x, _SECOND_ARGUMENTS[qualified])
        elif qualified.rsplit(".", 1)[1] in _BINARY:
            value = function(x, x * 2)
        else:
            value = function(x)
        assert not isinstance(value, torch.Tensor) or not value.requires_grad, qualified


def test_every_history_free_method_torch_has_as_a_function_is_one():
    """`torch.argsort(pred)` cuts the graph as `pred.argsort()` does."""
    for name in api.GRADLESS_RESULTS | api.NON_DIFFERENTIABLE_METHODS:
        if name in ("sample", "long", "int", "bool", "byte", "short") or not hasattr(torch, name):
            continue
        assert f"torch.{name}" in api.NON_DIFFERENTIABLE_FUNCTIONS, name


@pytest.mark.filterwarnings("ignore:torch.asarray")  # says its default follows the input
def test_as_tensor_functions_keep_a_tensors_history_and_make_fresh_tensors_of_data():
    history = torch.rand(3, requires_grad=True) * 2
    for qualified in api.AS_TENSOR_FUNCTIONS:
        if qualified.startswith("torch.cuda."):
            continue  # needs a GPU: the CPU constructors of the same dtype stand for them
        build = _resolve(qualified)
        assert not build([1.0, 0.0]).requires_grad, qualified
        try:
            kept = build(history)
        except TypeError:
            continue  # a typed constructor of another dtype refuses the tensor
        assert kept.requires_grad and kept.grad_fn is not None, qualified


def test_checkpoint_keywords_are_checkpoints_own():
    own = set(inspect.signature(torch.utils.checkpoint.checkpoint).parameters)
    # preserve_rng_state is read from **kwargs by both variants
    assert api.CHECKPOINT_KEYWORDS <= own | {"preserve_rng_state"}
    own = set(inspect.signature(torch.utils.checkpoint.checkpoint_sequential).parameters)
    assert api.CHECKPOINT_SEQUENTIAL_KEYWORDS <= own | {"preserve_rng_state"}


# -- nn.Module, optimizers ------------------------------------------------------------


def test_module_api_is_nn_module_api():
    for name in (
        api.MODULE_API
        | api.PARAMETER_HOLDING_METHODS
        | api.FREEZING_METHODS
        | api.MODULE_MODE_METHODS
        | api.PARAMETER_ITERATORS
        | api.SUBMODULE_ITERATORS
        | api.NAMED_SUBMODULE_ITERATORS
    ):
        assert callable(getattr(nn.Module, name, None)), name
    for name in api.MODULE_SETUP_METHODS - {"init_weights", "_init_weights"}:
        # init_weights / _init_weights: the conventional names, not nn.Module's
        assert hasattr(nn.Linear, name), name


@pytest.mark.parametrize("method", sorted(api.SELF_RETURNING_MODULE_METHODS))
def test_self_returning_module_methods_return_the_module(method):
    if method == "cuda" and not torch.cuda.is_available():
        pytest.skip("no CUDA")
    layer = nn.Linear(2, 2)
    args = {
        "to": ("cpu",),
        "to_empty": (),
        "type": (torch.float64,),
        "apply": (lambda module: None,),
    }.get(method, ())
    kwargs = {"device": "cpu"} if method == "to_empty" else {}
    assert getattr(layer, method)(*args, **kwargs) is layer


@pytest.mark.parametrize("qualified", sorted(api.MODULE_PRESERVING_FUNCTIONS))
def test_module_preserving_functions_hand_back_a_module_whose_parameters_train(qualified):
    function = _resolve(qualified)
    if inspect.ismodule(function):  # `torch.nn.utils.spectral_norm`, module and function
        function = getattr(function, qualified.rsplit(".", 1)[1])
    assert callable(function), qualified
    layer = nn.Linear(3, 2)
    if qualified == "torch.nn.SyncBatchNorm.convert_sync_batchnorm":
        layer = nn.Sequential(nn.Linear(3, 2), nn.BatchNorm1d(2))
    args = (torch.randn(4, 3),) if qualified == "torch.jit.trace" else ()
    built = function(layer, *args)
    assert isinstance(built, nn.Module)
    parameters = list(built.parameters())
    assert parameters and all(p.requires_grad for p in parameters)
    if qualified != "torch.compile":  # compiling its forward needs a C++ compiler
        assert built.eval()(torch.randn(4, 3)).requires_grad


def test_module_wrapping_methods_leave_out_freezing():
    assert api.MODULE_WRAPPING_METHODS <= api.SELF_RETURNING_MODULE_METHODS
    assert not api.MODULE_WRAPPING_METHODS & api.FREEZING_METHODS


def test_layer_sets_are_torch_nn_classes():
    for name in (
        api.WEIGHTED_LAYERS
        | api.PARAMETRIC_LAYERS
        | api.TUPLE_MODULES
        | api.PASSTHROUGH_MODULES
        | api.CONTAINER_MODULES
        | api.TARGET_SAVING_LOSS_MODULES
    ):
        assert isinstance(getattr(nn, name, None), type), name


def test_optimizer_api():
    for name in api.OPTIMIZER_METHODS | {api.OPTIMIZER_STEP}:
        assert callable(getattr(torch.optim.Optimizer, name, None)), name
    for name in api.OPTIMIZER_CLASSES:
        found = getattr(torch.optim, name, None)
        if found is not None:  # the others are other libraries' (apex, bitsandbytes)
            assert issubclass(found, torch.optim.Optimizer), name
    assert api.GRAD_CLEARING_NAMES & set(dir(torch.optim.Optimizer)) == {"zero_grad"}
    assert callable(getattr(nn.Module, "zero_grad", None))


# -- grad mode, differentiation -------------------------------------------------------


def test_grad_mode_names_live_where_the_vocabulary_looks():
    for name in api.GRAD_MODE_NAMES:
        assert hasattr(torch, name), name
        assert hasattr(torch.autograd.grad_mode, name), name
    assert api.GRAD_MODE_MODULES[0] == "torch."


@pytest.mark.parametrize("name", sorted(api.GRAD_MODE_MANAGERS))
def test_grad_mode_managers_switch_recording(name):
    with torch.set_grad_enabled(name in api.GRAD_DISABLERS):
        with getattr(torch, name)():
            assert torch.is_grad_enabled() == (name in api.GRAD_ENABLERS)

        @getattr(torch, name)()
        def decorated():
            return torch.is_grad_enabled()

        assert decorated() == (name in api.GRAD_ENABLERS)


def test_set_grad_enabled_switches_when_called():
    with torch.enable_grad():
        getattr(torch, api.GRAD_MODE_SETTER)(False)
        try:
            assert not torch.is_grad_enabled()
        finally:
            torch.set_grad_enabled(True)


def test_backward_calls_exist():
    assert hasattr(torch.Tensor, "backward")
    assert api.BACKWARD_METHODS >= {"backward"}
    for qualified in api.AUTOGRAD_BACKWARD | (api.AUTOGRAD_GRAD - NOT_IN_TORCH):
        assert callable(_resolve(qualified)), qualified


def test_requires_grad_names():
    x = torch.randn(2)
    assert hasattr(x, api.REQUIRES_GRAD_ATTRIBUTE)
    assert getattr(x, api.REQUIRES_GRAD_METHOD)() is x and x.requires_grad
    assert api.REQUIRES_GRAD_NAMES == {api.REQUIRES_GRAD_ATTRIBUTE, api.REQUIRES_GRAD_METHOD}
    parameter = nn.Parameter(torch.randn(2))
    assert parameter.requires_grad and type(parameter).__name__.endswith(api.TENSOR_CLASS_SUFFIXES)


# -- train and eval mode ---------------------------------------------------------------

# How to build each mode-dependent layer and run it: (the arguments it needs first, a
# function of the module that runs it on a batch).
_SEQ = (5, 3, 8)  # (sequence, batch, features)
_MODE_LAYER_RUNS = {
    "Dropout": ((), lambda m: m(torch.randn(8, 16))),
    "Dropout1d": ((), lambda m: m(torch.randn(4, 8, 16))),
    "Dropout2d": ((), lambda m: m(torch.randn(4, 8, 5, 5))),
    "Dropout3d": ((), lambda m: m(torch.randn(4, 8, 3, 3, 3))),
    "AlphaDropout": ((), lambda m: m(torch.randn(8, 16))),
    "FeatureAlphaDropout": ((), lambda m: m(torch.randn(4, 8, 5, 5))),
    "BatchNorm1d": ((4,), lambda m: m(torch.randn(8, 4))),
    "BatchNorm2d": ((4,), lambda m: m(torch.randn(8, 4, 5, 5))),
    "BatchNorm3d": ((4,), lambda m: m(torch.randn(8, 4, 3, 3, 3))),
    "SyncBatchNorm": ((4,), None),  # runs only under a process group
    "LazyBatchNorm1d": ((), lambda m: m(torch.randn(8, 4))),
    "LazyBatchNorm2d": ((), lambda m: m(torch.randn(8, 4, 5, 5))),
    "LazyBatchNorm3d": ((), lambda m: m(torch.randn(8, 4, 3, 3, 3))),
    "InstanceNorm1d": ((4,), lambda m: m(torch.randn(8, 4, 10))),
    "InstanceNorm2d": ((4,), lambda m: m(torch.randn(8, 4, 5, 5))),
    "InstanceNorm3d": ((4,), lambda m: m(torch.randn(8, 4, 3, 3, 3))),
    "LazyInstanceNorm1d": ((), lambda m: m(torch.randn(8, 4, 10))),
    "LazyInstanceNorm2d": ((), lambda m: m(torch.randn(8, 4, 5, 5))),
    "LazyInstanceNorm3d": ((), lambda m: m(torch.randn(8, 4, 3, 3, 3))),
    "RNN": ((8, 8, 2), lambda m: m(torch.randn(*_SEQ))[0]),
    "LSTM": ((8, 8, 2), lambda m: m(torch.randn(*_SEQ))[0]),
    "GRU": ((8, 8, 2), lambda m: m(torch.randn(*_SEQ))[0]),
    "MultiheadAttention": ((8, 2), lambda m: m(*[torch.randn(*_SEQ)] * 3)[0]),
    "Transformer": (
        (8, 2, 1, 1, 16),
        lambda m: m(torch.randn(*_SEQ), torch.randn(*_SEQ)),
    ),
    "TransformerEncoderLayer": ((8, 2, 16), lambda m: m(torch.randn(*_SEQ))),
    "TransformerDecoderLayer": ((8, 2, 16), lambda m: m(torch.randn(*_SEQ), torch.randn(*_SEQ))),
    "RReLU": ((), lambda m: m(torch.randn(8, 16))),
}


def _eval_changes_output(module, run) -> bool:
    """Does the module compute something else in eval mode than in training mode on the
    same batch (after one training batch, which materialises a lazy layer and moves batch
    norm's running statistics)?"""
    torch.manual_seed(0)
    with torch.no_grad():
        module.train()
        run(module)
        copy = deepcopy(module).eval()
        torch.manual_seed(1)
        trained = run(module)
        torch.manual_seed(1)
        evaluated = run(copy)
    return not torch.allclose(trained, evaluated, atol=1e-5)


def test_mode_dependent_layers_are_listed_for_each_one_measured():
    assert set(_MODE_LAYER_RUNS) == set(api.MODE_DEPENDENT_LAYERS)


@pytest.mark.parametrize("name", sorted(api.MODE_DEPENDENT_LAYERS))
def test_mode_dependent_layer_depends_as_built(name):
    """Built with the defaults, and with the argument that decides set the other way
    (by keyword, and at the position the vocabulary says), the layer's output changes
    in eval mode exactly when built_mode_dependent says so."""
    cls = getattr(nn, name)
    needed, run = _MODE_LAYER_RUNS[name]
    deciding = api.MODE_DEPENDENT_LAYERS[name]
    builds: list[tuple[tuple, dict]] = [(needed, {})]
    if deciding is not None:
        keyword, position, default = deciding
        if default:
            other: object = False if isinstance(default, bool) else 0.0
        else:
            other = 0.5 if keyword == "dropout" else True
        builds.append((needed, {keyword: other}))
        signature = inspect.signature(cls.__init__)
        if len(signature.parameters) > 3:  # not `(self, *args, **kwargs)`
            assert list(signature.parameters)[position + 1] == keyword, name
        if len(needed) <= position and name not in ("RNN", "LSTM", "GRU"):
            defaults = [p.default for p in list(signature.parameters.values())[1 : position + 1]]
            builds.append(((*needed, *defaults[len(needed) :], other), {}))
        elif name in ("RNN", "LSTM", "GRU"):
            # (input, hidden, layers, [nonlinearity,] bias, batch_first, dropout)
            fill = ("tanh", True, False) if name == "RNN" else (True, False)
            builds.append(((*needed, *fill, 0.5), {}))
    for args, kwargs in builds:
        module = cls(*args, **kwargs)
        expected = api.built_mode_dependent(name, list(args), kwargs)
        if run is None:
            # SyncBatchNorm: a batch norm, with its running statistics
            assert isinstance(module, nn.modules.batchnorm._BatchNorm)
            assert expected is bool(module.track_running_stats)
            continue
        assert _eval_changes_output(module, run) is expected, (name, args, kwargs)


def test_mode_undecided_when_the_argument_is_not_a_constant():
    assert api.built_mode_dependent("Dropout", [api.NOT_CONSTANT], {}) is None
    assert api.built_mode_dependent("LSTM", [8, 8, api.UNPACKED], {}) is None
    assert api.built_mode_dependent("LSTM", [8, 8], {api.UNPACKED: api.NOT_CONSTANT}) is None
    assert api.built_mode_dependent("LSTM", [8, 8], {"dropout": 0.0}) is False
    assert api.built_mode_dependent("Linear", [api.UNPACKED], {}) is False


def test_every_torch_nn_module_that_reads_the_mode_is_listed():
    """A torch.nn module class whose code (through its torch.nn bases) reads
    `self.training`, passes a `training=` flag or builds a listed layer is listed, as a
    mode-dependent layer or as a module that holds one it is given."""
    listed = set(api.MODE_DEPENDENT_LAYERS)
    calls = tuple(f"{name}(" for name in listed)
    reading = set()
    for name in dir(nn):
        obj = getattr(nn, name)
        if not (inspect.isclass(obj) and issubclass(obj, nn.Module)):
            continue
        for klass in obj.__mro__:
            if klass is nn.Module or not issubclass(klass, nn.Module):
                continue
            source = inspect.getsource(klass)
            if (
                "self.training" in source
                or "training=" in source
                or any(call in source for call in calls)
            ):
                reading.add(name)
                break
    assert reading, "the scan found nothing: torch's sources changed shape"
    assert reading <= listed | api.MODE_HOLDING_MODULES, reading - listed
    for name in api.MODE_HOLDING_MODULES:
        assert inspect.isclass(getattr(nn, name, None) or getattr(nn.parallel, name)), name
    for qualified in api.MODE_DEPENDENT_FUNCTIONS:
        found = torch
        for part in qualified.split(".")[1:]:
            found = getattr(found, part)  # `nn.utils.spectral_norm` is also a module's name
        assert callable(found), qualified
    functional = nn.functional
    for name in api.MODE_ARGUMENT_FUNCTIONALS:
        assert "training" in inspect.signature(getattr(functional, name)).parameters, name


def test_spectral_norm_depends_on_the_mode():
    layer = nn.utils.spectral_norm(nn.Linear(4, 4))
    assert _eval_changes_output(layer, lambda m: m(torch.randn(8, 4)))


# Arguments a parameterless layer needs to be built; the others build with none or with
# a kernel size of 2.
_PARAMETERLESS_BUILDS: dict[str, tuple] = {
    "Threshold": (0.1, 0.0),
    "Unflatten": (1, (2, 2)),
    "Fold": ((4, 4), 2),
    "LPPool1d": (2, 2),
    "LPPool2d": (2, 2),
    "ConstantPad1d": (1, 0.0),
    "ConstantPad2d": (1, 0.0),
    "ConstantPad3d": (1, 0.0),
}


@pytest.mark.parametrize("name", sorted(api.PARAMETERLESS_LAYERS))
def test_parameterless_layers_hold_no_parameters(name):
    cls = getattr(nn, name)
    needed = [
        p
        for p in list(inspect.signature(cls.__init__).parameters.values())[1:]
        if p.default is inspect.Parameter.empty and p.kind is p.POSITIONAL_OR_KEYWORD
    ]
    args = _PARAMETERLESS_BUILDS.get(name, (2,) * len(needed))
    module = cls(*args)
    assert not list(module.parameters()), name


def test_parameterless_and_parametric_layers_are_apart():
    assert not api.PARAMETERLESS_LAYERS & api.PARAMETRIC_LAYERS
    assert not api.PARAMETERLESS_LAYERS & (api.CONTAINER_MODULES | api.WRAPPER_MODULES)


def test_every_torch_layer_built_without_arguments_and_parameters_is_known():
    """A torch.nn layer that builds with no argument and holds no parameters is either
    listed as parameterless or is a loss, a container or nn.Module itself."""
    import warnings

    unknown = []
    for name in dir(nn):
        cls = getattr(nn, name)
        if not (inspect.isclass(cls) and issubclass(cls, nn.Module)):
            continue
        if name.endswith("Loss") or name.endswith("Loss2d") or name in ("Module", "Container"):
            continue
        if name in api.CONTAINER_MODULES or name.startswith("Parameter"):
            continue
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                module = cls()
        except Exception:
            continue
        if not list(module.parameters()) and name not in api.PARAMETERLESS_LAYERS:
            unknown.append(name)
    assert not unknown


@pytest.mark.parametrize("method", sorted(api.FRESH_TENSOR_METHODS))
def test_fresh_tensor_methods_make_tensors_without_history(method):
    source = torch.ones(2, requires_grad=True) * 2
    args = {"new_full": ((2,), 1.0), "new_tensor": ([1.0, 2.0],)}.get(method, ((2,),))
    made = getattr(source, method)(*args)
    assert isinstance(made, torch.Tensor) and made.grad_fn is None and not made.requires_grad


@pytest.mark.parametrize(("layer", "function"), sorted(api.ACTIVATION_FUNCTIONS.items()))
def test_activation_layers_run_their_table_function(layer, function):
    module = importlib.import_module(function.rsplit(".", 1)[0])
    run = getattr(module, function.rsplit(".", 1)[1])
    built = getattr(torch.nn, layer)(**({"dim": -1} if "Softmax" in layer else {}))
    x = torch.randn(4, 5)
    expected = run(x, dim=-1) if "softmax" in function else run(x)
    assert torch.allclose(built(x), expected)


# How to call each GRADLESS_RESULTS name as a Tensor method on `x` (requires grad).
_GRADLESS_CALLS = {
    "multinomial": lambda x: x.softmax(0).multinomial(1),
    "bucketize": lambda x: torch.bucketize(x, torch.tensor([0.0])),
    "searchsorted": lambda x: torch.searchsorted(torch.tensor([0.0, 1.0]), x),
    "histc": lambda x: x.histc(),
    "sample": lambda x: torch.distributions.Normal(x, 1.0).sample(),
    "argsort": lambda x: x.argsort(),
    "nonzero": lambda x: x.nonzero(),
    "count_nonzero": lambda x: x.count_nonzero(),
    "logical_not": lambda x: x.logical_not(),
    "any": lambda x: x.any(),
    "all": lambda x: x.all(),
    "signbit": lambda x: x.signbit(),
    "isnan": lambda x: x.isnan(),
    "isinf": lambda x: x.isinf(),
    "isfinite": lambda x: x.isfinite(),
    "isneginf": lambda x: x.isneginf(),
    "isposinf": lambda x: x.isposinf(),
}


@pytest.mark.parametrize("name", sorted(api.GRADLESS_RESULTS))
def test_gradless_results_never_require_grad(name):
    """Each name the vocabulary says gives a result without history does so on a tensor
    that requires grad, as a method and (where torch has one) as a torch function."""
    x = torch.randn(6, requires_grad=True)
    call = _GRADLESS_CALLS.get(name, lambda x: getattr(x, name)(x * 2))
    assert call(x).requires_grad is False
    if name != "sample" and hasattr(torch, name) and name not in _GRADLESS_CALLS:
        assert getattr(torch, name)(x, x * 2).requires_grad is False


@pytest.mark.parametrize(
    ("qualified", "builds"),
    [
        ("timm.create_model", True),
        ("torch.hub.load", True),
        ("transformers.AutoModelForSequenceClassification.from_pretrained", True),
        ("transformers.BertModel.from_pretrained", True),
        ("diffusers.UNet2DModel.from_pretrained", True),
        ("efficientnet_pytorch.EfficientNet.from_pretrained", True),
        ("peft.PeftModel.from_pretrained", True),
        ("transformers.AutoTokenizer.from_pretrained", False),
        ("transformers.BertTokenizerFast.from_pretrained", False),
        ("transformers.AutoConfig.from_pretrained", False),
        ("transformers.AutoImageProcessor.from_pretrained", False),
        ("diffusers.DDPMScheduler.from_pretrained", False),
        ("diffusers.StableDiffusionPipeline.from_pretrained", False),
        ("diffusers.AutoPipelineForInpainting.from_pretrained", False),
        ("mylib.Model.from_pretrained", False),  # not a library known to build networks
        ("torch.hub.load_state_dict_from_url", False),
    ],
)
def test_networks_other_libraries_build(qualified, builds):
    assert api.builds_model_with_weights(qualified) is builds


def test_submodule_iterators_hand_out_layers_and_named_pairs():
    net = nn.Sequential(nn.Linear(2, 3), nn.ReLU())
    for method in api.SUBMODULE_ITERATORS:
        assert any(isinstance(m, nn.Linear) for m in getattr(net, method)()), method
    for method in api.NAMED_SUBMODULE_ITERATORS:
        pairs = list(getattr(net, method)())
        assert all(isinstance(name, str) and isinstance(m, nn.Module) for name, m in pairs)


def test_tensor_making_functions_make_tensors_of_data_and_of_tensors():
    # the builders handed data: of a list and of a tensor, each hands back a tensor
    builders = api.AS_TENSOR_FUNCTIONS | api.DATA_COPYING_FUNCTIONS | api.VARIABLE_CLASSES
    assert builders <= api.TENSOR_MAKING_FUNCTIONS
    for qualified in sorted(builders):
        if ".cuda." in qualified and not torch.cuda.is_available():
            continue
        function = _resolve(qualified)
        if qualified == "torch.Tensor.new_tensor":
            function = torch.zeros(1).new_tensor
        assert callable(function), qualified
        integral = any(k in qualified for k in ("Long", "Int", "Short", "Char", "Byte", "Bool"))
        data = [1, 0] if integral else [1.0, 2.0]
        assert isinstance(
            function(data) if "Variable" not in qualified else function(torch.tensor(data)),
            torch.Tensor,
        ), qualified


_LOSS_LAYER_SIZES = {"AdaptiveLogSoftmaxWithLoss": {"cutoffs": [2]}}


def test_the_torch_classes_a_project_class_may_extend_are_modules():
    """is_torch_module_base: every layer, container and loss it names is an nn.Module
    class of torch.nn; a loss holds no parameters (torch_base_holds_no_parameters), a
    parametric layer does (torch_base_holds_weights)."""
    for name in api.EXTENSIBLE_LAYERS:
        cls = getattr(nn, name, None) or getattr(nn.parallel, name)  # DistributedDataParallel
        assert inspect.isclass(cls) and issubclass(cls, nn.Module), name
        assert api.is_torch_module_base(f"torch.nn.{name}"), name
    losses = [n for n in dir(nn) if n.endswith("Loss") and inspect.isclass(getattr(nn, n))]
    assert len(losses) > 15
    for name in losses:
        assert issubclass(getattr(nn, name), nn.Module), name
        assert api.is_torch_module_base(f"torch.nn.{name}")
        holds = api.torch_base_holds_weights(f"torch.nn.{name}")
        assert api.torch_base_holds_no_parameters(f"torch.nn.{name}") is not holds
        if holds:  # built with the sizes of its layer
            assert list(getattr(nn, name)(4, 8, **_LOSS_LAYER_SIZES.get(name, {})).parameters())
        else:
            assert not list(getattr(nn, name)().parameters()), name
    assert api.torch_base_holds_weights("torch.nn.Conv2d")
    assert api.torch_base_holds_weights("torch.nn.Sequential")
    assert not api.is_torch_module_base("torch.nn.Parameter")
    assert not api.is_torch_module_base("torch.nn.functional")
    assert not api.is_torch_module_base("mylib.Sequential")
