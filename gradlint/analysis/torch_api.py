"""What a torch call does, by name: the one torch vocabulary every rule and analysis reads.

Each set answers one question about a name as it appears in code (a method after a dot,
an attribute, a qualified function, a class): does it cut the graph, make plain numbers,
change a tensor in place, belong to `nn.Module`'s own API, set `requires_grad`, switch
grad mode, step an optimizer, differentiate. Where an analysis deliberately reads a
narrower or wider set, the sub-vocabulary is named here with the reason, so that two
modules never hold two versions of one list.

`tests/test_torch_api.py` checks the sets against the installed torch: every Tensor
method named here exists, every in-place method is in-place by torch's own naming, every
`nn.Module` API name is a method of `nn.Module`, every grad-mode manager is in `torch`.
`tests/test_architecture.py` keeps other modules from growing lists of their own.
"""

from __future__ import annotations

from collections.abc import Sequence

# The named-tensor API: gone from the torch installed here (2.13), but in code written
# for the torch versions that had it, so still known.
NAMED_TENSOR_API = frozenset({"names", "rename", "refine_names", "align_to"})

# -- graph cuts ---------------------------------------------------------------------------

# Same values, no history: what `x.detach()` / `x.detach_()` / `x.data` hand back.
DETACHING_METHODS = frozenset({"detach", "detach_"})
DETACHING_ATTRIBUTES = frozenset({"data"})
# Words in the name of a helper that detaches what it is handed (`repackage_hidden(h)`).
DETACHING_HELPER_WORDS = ("repackage", "detach")
# Tensor methods whose result is a plain Python number or list of them, or a numpy array
# (`.numpy()` also raises on a tensor that requires grad).
NUMBER_METHODS = frozenset({"item", "tolist", "numpy"})
# Those of NUMBER_METHODS whose result is a Python object, not an array.
PYTHON_NUMBER_METHODS = frozenset({"item", "tolist"})
# Index-returning reductions: the chosen action or class, without history.
INDEX_METHODS = frozenset({"argmax", "argmin"})
INDEX_FUNCTIONS = frozenset({"torch.argmax", "torch.argmin"})
# torch functions and methods whose result never requires grad (integer indices, a
# histogram), measured on torch 2.13: read as numbers, and `.numpy()` on them works.
# Comparisons and tests give boolean tensors, `argsort` and `nonzero` indices
# (tests/test_torch_api.py checks every one of them against torch).
GRADLESS_RESULTS = frozenset(
    {"multinomial", "bucketize", "searchsorted", "histc", "sample", "argsort", "nonzero"}
    | {"eq", "ne", "gt", "lt", "ge", "le", "isclose", "isnan", "isinf", "isfinite"}
    | {"isneginf", "isposinf", "signbit", "count_nonzero"}
    | {"logical_and", "logical_or", "logical_xor", "logical_not", "any", "all"}
)
# A distribution built from a tensor carries its history into `log_prob`, `rsample`,
# `entropy`, `mean`; its `sample()` runs without grad.
DISTRIBUTIONS_NAMESPACE = "torch.distributions."
# Methods that return a (values, indices) pair, the indices without history.
VALUES_AND_INDICES_METHODS = frozenset({"topk", "sort", "kthvalue", "mode"})
# Tensor methods whose result is a Python value describing the tensor, not its values.
METADATA_METHODS = frozenset(
    {"numel", "size", "dim", "nelement", "element_size", "data_ptr", "stride"}
    | {"is_contiguous", "get_device", "__len__"}
)
# Tensor methods whose result is a tensor or bool with no history (integer and bool
# results have no gradient). Measured on torch 2.13: `sign`, `sgn`, `round`, `floor` keep
# `requires_grad=True`, so they are not here.
NON_DIFFERENTIABLE_METHODS = frozenset(
    {"argsort", "long", "int", "bool", "byte", "short", "nonzero", "count_nonzero"}
    | {"eq", "ne", "lt", "le", "gt", "ge", "isnan", "isinf", "isfinite", "isclose"}
    | {"equal", "allclose", "any", "all", "signbit", "multinomial"}
)
# `sign` records a node (its result keeps `requires_grad=True`, measured) but passes
# back a zero gradient: nothing differentiated through it depends on its input, which is
# what the read and value analyses ask (an FGSM step `x + eps * x.grad.sign()`).
ZERO_GRADIENT_METHODS = frozenset({"sign"})
# Every method whose result carries no autograd history back to its receiver.
GRAPH_CUTTING_METHODS = (
    DETACHING_METHODS
    | NUMBER_METHODS
    | INDEX_METHODS
    | METADATA_METHODS
    | NON_DIFFERENTIABLE_METHODS
    | ZERO_GRADIENT_METHODS
)
# A test's assertions read the values they are given (a comparison, a shape, not None):
# `self.assertEqual(out.shape, (2, 3))`, unittest's `self.assert*` methods, and
# torch.testing's. None of them differentiates what it checks.
TEST_ASSERTION_PREFIX = "self.assert"
TEST_ASSERTION_FUNCTIONS = frozenset(
    {"torch.testing.assert_close", "torch.testing.assert_allclose"}
)


def is_test_assertion(qualified: str) -> bool:
    """`self.assertEqual`, `self.assertIsNotNone`, `torch.testing.assert_close`, as the
    callee's dotted name resolved through the imports reads."""
    return qualified.startswith(TEST_ASSERTION_PREFIX) or qualified in TEST_ASSERTION_FUNCTIONS


# Experiment trackers' logging calls, which turn a tensor they are handed (in a dict of
# metrics too) into a number or an array of it, detached (wandb's `json_friendly` calls
# `.detach().cpu()`; mlflow's metrics are floats): a value logged is read as numbers.
TRACKER_LOGGING_FUNCTIONS = frozenset({"wandb.log", "mlflow.log_metric", "mlflow.log_metrics"})


# Tensor attributes that are plain Python values.
METADATA_ATTRIBUTES = frozenset(
    {"shape", "dtype", "device", "requires_grad", "ndim", "is_leaf", "grad_fn", "is_cuda"}
    | {"layout", "names"}
)
GRAPH_CUTTING_ATTRIBUTES = METADATA_ATTRIBUTES | DETACHING_ATTRIBUTES
# `.grad` holds no history unless backward ran with `create_graph=True`: the value
# analysis takes it as history-free, the read analysis (what a value is computed from)
# does not cut at it.
GRAD_ATTRIBUTE = "grad"
# The attributes that hold a parameter's gradient: `.grad`, and `._grad`, its storage,
# which old A3C code assigns to get past the `.grad` setter's checks.
GRAD_STORAGE_ATTRIBUTES = frozenset({GRAD_ATTRIBUTE, "_grad"})
# Asks a non-leaf to keep its `.grad`: then a read of it no longer shows a leaf.
RETAIN_GRAD_METHOD = "retain_grad"
# Builtins whose loop target pairs elements of their arguments: `zip(a, b)` puts a's
# first, `enumerate(a)` puts a's after the count.
PAIRING_BUILTINS = frozenset({"zip", "enumerate"})
# Builtins whose result walks the elements of their one argument.
ELEMENT_PRESERVING_BUILTINS = frozenset({"list", "tuple", "reversed"})
# Functions that walk the elements of each iterable they are given in turn
# (`itertools.chain(G.parameters(), D.parameters())`).
CHAINING_FUNCTIONS = frozenset({"itertools.chain"})
# The builtins a `for` header wraps around an iterable whose elements its names still
# take (index.loop_element_sources reads them).
LOOP_WALKING_BUILTINS = PAIRING_BUILTINS | ELEMENT_PRESERVING_BUILTINS
# Python builtins whose result is a plain value whatever they are given.
PYTHON_VALUE_BUILTINS = frozenset(
    {"float", "int", "bool", "str", "len", "round", "repr", "format", "isinstance", "hasattr"}
    | {"id", "type", "range", "enumerate", "print", "divmod", "hash", "ord", "chr"}
)
# Builtins that turn a one-element tensor into a number (and say so: the caller wants
# numbers). `int()`/`bool()` of a tensor are also numbers but are more often a count or
# a truth test, which says nothing about intent.
NUMBER_BUILTINS = frozenset({"float"})
# Builtins that compute with their arguments: plain when every argument is plain.
ARITHMETIC_BUILTINS = frozenset({"min", "max", "abs", "sum", "pow"})
# Builtins that hand back tensors when given one (`round(t)`, `divmod(t, 2)`), or the
# tensor's rows (`enumerate(t)`): their result may carry its history on.
TENSOR_RETURNING_BUILTINS = ARITHMETIC_BUILTINS | {"round", "divmod", "enumerate"}
# Modules whose functions compute plain values (or numpy arrays) from what they get.
# Reinforcement-learning environment libraries belong here too: `gym.make(...)` builds an
# environment whose `reset()` / `step(action)` hand back numpy observations and float
# rewards, never a tensor, so nothing an agent collects from it carries a graph.
RL_ENVIRONMENT_MODULES = ("gym.", "gymnasium.")
# An environment's methods, known by the shape of their use whatever the library (gym,
# a wrapper, a hand-written `self.step(action)` around one): `reset()` hands back the
# first observation (gymnasium: `(obs, info)`), `step(action)` a tuple of at least
# three, `(obs, reward, done[, info])` or gymnasium's five, whose first is the
# observation the agent acts on next. An optimizer's or a scheduler's `step` takes no
# action and is not unpacked into three.
ENVIRONMENT_RESET = "reset"
ENVIRONMENT_STEP = "step"
ENVIRONMENT_STEP_RESULTS = 3
_STANDARD_VALUE_MODULES = ("math.", "np.", "numpy.", "random.", "time.", "os.", "json.")
PYTHON_VALUE_MODULES: tuple[str, ...] = _STANDARD_VALUE_MODULES + RL_ENVIRONMENT_MODULES
NUMPY_MODULES = ("np.", "numpy.")
# matplotlib converts what it plots with numpy (`plt.plot(x, net(x))` raises "Can't call
# numpy() on Tensor that requires grad", measured for plot, scatter, imshow, hist,
# contourf and fill_between on torch 2.13 and matplotlib 3.11).
PLOTTING_MODULES = ("matplotlib.",)


def converts_with_numpy(qualified: str | None) -> bool:
    """Is the function (qualified through the imports) numpy's or matplotlib's, which
    make an array of a tensor argument and raise on one that requires grad?"""
    return qualified is not None and qualified.startswith(NUMPY_MODULES + PLOTTING_MODULES)


NUMERIC_MODULES = ("math.", *NUMPY_MODULES)
# Where a value kept on a module that is no layer comes from (`self.mean = torch.tensor(m)`)
LAYERLESS_VALUE_MODULES = ("torch.", *NUMERIC_MODULES)
# torch functions with no history in their result: the functional spelling of every
# history-free method that torch also has as a function (`torch.argsort(pred)` as
# `pred.argsort()`), each measured in tests/test_torch_api.py.
_HISTORY_FREE_FUNCTION_NAMES = (GRADLESS_RESULTS - {"sample"}) | {"numel", "equal", "allclose"}
NON_DIFFERENTIABLE_FUNCTIONS = INDEX_FUNCTIONS | frozenset(
    f"torch.{name}" for name in _HISTORY_FREE_FUNCTION_NAMES
)
# torch factories: a fresh tensor with no history (assigning one re-initialises state).
# Type tests that are true of every tensor: `torch.is_tensor(x)`, `isinstance(x, torch.Tensor)`.
# The attribute a module's `train()` and `eval()` set on it.
MODULE_MODE_ATTRIBUTES = frozenset({"training"})
TENSOR_TYPE_TESTS = frozenset({"torch.is_tensor"})
TENSOR_TYPES = frozenset({"torch.Tensor", "torch.nn.Parameter", "torch.nn.parameter.Parameter"})
# Types whose values hold no autograd graph: a test that a value is one of them
# (`isinstance(x, np.ndarray)`, `type(x) == float`) shows it is plain data already.
PLAIN_VALUE_TYPES = frozenset(
    {"numpy.ndarray", "numpy.generic", "numpy.number", "numpy.float32", "numpy.float64"}
    | {"float", "int", "bool"}
)
# Roots of libraries that are never the project's own modules, and none of whose calls is
# a model's forward: `torch.cat(xs)`, `np.mean(v)`, `json.dump(d, f)` need no look-up in
# the project, and no question of whether they run a model.
LIBRARY_ROOTS = frozenset(
    "torch numpy math random os sys time json logging copy itertools functools "
    "collections re pathlib pickle argparse matplotlib pandas scipy cv2 PIL tqdm yaml "
    "warnings glob shutil subprocess".split()
)
# Builtins whose calls are never a model's forward, unless the file rebinds the name.
NEVER_FORWARD_BUILTINS = frozenset(
    "print len range isinstance int float str list dict tuple set zip enumerate min max "
    "sum abs round sorted getattr setattr hasattr super type open format repr any all "
    "iter next map filter reversed bool".split()
)
# Methods of containers, strings, paths and loggers: never a module's forward.
PYTHON_OBJECT_METHODS = frozenset(
    "append extend insert pop remove clear update get items keys values copy setdefault "
    "join split strip startswith endswith replace lower upper format encode decode "
    "info warning debug error exception critical write read close flush "
    "exists is_file is_dir glob rglob mkdir unlink resolve with_suffix "
    "isnumeric isdigit isalpha count index".split()
)
# Libraries whose functions hand back plain values (arrays, numbers): what a helper
# returns from one of them holds no graph (`return f1_score(y_true, y_pred)`).
PLAIN_VALUE_LIBRARIES = frozenset({"numpy", "math", "statistics", "sklearn", "scipy"})
TENSOR_FACTORIES = frozenset(
    {"torch.zeros", "torch.ones", "torch.empty", "torch.zeros_like", "torch.ones_like"}
    | {"torch.empty_like", "torch.full", "torch.full_like", "torch.randn", "torch.rand"}
    | {"torch.randint", "torch.randn_like", "torch.rand_like", "torch.arange"}
    | {"torch.linspace", "torch.eye", "torch.tensor", "torch.as_tensor", "torch.from_numpy"}
    | {"torch.randperm"}
)
# The last name of what builds a tensor or an array out of a list (`torch.tensor([obs])`,
# `np.array([s_t])`, `torch.stack([x])`): a list of one observation is a batch of one.
ARRAY_FROM_LIST_BUILDERS = frozenset(
    {"tensor", "as_tensor", "Tensor", "FloatTensor", "array", "asarray", "stack", "vstack"}
)
# A data loader: what it yields are batches collated from a dataset, tensors without
# history (and labels, strings, lists of them).
# Loaders of batches of data: what they hand a loop was made outside autograd, so it has
# no history. PyTorch Geometric's (a batch of graphs, `data.x`, `data.num_graphs`) and
# DGL's are torch's DataLoader with another collate.
DATA_LOADERS = frozenset(
    {
        "torch.utils.data.DataLoader",
        "torch.utils.data.dataloader.DataLoader",
        "torch_geometric.loader.DataLoader",
        "torch_geometric.loader.DataListLoader",
        "torch_geometric.loader.DenseDataLoader",
        "torch_geometric.loader.NeighborLoader",
        "torch_geometric.loader.LinkNeighborLoader",
        "torch_geometric.loader.ClusterLoader",
        "torch_geometric.loader.GraphSAINTRandomWalkSampler",
        "torch_geometric.loader.GraphSAINTNodeSampler",
        "torch_geometric.loader.GraphSAINTEdgeSampler",
        "torch_geometric.data.DataLoader",
        "torch_geometric.data.DataListLoader",
        "torch_geometric.data.DenseDataLoader",
        "torch_geometric.data.ClusterLoader",
        "torch_geometric.data.GraphSAINTRandomWalkSampler",
        "torch_geometric.data.GraphSAINTNodeSampler",
        "torch_geometric.data.GraphSAINTEdgeSampler",
        "dgl.dataloading.GraphDataLoader",
        "dgl.dataloading.DataLoader",
    }
)
# Wrappers a loop puts around an iterable that hand back its items (with a counter first,
# for `enumerate`).
ITEM_PASSING_WRAPPERS = frozenset(
    {"enumerate", "tqdm.tqdm", "tqdm.auto.tqdm", "tqdm.notebook.tqdm"}
)
# Factories of a grid of steps (`for t in torch.linspace(0, 1, n)`): a loop over one
# runs a number of steps the code chooses, as `range(n)` does, not a sequence of data.
STEP_GRID_FACTORIES = frozenset({"torch.arange", "torch.linspace", "torch.logspace"})
# What cuts a tensor into the steps of one of its dimensions: `for x_t in seq.unbind(1)`
# walks the time steps of one input, as `for x_t in seq` does.
SLICING_METHODS = frozenset({"unbind", "split", "chunk"})
SLICING_FUNCTIONS = frozenset({"torch.unbind", "torch.split", "torch.chunk"})
# Tensors from data (`torch.tensor(loss)` copies the values and drops the history).
DATA_COPYING_FUNCTIONS = frozenset({"torch.tensor", "torch.Tensor.new_tensor"})
# The legacy typed constructors (`torch.FloatTensor(state)`, RL code's way to turn an
# observation into a batch): of plain data a fresh tensor; of a tensor of their dtype an
# alias that keeps its history (`AliasBackward0`, measured); of another dtype a TypeError.
_LEGACY_DTYPES = ("Float", "Double", "Half", "BFloat16", "Long", "Int", "Short", "Char", "Byte")
LEGACY_TENSOR_CONSTRUCTORS = frozenset(
    {"torch.Tensor"}
    | {f"torch.{device}{dtype}Tensor" for device in ("", "cuda.") for dtype in _LEGACY_DTYPES}
    | {"torch.BoolTensor", "torch.cuda.BoolTensor"}
)
# Converters that share the data, and the history, of a tensor they are given.
AS_TENSOR_FUNCTIONS = frozenset({"torch.as_tensor", "torch.asarray"}) | LEGACY_TENSOR_CONSTRUCTORS
# Calls whose result carries no graph back to their arguments (the read analysis).
GRAPH_CUTTING_FUNCTIONS = (
    PYTHON_VALUE_BUILTINS
    | {"math", "np", "numpy", "copy.deepcopy", "torch.no_grad"}
    | NON_DIFFERENTIABLE_FUNCTIONS
    | TENSOR_FACTORIES
)
# Tensors made with no history: factories and history-free torch functions.
FRESH_TENSOR_FUNCTIONS = TENSOR_FACTORIES | NON_DIFFERENTIABLE_FUNCTIONS
# More ways to build a tensor that nothing holds yet (the legacy Variable wrapper, samplers).
FRESH_TENSOR_MAKERS = FRESH_TENSOR_FUNCTIONS | frozenset(
    {"torch.autograd.Variable", "torch.autograd.variable.Variable", "torch.normal"}
)
# numpy's builders of an array to fill (`preds = np.zeros(n)`, then `preds[i] = ...`):
# writing a tensor that requires grad into one copies its values out; one of more than
# one element raises "Can't call numpy() on Tensor that requires grad" (measured on
# torch 2.13; a one-element tensor converts, with a warning).
NUMPY_BUFFER_BUILDERS = frozenset(
    f"numpy.{name}"
    for name in ("zeros", "empty", "ones", "full", "zeros_like", "empty_like", "ones_like")
)
# Whatever they are given, what these return is a tensor (or they raise).
TENSOR_MAKING_FUNCTIONS = FRESH_TENSOR_MAKERS | AS_TENSOR_FUNCTIONS | DATA_COPYING_FUNCTIONS
# Methods that keep a fresh tensor fresh (`torch.zeros_like(x).uniform_(-e, e).cuda()`).
FRESH_PRESERVING_METHODS = frozenset(
    {"requires_grad_", "uniform_", "normal_", "fill_", "zero_", "to", "cuda", "cpu"}
    | {"float", "double", "half", "clamp", "clamp_", "contiguous", "view", "reshape"}
)
# Tensor methods that move or cast a tensor: the result has the receiver's history and
# none of their arguments' (a device, a dtype, `non_blocking`, or a tensor whose dtype and
# device `x.to(other)` copies).
MOVING_METHODS = frozenset({"to", "cuda", "cpu", "type", "float", "double", "half", "long", "int"})
# Steps from a tensor to the same values elsewhere (on the CPU, without history,
# reshaped, cast): what a helper may do on the way to `.numpy()` / `.item()`.
SAME_VALUE_STEPS = (
    DETACHING_METHODS
    | DETACHING_ATTRIBUTES
    | frozenset({"cpu", "cuda", "to", "clone", "contiguous", "squeeze", "flatten", "view"})
    | frozenset({"reshape", "float", "double", "half", "long", "int", "T"})
)

# -- views and aliases --------------------------------------------------------------------

# Views: in-place on them is in-place on the base ("a view of a leaf Variable ...").
VIEW_METHODS = frozenset(
    {"view", "view_as", "reshape", "flatten", "t", "transpose", "permute", "squeeze"}
    | {"unsqueeze", "expand", "expand_as", "narrow", "select", "diagonal", "unfold"}
    | {"as_strided", "T", "mT"}
)
# Of VIEW_METHODS, those that may copy instead (a non-contiguous input).
MAYBE_COPYING_VIEWS = frozenset({"reshape", "flatten"})
TRANSPOSE_ATTRIBUTES = frozenset({"T", "mT"})
# Attributes that are a view of the tensor's values, with its history.
HISTORY_KEEPING_ATTRIBUTES = TRANSPOSE_ATTRIBUTES | {"real", "imag"}
# Under no_grad these hand back their input, a view of it, or a tensor it holds, which
# keeps the input's requires_grad (`p.view(3)`, `p.float()`, `torch.as_tensor(p)`,
# `F.dropout(p, training=False)`; any trailing-underscore in-place method returns self).
ALIASING_CALLS = VIEW_METHODS | frozenset(
    {"to", "cuda", "cpu", "float", "double", "half", "bfloat16", "type", "type_as"}
    | {"contiguous", "chunk", "split", "split_with_sizes", "unbind", "tensor_split"}
    | {"hsplit", "vsplit", "dsplit", "unflatten", "movedim", "moveaxis", "swapaxes"}
    | {"swapdims", "ravel", "conj", "resolve_conj", "resolve_neg", "real", "imag"}
    | {"as_tensor", "asarray", "atleast_1d", "atleast_2d", "atleast_3d", "broadcast_to"}
    | {"broadcast_tensors", "view_as_real", "view_as_complex", "adjoint", "Tensor"}
    | {"dropout", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout"}
    | {"feature_alpha_dropout", "meshgrid", "unsafe_chunk", "unsafe_split", "align_to"}
    | {"rename", "refine_names", "as_subclass", "to_dense", "coalesce", "pin_memory"}
)
# Tensor methods whose result requires grad whenever their receiver does (recording).
DIFFERENTIABLE_METHODS = frozenset(
    {"softmax", "log_softmax", "sigmoid", "tanh", "relu", "exp", "log", "sum", "mean"}
    | {"view", "reshape", "flatten", "squeeze", "unsqueeze", "permute", "transpose", "t"}
    | {"clone", "float", "double", "half", "to", "cuda", "cpu", "contiguous", "pow", "abs"}
    | {"sqrt", "norm", "mul", "add", "sub", "div", "matmul", "expand", "repeat", "neg"}
)
# Tensor methods of everyday code that never run a module's forward.
COMMON_TENSOR_METHODS = frozenset(
    "to cpu cuda half float double long int bool numpy tolist item detach clone "
    "contiguous view view_as reshape permute transpose t flatten unsqueeze squeeze "
    "expand expand_as repeat chunk split_with_sizes size dim numel type type_as "
    "sum mean max min argmax argmin argsort sort topk std var prod cumsum norm abs "
    "exp log sqrt pow clamp clamp_ sigmoid softmax log_softmax tanh relu "
    "add sub mul div matmul mm bmm eq ne gt lt ge le any all nonzero where masked_fill "
    "fill_ zero_ copy_ add_ mul_ div_ sub_ new_zeros new_ones new_tensor new_full".split()
)

# -- in place -----------------------------------------------------------------------------

# Trailing-underscore methods that are not in-place updates of the tensor's values.
NOT_INPLACE_METHODS = frozenset({"requires_grad_", "share_memory_", "detach_"})
# In-place methods that overwrite the tensor they are called on.
OVERWRITING_METHODS = frozenset({"zero_", "fill_", "copy_"})
# In-place methods that move a tensor by what they are given (a hand-written update).
UPDATING_METHODS = frozenset({"add_", "sub_", "addcdiv_", "addcmul_", "copy_", "lerp_"})
# torch functions that zero their argument in place.
ZEROING_FUNCTIONS = frozenset({"torch.nn.init.zeros_", "torch.nn.init.constant_"})
# Modules whose trailing-underscore functions change their first argument.
INPLACE_FUNCTION_MODULES = frozenset({"torch", "torch.nn.init"})
# `F.relu(x, inplace=True)`, `nn.ReLU(inplace=True)`.
INPLACE_KEYWORD = "inplace"
# Augmented-assignment dunders a tensor implements in place.
INPLACE_DUNDERS = frozenset(
    {"__iadd__", "__isub__", "__imul__", "__itruediv__", "__ifloordiv__", "__imod__"}
    | {"__ipow__", "__iand__", "__ior__", "__ixor__", "__ilshift__", "__irshift__"}
    | {"__setitem__"}
)


def is_inplace_method(name: str) -> bool:
    """`x.add_(y)`, `x.clamp_(0)`: torch's in-place naming, less the trailing-underscore
    methods that change flags rather than values."""
    return name.endswith("_") and not name.startswith("_") and name not in NOT_INPLACE_METHODS


# -- requires_grad ------------------------------------------------------------------------

REQUIRES_GRAD_ATTRIBUTE = "requires_grad"
REQUIRES_GRAD_METHOD = "requires_grad_"
# Python container methods that keep what they are handed (fast weights collected).
CONTAINER_STORING_METHODS = frozenset({"append", "extend", "insert", "add", "update"})
# `x.detach_()`: x itself leaves the graph and no longer requires grad (a switch off).
DETACH_IN_PLACE_METHOD = "detach_"
REQUIRES_GRAD_NAMES = frozenset({REQUIRES_GRAD_ATTRIBUTE, REQUIRES_GRAD_METHOD})
PARAMETER_CLASSES = frozenset(
    {"torch.nn.Parameter", "torch.nn.parameter.Parameter", "torch.nn.UninitializedParameter"}
)
# A class call whose instance *is* a tensor (`torch.Tensor`, `Variable`, `nn.Parameter`).
TENSOR_CLASS_SUFFIXES = ("Tensor", "Variable", "Parameter")
VARIABLE_CLASSES = frozenset({"torch.autograd.Variable", "torch.autograd.variable.Variable"})
# Calls on a rebound name that make it a fresh leaf on purpose.
RELEAFING_METHODS = frozenset({"requires_grad_", "retain_grad", "detach_"})
# Calls on a value that detach it, or mark it a leaf that requires grad, in place.
DETACHING_INPLACE_METHODS = frozenset({DETACH_IN_PLACE_METHOD, REQUIRES_GRAD_METHOD})
# Methods through which the graph is used or kept on purpose.
GRAPH_KEEPING_METHODS = frozenset(
    {"backward", "register_hook", "retain_grad", "requires_grad_", "manual_backward"}
    | {"register_post_accumulate_grad_hook", "share_memory_", "copy_"}
)

# -- custom autograd Functions ----------------------------------------------------------

# A class deriving from one of these is a custom autograd Function (a gradient reversal,
# a straight-through estimator, a hand-written loss with its own backward): `Fn.apply(x,
# ...)` runs its `forward` as one recorded operation whose backward is the class's, so
# what it returns is computed from its tensor arguments, with their graph.
AUTOGRAD_FUNCTION_CLASSES = frozenset(
    {"torch.autograd.Function", "torch.autograd.function.Function"}
)
# The class method that runs such a Function.
AUTOGRAD_FUNCTION_RUN = "apply"
# Functions of other tensor libraries that compute a tensor from the tensors handed to
# them, with their graph, as torch's own functions do (einops calls torch underneath:
# `rearrange(out, "b c -> c b")`, `reduce(x, "b c h w -> b c", "mean")`).
GRAPH_PRESERVING_LIBRARY_FUNCTIONS = frozenset(
    {"einops.rearrange", "einops.reduce", "einops.repeat", "einops.einsum", "einops.pack"}
)


# -- nn.Module ----------------------------------------------------------------------------

# nn.Module methods that return the module itself (`model = model.to(device)`,
# `net = Net().apply(init_weights)`).
SELF_RETURNING_MODULE_METHODS = frozenset(
    {"to", "cuda", "cpu", "train", "eval", "float", "double", "half", "bfloat16"}
    | {"to_empty", "requires_grad_", "share_memory", "type", "apply"}
)
# Those that leave the module's train/eval mode as it was: a switch is read through them
# (`model.cuda().eval().half()` switches `model`).
MODE_CARRYING_MODULE_METHODS = SELF_RETURNING_MODULE_METHODS - {"train", "eval"}
# The calls a freshly built module is often wrapped in before it is bound
# (`nn.Linear(4, 2).to(device)`), looked through to see what is built; not
# `requires_grad_`, which freezes what it builds, nor `apply`, whose function may.
MODULE_WRAPPING_METHODS = SELF_RETURNING_MODULE_METHODS - {"requires_grad_", "apply"}
PARAMETER_ITERATORS = frozenset({"parameters", "named_parameters"})
# Calls on a name that show it holds parameters (and their state).
PARAMETER_HOLDING_METHODS = PARAMETER_ITERATORS | frozenset({"state_dict", "modules"})
# nn.Module methods that hand out its submodules, alone or as the second item of a
# `(name, module)` pair: `for layer in net.children(): x = layer(x)` runs its layers.
SUBMODULE_ITERATORS = frozenset({"children", "modules"})
NAMED_SUBMODULE_ITERATORS = frozenset({"named_children", "named_modules"})
# nn.Module's own API: calling one of these is not a forward pass.
MODULE_API = SELF_RETURNING_MODULE_METHODS | frozenset(
    {"parameters", "named_parameters", "buffers", "named_buffers", "children"}
    | {"named_children", "modules", "named_modules", "state_dict", "load_state_dict"}
    | {"zero_grad", "apply", "xpu", "ipu", "register_buffer", "register_parameter"}
    | {"register_module", "add_module", "register_forward_hook", "register_forward_pre_hook"}
    | {"register_full_backward_hook", "register_full_backward_pre_hook"}
    | {"register_backward_hook", "get_submodule", "get_parameter", "get_buffer"}
    | {"extra_repr", "compile", "set_extra_state", "get_extra_state"}
)
# Methods a module class defines that set it up rather than compute with its layers.
MODULE_SETUP_METHODS = frozenset(
    {"forward", "__init__", "reset_parameters", "init_weights", "_init_weights"}
)
# A module's methods that are never a forward pass of it, though they may call its
# layers: its API and its setup (`forward` itself is named as such where it counts).
NOT_FORWARD_METHODS = MODULE_API | MODULE_SETUP_METHODS
# Calls of a module's own methods that may freeze it or hand it to code we cannot see.
# a module's method that puts a checkpoint's weights in it (resuming, or fine-tuning)
STATE_LOADING_METHOD = "load_state_dict"
FREEZING_METHODS = frozenset({"requires_grad_", "apply", "load_state_dict"})
MODULE_MODE_METHODS = frozenset({"train", "eval"})
# What a model built out of sight (a torchvision detector, a loaded checkpoint, one
# handed in by a caller in another file) shows of itself: its parameters asked for or
# cleared, its weights loaded or saved, its mode switched. Something called on inputs
# that has one of these is a module with weights.
PARAMETER_EVIDENCE_METHODS = (
    PARAMETER_HOLDING_METHODS | MODULE_MODE_METHODS | {"zero_grad", "load_state_dict"}
)
# torch.nn containers, called on a list of layers.
CONTAINER_MODULES = frozenset({"Sequential", "ModuleList", "ModuleDict"})
# What fills a torch container module after it is built (`nn.Sequential()`, then
# `net.add_module('fc', nn.Linear(...))`).
CONTAINER_FILLING_METHODS = frozenset(
    {"add_module", "append", "extend", "insert", "register_module"}
)
CONTAINER_CLASSES = frozenset({"torch.nn.ModuleList", "torch.nn.Sequential"})
# Functions of other libraries that run under `no_grad` and return no history (or
# nothing): a value handed to one is read for its values, never differentiated.
# torchvision decorates both with `@torch.no_grad()`.
GRADLESS_LIBRARY_FUNCTIONS = frozenset(
    {"torchvision.utils.save_image", "torchvision.utils.make_grid"}
)
# Methods of TensorBoard's `SummaryWriter` (torch.utils.tensorboard, tensorboardX) that
# log a tensor: each turns it into a numpy array with `make_np`, which detaches it first.
# A value handed to one is read for its values, never differentiated.
SUMMARY_WRITER_METHODS = frozenset(
    {"add_scalar", "add_scalars", "add_image", "add_images", "add_image_with_boxes"}
    | {"add_histogram", "add_video", "add_audio", "add_embedding", "add_pr_curve"}
    | {"add_mesh"}
)
# Tensor methods that neither Python's values nor numpy arrays have: a value made by one
# is a tensor (`img.unsqueeze(0).to(device)`), whatever it was made from.
TENSOR_ONLY_METHODS = frozenset(
    {"unsqueeze", "to", "cuda", "permute", "contiguous", "detach", "float", "half", "long"}
)
# Methods of library models that run under `no_grad` themselves: transformers'
# `GenerationMixin.generate` is decorated with `@torch.no_grad()`. A call of one on a
# model whose class is out of sight records nothing.
GRADLESS_LIBRARY_METHODS = frozenset({"generate"})
# `functools.partial(Model, ...)`: a call of what it makes builds a `Model`.
PARTIAL = "functools.partial"
# Model zoos: a call in one of these namespaces builds a network with weights
# (`torchvision.models.resnet152(pretrained=True)`, `.detection.maskrcnn_resnet50_fpn()`),
# except the ones named here, which list models or their weights.
MODEL_ZOO_NAMESPACES = ("torchvision.models.",)
MODEL_ZOO_NON_MODELS = ("list_", "get_weight", "get_model_weights")
# Builders of networks with weights in other libraries: `timm.create_model("resnet50")`,
# `torch.hub.load(repo, "resnet18")`.
MODEL_BUILDERS = frozenset({"timm.create_model", "torch.hub.load"})
# `from_pretrained` of a model class of these libraries loads a network with weights
# (`AutoModelForSequenceClassification.from_pretrained(name)`, `EfficientNet.from_pretrained`),
# except of a class whose name holds one of the words here: no torch module (tokenizers,
# configs, processors, diffusers' schedulers and pipelines, `AutoPipelineForInpainting`,
# which run under no_grad themselves).
PRETRAINED_LOADER = "from_pretrained"
PRETRAINED_MODEL_LIBRARIES = ("transformers.", "diffusers.", "efficientnet_pytorch.", "peft.")
PRETRAINED_NON_MODELS = (
    "Tokenizer",
    "Config",
    "Processor",
    "FeatureExtractor",
    "Scheduler",
    "Pipeline",
)


# torch functions called for their effect, which hand back None (or a plain value):
# `torch.save(model(x), path)` keeps nothing of what it is given.
EFFECT_FUNCTIONS = frozenset(
    {"torch.save", "torch.manual_seed", "torch.set_printoptions", "torch.set_default_dtype"}
)


def computes_a_tensor(qualified: str | None) -> bool:
    """Is `qualified` (a callee resolved through the imports) a torch function that
    computes a tensor from its arguments: `torch.cat`, `torch.nn.functional.mse_loss`;
    not one called for its effect (`torch.save`), nor one of `torch.testing`'s
    assertions, `torch.utils`' helpers or another namespace's tools?"""
    if qualified is None or qualified in EFFECT_FUNCTIONS:
        return False
    if qualified.startswith("torch.nn.functional."):
        return True
    return qualified.startswith("torch.") and qualified.count(".") == 1


def is_torch_module_base(qualified: str) -> bool:
    """Is `qualified` (a class's base, resolved through the imports) one of torch's
    module classes, so that calling an instance runs the class's `forward` (its own or
    the one it inherits)? `nn.Module` and the other torch.nn classes named `...Module`,
    and every torch.nn layer, container and loss a class may extend: `class
    CModel(nn.Sequential)` hands its layers to the container's `__init__`, `class
    MaskedConv2d(nn.Conv2d)` keeps the convolution's weight, `class
    FocalLoss(nn.CrossEntropyLoss)` computes a loss (tests/test_torch_api.py checks
    each name against torch)."""
    # `nn.Module` unresolved: a file whose `nn` comes in out of sight (a star import)
    if qualified == "nn.Module":
        return True
    if not qualified.startswith("torch.nn."):
        return False
    last = qualified.rsplit(".", 1)[-1]
    return last.endswith(("Module", "Loss")) or last in EXTENSIBLE_LAYERS


def is_torch_container(qualified: str) -> bool:
    """Is `qualified` (resolved through the imports) one of torch.nn's containers
    (`nn.Sequential`, `nn.ModuleList`, `nn.ModuleDict`)?"""
    return qualified.startswith("torch.nn.") and qualified.rsplit(".", 1)[-1] in CONTAINER_MODULES


def torch_base_gives_weights(
    qualified: str, *, own_init: bool, handed: Sequence[str] | None, weights_off: bool
) -> bool:
    """Does a class derived from the torch.nn class `qualified` (a base resolved through
    the imports) hold weights through it? A parametric layer does, unless the class's
    `super().__init__(...)` switches them off (`affine=False`: `weights_off`). A
    container holds what it is handed: without an `__init__` of its own
    (`own_init`), what each construction hands it, which this cannot say (False);
    with one, what its `super().__init__(...)` hands: `handed` gives, for each
    argument, the qualified name of the torch.nn class it builds, or "" for anything
    else (`*layers` a configuration built, a layer of the project), which may hold
    weights; None when no such call is seen. Any other torch.nn class (an activation, a
    loss, InstanceNorm as built by default) holds none."""
    if is_torch_container(qualified):
        return (
            own_init
            and bool(handed)
            and any(not built or torch_base_holds_weights(built) for built in handed or ())
        )
    if not qualified.startswith("torch.nn."):
        return False
    return qualified.rsplit(".", 1)[-1] in PARAMETRIC_LAYERS and not weights_off


def torch_base_holds_weights(qualified: str) -> bool:
    """Does a class derived from `qualified` (a base resolved through the imports) hold
    weights through it: a torch.nn layer that has parameters as built by default, or a
    container, which holds the layers its subclass hands it, as an attribute built as
    one does (`self.body = nn.Sequential(*layers)`)?"""
    if not qualified.startswith("torch.nn."):
        return False
    last = qualified.rsplit(".", 1)[-1]
    return last in PARAMETRIC_LAYERS or last in CONTAINER_MODULES


def torch_base_holds_no_parameters(qualified: str) -> bool:
    """Does a class derived from `qualified` hold no parameters through it: `nn.Module`
    itself, a torch.nn layer without parameters however built, or a loss (a class
    weight is a buffer, not a parameter) other than the two with a layer of their own
    (PARAMETRIC_LAYERS)? What the class adds is its own question."""
    if qualified in ("nn.Module", "torch.nn.Module"):
        return True
    if not qualified.startswith("torch.nn."):
        return False
    last = qualified.rsplit(".", 1)[-1]
    return last in PARAMETERLESS_LAYERS or (last.endswith("Loss") and last not in PARAMETRIC_LAYERS)


def builds_model_with_weights(qualified: str) -> bool:
    """Does a call of `qualified` (resolved through the imports) build a network with
    weights out of torch's own namespace?"""
    if qualified in MODEL_BUILDERS:
        return True
    owner, _, method = qualified.rpartition(".")
    cls = owner.rsplit(".", 1)[-1]
    return (
        method == PRETRAINED_LOADER
        and owner.startswith(PRETRAINED_MODEL_LIBRARIES)
        and not any(word in cls for word in PRETRAINED_NON_MODELS)
    )


def is_model_zoo(qualified: str) -> bool:
    """Is `qualified` a model zoo's namespace itself (`torchvision.models`,
    `torchvision.models.detection`), from which code picks a builder by name
    (`models.__dict__[args.arch](pretrained=True)`, `getattr(models, arch)()`)?"""
    return (qualified + ".").startswith(MODEL_ZOO_NAMESPACES)


# torch.nn wrappers whose parameters are those of the module they are built around
# (`nn.DataParallel(net)`, `DistributedDataParallel(net)`), their first argument.
WRAPPER_MODULES = frozenset({"DataParallel", "DistributedDataParallel"})
# torch.nn layers whose forward may return its input as it is.
PASSTHROUGH_MODULES = CONTAINER_MODULES | frozenset(
    {"Identity", "Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout"}
    | {"FeatureAlphaDropout", "Flatten", "Unflatten", "ParameterList", "ParameterDict"}
    | {"Module"}
)
# torch.nn layers whose `weight` and `bias` are parameters.
WEIGHTED_LAYERS = frozenset(
    {"Linear", "Bilinear", "Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d"}
    | {"ConvTranspose3d", "Embedding", "LayerNorm", "GroupNorm", "BatchNorm1d", "BatchNorm2d"}
    | {"BatchNorm3d", "InstanceNorm1d", "InstanceNorm2d", "PReLU"}
)
# torch.nn layers that are one operation of their input and weight: on an input without
# history, autograd saves the input (for the weight's gradient), not the weight, so an
# optimizer step between the forward and its backward breaks nothing (measured on
# torch 2.13, fixtures/GL011/good_single_layer_on_data.py).
SINGLE_OP_LAYERS = WEIGHTED_LAYERS
# torch.nn activation layers and the function of the saved-tensor table each one runs on
# its input (`nn.Sigmoid()(x)` is `torch.sigmoid(x)`; `nn.ReLU(inplace=True)` returns its
# input rewritten, which relu's backward then needs as it does relu's output).
ACTIVATION_FUNCTIONS = {
    "Sigmoid": "torch.sigmoid",
    "Tanh": "torch.tanh",
    "ReLU": "torch.nn.functional.relu",
    "ReLU6": "torch.nn.functional.relu6",
    "LeakyReLU": "torch.nn.functional.leaky_relu",
    "ELU": "torch.nn.functional.elu",
    "SELU": "torch.nn.functional.selu",
    "GELU": "torch.nn.functional.gelu",
    "SiLU": "torch.nn.functional.silu",
    "Mish": "torch.nn.functional.mish",
    "Softplus": "torch.nn.functional.softplus",
    "Hardtanh": "torch.nn.functional.hardtanh",
    "LogSigmoid": "torch.nn.functional.logsigmoid",
    "Softmax": "torch.nn.functional.softmax",
    "LogSoftmax": "torch.nn.functional.log_softmax",
}
# torch.nn layers that hold parameters as built by default (InstanceNorm's affine
# is off by default, so it holds none).
PARAMETRIC_LAYERS = (
    WEIGHTED_LAYERS - {"InstanceNorm1d", "InstanceNorm2d"}
    | {"LSTM", "GRU", "RNN", "LSTMCell", "GRUCell", "RNNCell", "MultiheadAttention"}
    | {"Transformer", "TransformerEncoder", "TransformerDecoder", "TransformerEncoderLayer"}
    | {"TransformerDecoderLayer", "EmbeddingBag", "LazyLinear", "LazyConv1d", "LazyConv2d"}
    | {"LazyConv3d", "SyncBatchNorm", "RMSNorm"}
    # losses with a layer of their own: an adaptive softmax's clusters, a projection
    | {"AdaptiveLogSoftmaxWithLoss", "LinearCrossEntropyLoss"}
)
# torch.nn layers that hold no parameters however they are built (activations, dropout,
# pooling, padding, resampling and reshaping): called on inputs without history they
# record nothing (tests/test_torch_api.py builds each and counts its parameters).
PARAMETERLESS_LAYERS = (
    frozenset({"ReLU", "ReLU6", "LeakyReLU", "ELU", "SELU", "CELU", "GELU", "GLU", "SiLU"})
    | {"Mish", "Sigmoid", "Tanh", "Softmax", "Softmax2d", "Softmin", "LogSoftmax"}
    | {"LogSigmoid", "Softplus", "Softshrink", "Softsign", "Tanhshrink", "Hardtanh"}
    | {"Hardshrink", "Hardsigmoid", "Hardswish", "Threshold", "RReLU"}
    | {"Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout"}
    | {"FeatureAlphaDropout", "Identity", "Flatten", "Unflatten", "PixelShuffle"}
    | {"PixelUnshuffle", "ChannelShuffle", "Fold", "Unfold", "Upsample"}
    | {"UpsamplingBilinear2d", "UpsamplingNearest2d", "MaxPool1d", "MaxPool2d", "MaxPool3d"}
    | {"AvgPool1d", "AvgPool2d", "AvgPool3d", "AdaptiveAvgPool1d", "AdaptiveAvgPool2d"}
    | {"AdaptiveAvgPool3d", "AdaptiveMaxPool1d", "AdaptiveMaxPool2d", "AdaptiveMaxPool3d"}
    | {"LPPool1d", "LPPool2d", "MaxUnpool1d", "MaxUnpool2d", "MaxUnpool3d", "ZeroPad1d"}
    | {"ZeroPad2d", "ZeroPad3d", "ConstantPad1d", "ConstantPad2d", "ConstantPad3d"}
    | {"ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d", "ReplicationPad1d"}
    | {"ReplicationPad2d", "ReplicationPad3d", "CircularPad1d", "CircularPad2d"}
    | {"CircularPad3d", "CosineSimilarity", "PairwiseDistance", "LocalResponseNorm"}
)
# torch.nn's classes a project's class may extend besides `nn.Module`: its layers and
# containers (the ones named `...Module` and `...Loss` are known by their names).
EXTENSIBLE_LAYERS = (
    PARAMETRIC_LAYERS | PARAMETERLESS_LAYERS | WEIGHTED_LAYERS | CONTAINER_MODULES | WRAPPER_MODULES
)
# torch.nn layers whose forward returns a tuple.
TUPLE_MODULES = frozenset({"LSTM", "GRU", "RNN", "LSTMCell", "MultiheadAttention", "Transformer"})
# Recurrent modules that return the new hidden state as one tensor (or unpacked pair).
SINGLE_STATE_RECURRENT = frozenset({"torch.nn.GRU", "torch.nn.RNN", "torch.nn.LSTMCell"})
# Constructor flags that leave a weighted torch.nn layer without trainable parameters.
NO_AFFINE_FLAGS = frozenset({"affine", "elementwise_affine", "_freeze"})

# -- train and eval mode ------------------------------------------------------------------

# torch.nn layers whose output depends on train/eval mode, each with the constructor
# argument that decides whether it does as built: (keyword, position, default); it does
# when that argument is true or non-zero (`Dropout(p=0.0)`, an LSTM without `dropout`,
# `BatchNorm(track_running_stats=False)`, an InstanceNorm without running statistics do
# not). None: always (RReLU's random slopes). Dropout zeroes in training and is the
# identity in eval; batch norm normalises with the batch's statistics and updates its
# running ones in training, with the running ones in eval. The other torch.nn layers do
# not read the mode (tests/test_torch_api.py checks both against the installed torch).
# TransformerEncoder and TransformerDecoder are containers of the layer they are given.
_BATCH_NORM = ("track_running_stats", 4, True)
_INSTANCE_NORM = ("track_running_stats", 4, False)
MODE_DEPENDENT_LAYERS: dict[str, tuple[str, int, object] | None] = {
    "Dropout": ("p", 0, 0.5),
    "Dropout1d": ("p", 0, 0.5),
    "Dropout2d": ("p", 0, 0.5),
    "Dropout3d": ("p", 0, 0.5),
    "AlphaDropout": ("p", 0, 0.5),
    "FeatureAlphaDropout": ("p", 0, 0.5),
    "BatchNorm1d": _BATCH_NORM,
    "BatchNorm2d": _BATCH_NORM,
    "BatchNorm3d": _BATCH_NORM,
    "SyncBatchNorm": _BATCH_NORM,
    "LazyBatchNorm1d": ("track_running_stats", 3, True),
    "LazyBatchNorm2d": ("track_running_stats", 3, True),
    "LazyBatchNorm3d": ("track_running_stats", 3, True),
    "InstanceNorm1d": _INSTANCE_NORM,
    "InstanceNorm2d": _INSTANCE_NORM,
    "InstanceNorm3d": _INSTANCE_NORM,
    "LazyInstanceNorm1d": ("track_running_stats", 3, True),
    "LazyInstanceNorm2d": ("track_running_stats", 3, True),
    "LazyInstanceNorm3d": ("track_running_stats", 3, True),
    "RNN": ("dropout", 6, 0.0),
    "LSTM": ("dropout", 5, 0.0),
    "GRU": ("dropout", 5, 0.0),
    "MultiheadAttention": ("dropout", 2, 0.0),
    "Transformer": ("dropout", 5, 0.1),
    "TransformerEncoderLayer": ("dropout", 3, 0.1),
    "TransformerDecoderLayer": ("dropout", 3, 0.1),
    "RReLU": None,
}
# torch.nn modules built around the layer (or layers) they are given: as mode-dependent
# as what they hold.
MODE_HOLDING_MODULES = (
    CONTAINER_MODULES | WRAPPER_MODULES | {"TransformerEncoder", "TransformerDecoder"}
)
# Methods that put a module into a list or a module (`layers.append(m)`,
# `self.add_module(name, m)`).
MODULE_HOLDING_METHODS = frozenset({"append", "extend", "insert", "add_module", "register_module"})
# Functions that make a module mode-dependent: spectral norm runs its power iteration
# only in training mode.
MODE_DEPENDENT_FUNCTIONS = frozenset(
    {"torch.nn.utils.spectral_norm", "torch.nn.utils.parametrizations.spectral_norm"}
)
# torch.nn.functional calls with a `training` argument: they depend on the module's mode
# only when handed one that is not a constant (`training=self.training`, which a read of
# `self.training` shows anyway); as written with the default they never read it.
MODE_ARGUMENT_FUNCTIONALS = frozenset(
    {"dropout", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout"}
    | {"feature_alpha_dropout", "batch_norm", "rrelu"}
)
# Calls that return a module built out of sight: loaded from a file or a hub.
MODULE_LOADERS = ("torch.load", "torch.hub.load", "torch.jit.load")
# Of those, the ones whose model comes back as it was trained, its parameters requiring
# grad: a pickled nn.Module, a hub model. A TorchScript file is often exported frozen for
# inference (`torch.jit.freeze`, `optimize_for_inference`), its weights then constants.
TRAINED_MODEL_LOADERS = ("torch.load", "torch.hub.load")
# Calls that hand back an object whose class is imported by name, out of sight of the
# file's imports: an unpickled model, a module imported from a string.
OBJECT_LOADERS = (
    *MODULE_LOADERS,
    *("pickle.load", "pickle.loads", "dill.load", "dill.loads", "cloudpickle.load"),
    *("joblib.load", "importlib.import_module"),
)
# Model-zoo builders whose models have no batch norm and no dropout as built (ViT:
# dropout 0 by default); every other torchvision.models builder has batch norm,
# dropout or stochastic depth.
MODEL_ZOO_MODE_FREE = ("vit_",)
# A constant argument's value when it is not a constant (a name, a call); an argument
# list's `*args` or `**kwargs`, which may hold any argument.
NOT_CONSTANT = object()
UNPACKED = "*"


def built_mode_dependent(
    layer: str, positional: list[object], keywords: dict[str, object]
) -> bool | None:
    """Does the torch.nn layer `layer` (its class name), built with these constant
    arguments (NOT_CONSTANT for one that is not; UNPACKED for `*args` among the
    positional ones, as a key for `**kwargs`), depend on train/eval mode? None when an
    argument that decides it is not a constant, or may be in what is unpacked."""
    if layer not in MODE_DEPENDENT_LAYERS:
        return False
    deciding = MODE_DEPENDENT_LAYERS[layer]
    if deciding is None:
        return True
    keyword, position, default = deciding
    unpacked = UNPACKED in positional[: position + 1]
    if keyword in keywords:
        value = keywords[keyword]
    elif unpacked or UNPACKED in keywords:
        return None
    elif len(positional) > position:
        value = positional[position]
    else:
        value = default
    if value is NOT_CONSTANT:
        return None
    return bool(value)


# -- grad mode ----------------------------------------------------------------------------

# Where the grad-mode managers live (`torch.no_grad`, `torch.autograd.grad_mode.no_grad`).
GRAD_MODE_MODULES = ("torch.", "torch.autograd.", "torch.autograd.grad_mode.")
GRAD_DISABLERS = frozenset({"no_grad", "inference_mode"})
GRAD_ENABLERS = frozenset({"enable_grad"})
GRAD_MODE_SETTER = "set_grad_enabled"
# Calling these creates a context manager (or decorator); only `with` enters it.
GRAD_MODE_MANAGERS = GRAD_DISABLERS | GRAD_ENABLERS
# Every grad-mode switch, the setter included (`set_grad_enabled(False)` switches at once).
GRAD_MODE_NAMES = GRAD_MODE_MANAGERS | {GRAD_MODE_SETTER}
# Those that may turn recording on inside a region.
GRAD_RECORDING_SWITCHES = GRAD_ENABLERS | {GRAD_MODE_SETTER}
# Trainer hooks (PyTorch Lightning) that the framework calls under no_grad / inference_mode:
# the evaluation loop's `run` is wrapped whole (`_no_grad_context`), its start and end hooks
# included.
NO_GRAD_HOOKS = frozenset(
    {"validation_step", "test_step", "predict_step", "on_validation_batch_end"}
    | {"on_test_batch_end", "on_predict_batch_end", "validation_epoch_end", "test_epoch_end"}
    | {"on_validation_batch_start", "on_test_batch_start", "on_predict_batch_start"}
    | {"on_validation_start", "on_validation_epoch_start", "on_validation_epoch_end"}
    | {"on_validation_end", "on_test_start", "on_test_epoch_start", "on_test_epoch_end"}
    | {"on_test_end", "on_predict_start", "on_predict_epoch_start", "on_predict_epoch_end"}
    | {"on_predict_end"}
)

# -- differentiation and optimizers -------------------------------------------------------

AUTOGRAD_GRAD = frozenset({"torch.autograd.grad", "torch.autograd.grad_mode.grad"})
AUTOGRAD_BACKWARD = frozenset({"torch.autograd.backward"})
# `loss.backward()`, and the wrappers that take the loss (`accelerator.backward(loss)`,
# `fabric.backward(loss)`, Lightning's `self.manual_backward(loss)`).
# Decorators under which what a function returns reaches its callers unchanged. Any
# other (a project's `@StaticCaptureTraining(model=..., optim=...)`, a timer, a tracer)
# wraps the call: what it does with the result, a backward among others, is out of
# sight. Grad-mode managers (`@torch.no_grad()`) change the mode, not the result.
RESULT_PRESERVING_DECORATORS = frozenset(
    {
        "staticmethod",
        "classmethod",
        "property",
        "functools.wraps",
        "functools.cache",
        "functools.lru_cache",
        "functools.cached_property",
        "abc.abstractmethod",
        "typing.overload",
        "typing.final",
        "torch.jit.export",
        "torch.jit.ignore",
        "torch.jit.unused",
        "torch.compile",
    }
)

BACKWARD_METHODS = frozenset({"backward", "manual_backward"})
# Receivers of `.backward(loss)` that are a framework object, not a tensor.
BACKWARD_WRAPPER_RECEIVERS = frozenset(
    {"self", "accelerator", "fabric", "engine", "model_engine", "trainer"}
)
# A training framework's collectives (Accelerate's, Fabric's) hand back their input's
# values gathered or reduced across processes: no more history than the input has
# (`total_loss += accelerator.reduce(loss.detach().float())` adds none).
FRAMEWORK_RECEIVERS = frozenset({"accelerator", "fabric"})
FRAMEWORK_COLLECTIVES = frozenset(
    {"reduce", "gather", "gather_for_metrics", "pad_across_processes", "all_gather", "all_reduce"}
)
OPTIMIZER_STEP = "step"
# Methods and helper names that clear gradients (torch, and the Paddle/Chainer spellings).
GRAD_CLEARING_NAMES = frozenset(
    {"zero_grad", "zero_grads", "zero_gradients", "clear_grad", "clear_grads"}
    | {"clear_gradients", "cleargrads", "reset_grad", "reset_grads", "reset_gradients"}
)
# Context-manager methods inside which a framework accumulates for you: under
# Accelerate's `accelerator.accumulate(model)` the prepared optimizer's `step()` and
# `zero_grad()` act only on the micro-batch that ends the window.
ACCUMULATING_CONTEXTS = frozenset({"accumulate"})
# Parts of a name that say a test counts micro-batches (`accumulation_steps`,
# `grad_accum`, `self.accumulate_every`).
ACCUMULATION_WORDS = ("accum",)
# Container methods that add a value to what the container keeps (`losses.append(loss)`).
ACCUMULATING_METHODS = frozenset({"append", "extend", "insert", "add"})
# Calls that hand a tensor to an optimizer or module after it was built.
PARAMETER_REGISTERING_METHODS = frozenset({"register_parameter", "add_param_group"})
# Optimizer classes, torch.optim's and others built the same way (params first).
OPTIMIZER_CLASSES = frozenset(
    {"SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta", "Adamax", "NAdam", "RAdam"}
    | {"ASGD", "Rprop", "LBFGS", "SparseAdam", "Adafactor", "Lion", "LAMB", "Lamb", "LARS"}
    | {"FusedAdam", "FusedLAMB", "FusedSGD", "AdamW8bit", "Adam8bit", "Muon", "Shampoo"}
)
# What a training step asks of an optimizer (`self.critic.optimizer.step()`).
OPTIMIZER_STEP_METHODS = frozenset({"zero_grad", "step"})
OPTIMIZER_METHODS = OPTIMIZER_STEP_METHODS | {"state_dict", "load_state_dict"}
# Where optimizers and learning-rate schedulers are built: their classes make objects.
OPTIMIZER_NAMESPACES = ("torch.optim.",)

# -- saved tensors (GL009's inference-tensor check) ---------------------------------------

# Operations that save an operand for backward when the other one requires grad, so an
# inference tensor there raises at once. Measured on torch 2.13 (tests/test_gl009_table.py
# runs each against the installed torch); `+`, `-`, `**` of a difference, `l1_loss`,
# `cosine_similarity` and `cross_entropy` with probabilities save no such operand and
# work, so they are not listed.
SAVING_METHODS = frozenset({"mul", "div", "matmul", "mm", "bmm"})
SAVING_FUNCTIONS = frozenset({f"torch.{m}" for m in SAVING_METHODS})
# Losses of (input, target) that save the target: input requires grad, target inference.
TARGET_SAVING_LOSSES = frozenset(
    {"mse_loss", "smooth_l1_loss", "huber_loss", "binary_cross_entropy"}
    | {"binary_cross_entropy_with_logits", "kl_div", "nll_loss"}
)
TARGET_SAVING_LOSS_MODULES = frozenset(
    {"MSELoss", "SmoothL1Loss", "HuberLoss", "BCELoss", "BCEWithLogitsLoss", "KLDivLoss"}
    | {"NLLLoss"}
)

# -- losses against a target (GL013) ---------------------------------------------------

# Losses of (input, target) whose target may be a value to regress on (a TD target, a
# teacher's output, features of a reference network), each as torch.nn.functional names
# it and as the module class that computes it. Gradient through the target is never
# what these losses mean: the target stands still while the input moves towards it.
REGRESSION_LOSSES = frozenset(
    {"mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss", "kl_div"}
    | {"binary_cross_entropy", "binary_cross_entropy_with_logits", "cross_entropy"}
)
REGRESSION_LOSS_MODULES = frozenset(
    {"MSELoss", "L1Loss", "SmoothL1Loss", "HuberLoss", "KLDivLoss", "BCELoss"}
    | {"BCEWithLogitsLoss", "CrossEntropyLoss"}
)


def is_regression_loss(qualified: str) -> bool:
    """A loss of (input, target) whose target stands still, as torch.nn.functional names
    it (`torch.nn.functional.mse_loss`) or as the module class that computes it
    (`torch.nn.MSELoss`)."""
    if qualified.startswith("torch.nn.functional."):
        return qualified.rsplit(".", 1)[-1] in REGRESSION_LOSSES
    return (
        qualified.startswith("torch.nn.")
        and qualified.rsplit(".", 1)[-1] in REGRESSION_LOSS_MODULES
    )


# Tensor methods and torch functions that square or take the size of a difference:
# `(q - target).pow(2)`, `torch.square(q - target)`, the hand-written regression loss.
# The regression losses that are symmetric in their two operands: `F.mse_loss(target, q)`
# computes what `F.mse_loss(q, target)` does, so the order written says nothing about
# which operand is the target (the hand-written `(target - q) ** 2` neither).
SYMMETRIC_REGRESSION_LOSSES = frozenset({"mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss"})
SYMMETRIC_REGRESSION_LOSS_MODULES = frozenset({"MSELoss", "L1Loss", "SmoothL1Loss", "HuberLoss"})
SQUARING_METHODS = frozenset({"pow", "square", "abs"})
SQUARING_FUNCTIONS = frozenset({"torch.square", "torch.abs", "torch.pow"})
# Tensor methods that make a new tensor of the receiver's dtype and device, without
# its values or history (`pred.new_ones(n)`: a label built from a network's output);
# `new` is the legacy spelling (`batch.data.new(batch.size())`, uninitialised).
FRESH_TENSOR_METHODS = frozenset(
    {"new_ones", "new_zeros", "new_full", "new_empty", "new_tensor", "new"}
)
# Reductions that hand back (values, indices) as well as VALUES_AND_INDICES_METHODS do
# when given a dimension: `q.max(1)[1]` is the chosen action, without history.
MAX_MIN_METHODS = frozenset({"max", "min"})
MAX_MIN_FUNCTIONS = frozenset({"torch.max", "torch.min"})
REDUCTIONS_WITH_INDICES = VALUES_AND_INDICES_METHODS | MAX_MIN_METHODS
# Tensor methods whose tensor arguments give only a shape, dtype or device
# (`t.expand_as(other)`): no gradient flows to them.
SHAPE_ONLY_ARGUMENT_METHODS = frozenset({"expand_as", "view_as", "reshape_as", "type_as", "to"})
# Reductions that turn a squared difference into a loss: `((q - target) ** 2).mean()`.
LOSS_REDUCTION_METHODS = frozenset({"mean", "sum"})
LOSS_REDUCTION_FUNCTIONS = frozenset({"torch.mean", "torch.sum"})
# Functions that take only integer tensors (`F.one_hot(best_action, n)`): neither what
# they are given nor what they return can carry a gradient.
INTEGER_INPUT_FUNCTIONS = frozenset({"torch.nn.functional.one_hot"})
# The calls that copy a module with its parameters, which keep requiring grad.
# Functions that run the module handed to them first on the tensors that follow: torch's
# own `nn.parallel.data_parallel(net, inputs, gpus)` (a forward replicated over devices),
# and other libraries' solvers of an ODE's or an SDE's vector field, many times over.
# What they return carries the module's history, as a forward's output does.
MODULE_RUNNING_FUNCTIONS = frozenset(
    {"torch.nn.parallel.data_parallel", "torch.nn.parallel.data_parallel.data_parallel"}
    | {"torchdiffeq.odeint", "torchdiffeq.odeint_adjoint", "torchdiffeq.odeint_event"}
    | {"torchsde.sdeint", "torchsde.sdeint_adjoint", "torchcde.cdeint"}
)
MODULE_COPYING_FUNCTIONS = frozenset({"copy.deepcopy", "copy.copy"})
# Of those, the ones whose copy shares no parameter with the module given.
DEEP_COPYING_FUNCTIONS = frozenset({"copy.deepcopy"})
# Functions that hand back a module holding the parameters of the one given first (or a
# copy of them), which still require grad: compiled, scripted, traced, copied, or
# reparametrised (measured on torch 2.13: tests/test_torch_api.py builds each).
MODULE_PRESERVING_FUNCTIONS = MODULE_COPYING_FUNCTIONS | frozenset(
    {"torch.compile", "torch.jit.script", "torch.jit.trace"}
    | {"torch.nn.utils.spectral_norm", "torch.nn.utils.weight_norm"}
    | {"torch.nn.utils.parametrizations.spectral_norm"}
    | {"torch.nn.utils.parametrizations.weight_norm"}
    | {"torch.nn.SyncBatchNorm.convert_sync_batchnorm"}
)

# -- checkpoint ---------------------------------------------------------------------------

CHECKPOINT_FUNCTIONS = frozenset({"torch.utils.checkpoint.checkpoint"})
CHECKPOINT_SEQUENTIAL_FUNCTIONS = frozenset({"torch.utils.checkpoint.checkpoint_sequential"})
# Keywords the reentrant variant accepts; any other one makes it raise ValueError (or,
# as `**kwargs`, may carry `use_reentrant` itself).
CHECKPOINT_KEYWORDS = frozenset(
    {"use_reentrant", "preserve_rng_state", "determinism_check", "early_stop"}
)
CHECKPOINT_SEQUENTIAL_KEYWORDS = frozenset(
    {"use_reentrant", "preserve_rng_state", "segments", "input"}
)

# -- torch namespaces ---------------------------------------------------------------------

# torch namespaces whose calls are not plain tensor computations (they build modules,
# load saved tensors, or run user code); torch.nn.functional is the exception.
NOT_COMPUTATION_NAMESPACES = (
    "torch.nn.",
    "torch.autograd.",
    "torch.utils.",
    "torch.optim.",
    "torch.func.",
    "torch.jit.",
    "torch.hub.",
    "torch.distributed.",
    "torch.cuda.",
    "torch.fx.",
    "torch.export.",
    "torch.compile",
    "torch.load",
)
# torch namespaces whose functions do not just compute a tensor from their arguments:
# they differentiate, sample from a distribution that a log-probability may be taken
# of, save, trace or hand the value to other code.
# torch namespaces whose functions use the graph of what they are given: a value that
# reaches one is expected to have history, even after a `.detach()`.
DIFFERENTIATING_NAMESPACES = (
    "torch.autograd.",
    "torch.utils.checkpoint",
    "torch.optim.",
    "torch.func.",
    "torch.nn.Parameter",
)
ESCAPING_NAMESPACES = (
    "torch.autograd.",
    "torch.distributions.",
    "torch.utils.",
    "torch.optim.",
    "torch.func.",
    "torch.jit.",
    "torch.save",
    "torch.distributed.",
    "torch.nn.utils.",
    "torch.nn.init.",
    "torch.nn.Parameter",
    "torch.cuda.",
    "torch.compile",
)
# torch.nn names that are not module classes.
NOT_MODULE_NAMESPACES = (
    "torch.nn.functional",
    "torch.nn.init",
    "torch.nn.utils",
    "torch.nn.Parameter",
)
# torch namespaces whose calls make no tensor.
NOT_TENSOR_NAMESPACES = ("torch.nn.", "torch.optim.", "torch.utils.", "torch.cuda.", "torch.device")

# -- registration of parameters (GL017) -----------------------------------------------
# Module methods that register a value under a name at run time (a loop over a plain
# list calling one of them registers its elements).
REGISTERING_METHODS = frozenset(
    {"add_module", "register_module", "register_parameter", "__setattr__"}
)
# Builtins that only iterate or measure a container: a list handed to them stays here.
SEQUENCE_BUILTINS = frozenset({"len", "enumerate", "zip", "reversed", "iter", "list", "tuple"})
# The methods of a plain list (dict) that nn.ModuleList (nn.ModuleDict) has too.
MODULE_LIST_METHODS = frozenset({"append", "extend", "insert"})
MODULE_DICT_METHODS = frozenset({"keys", "values", "items", "pop", "update"})
# What registers what a plain container holds: (held, container) -> torch.nn class.
UNREGISTERED_WRAPPERS = {
    ("modules", "list"): "ModuleList",
    ("modules", "tuple"): "ModuleList",
    ("modules", "dict"): "ModuleDict",
    ("parameters", "list"): "ParameterList",
    ("parameters", "tuple"): "ParameterList",
    ("parameters", "dict"): "ParameterDict",
    ("tensor", "tensor"): "Parameter",
}


def called_implicitly(name: str) -> bool:
    """A method Python or torch calls without naming it (`model(x)` runs `forward`,
    `len(d)` runs `__len__`): its calls cannot be found by its name."""
    return name == "forward" or (name.startswith("__") and name.endswith("__"))


# Methods through which a container comes to hold a value.
STORING_METHODS = frozenset({"append", "extend", "insert", "add", "put", "update", "setdefault"})
# Of those, the ones whose last argument is the one element they put in the container.
ELEMENT_STORING_METHODS = frozenset({"append", "add", "insert", "put"})
# Builtins that read or write an object's attributes by a computed name, and the
# attribute that holds them all: where a class uses them on `self`, which attribute a
# read names cannot be told from the text.
REFLECTIVE_BUILTINS = frozenset({"getattr", "setattr", "delattr", "vars"})
INSTANCE_DICT_ATTRIBUTE = "__dict__"
# Methods by which a class takes over the reading or writing of its attributes.
ATTRIBUTE_HOOK_METHODS = frozenset({"__getattr__", "__getattribute__", "__setattr__"})

# Methods of a number, an array or a tensor that compute a value of the same kind from it
# alone, without arguments: `image.min()`, `x.abs()` (a helper made of them and of
# arithmetic on its parameters hands back what its arguments are: analysis.values).
VALUE_OF_SELF_METHODS = frozenset(
    {"min", "max", "mean", "sum", "std", "var", "abs", "sqrt", "exp", "log", "norm"}
)

# Methods of a value handed to a function that are no forward of a module it may be
# (`model.predict(seq)` and `policy.act(obs)` are): the nn.Module API, an optimizer's or
# a container's methods, and the tensor methods of everyday code (analysis.summary_facts).
NOT_A_HANDED_FORWARD = (
    NOT_FORWARD_METHODS
    | OPTIMIZER_METHODS
    | STORING_METHODS
    | MODULE_DICT_METHODS
    | COMMON_TENSOR_METHODS
    | ALIASING_CALLS
    | GRAPH_CUTTING_METHODS
    | BACKWARD_METHODS
    | frozenset({"get", "pop", "copy", "keys", "values", "items", "format", "join"})
)
