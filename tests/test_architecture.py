"""The house: no import cycles inside gradlint/, counting imports inside functions and
under TYPE_CHECKING too (a lazy import only hides a cycle, it does not remove it)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "gradlint"


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph() -> dict[str, set[str]]:
    modules = {module_name(p): p for p in PACKAGE.rglob("*.py")}
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                    base = ".".join(anchor + ([base] if base else []))
                targets = [base] + [f"{base}.{alias.name}" for alias in node.names]
            for target in targets:
                # `import gradlint.analysis.index` also imports gradlint and gradlint.analysis
                while target and target not in modules:
                    target = target.rpartition(".")[0]
                if target and target != name and not name.startswith(target + "."):
                    graph[name].add(target)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, successors = work[-1]
            advanced = False
            for succ in successors:
                if succ not in index:
                    index[succ] = low[succ] = counter
                    counter += 1
                    stack.append(succ)
                    on_stack.add(succ)
                    work.append((succ, iter(sorted(graph[succ]))))
                    advanced = True
                    break
                if succ in on_stack:
                    low[node] = min(low[node], index[succ])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_no_import_cycles_inside_gradlint():
    assert cycles(import_graph()) == []


def test_the_cycle_finder_finds_a_cycle():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(graph) == [["a", "b", "c"]]


def test_layers_import_only_downwards():
    """Rules and analysis never import the engine or a front; nothing imports the CLI."""
    graph = import_graph()
    fronts = {"gradlint.cli", "gradlint.lsp", "gradlint.flake8_plugin", "gradlint.engine"}
    for name, imports in graph.items():
        if name.startswith(("gradlint.rules", "gradlint.analysis")):
            assert not imports & fronts, (name, imports & fronts)
        if name != "gradlint.__main__":
            assert "gradlint.cli" not in imports, name


def test_every_finding_carries_a_filled_message_and_its_rules_fix_safety():
    """Over every bad fixture: no `{placeholder}` reaches a user, and each fix has the
    applicability its rule class declares (declared once, not hard-coded per fix)."""
    from gradlint.engine import lint_file, rule_by_code

    fixtures = Path(__file__).resolve().parent.parent / "fixtures"
    seen: set[str] = set()
    for path in sorted(fixtures.glob("GL*/bad_*.py")):
        if path.name.endswith(".fixed.py"):
            continue
        for diagnostic in lint_file(path).diagnostics:
            seen.add(diagnostic.code)
            assert "{" not in diagnostic.message and "}" not in diagnostic.message, diagnostic
            rule = rule_by_code(diagnostic.code)
            assert rule is not None
            if diagnostic.fix is not None:
                assert diagnostic.fix.applicability is rule.fix_applicability, diagnostic
    assert seen, "no bad fixture produced a finding"


def test_a_message_with_a_missing_field_is_refused():
    import pytest

    from gradlint.rules import ALL_RULES

    rule_class = next(r for r in ALL_RULES if r.placeholders())
    rule = rule_class.__new__(rule_class)
    with pytest.raises(TypeError):
        rule.message_for()
    with pytest.raises(TypeError):
        rule.report(None)  # type: ignore[arg-type]


def test_every_libcst_class_the_analysis_tests_by_exact_type_has_no_subclass():
    # The analysis writes `type(node) is cst.Name` where isinstance would pay for
    # LibCST's ABCs on every node; that is the same test only while no LibCST node
    # class derives from a concrete one. A LibCST upgrade that adds one fails here.
    import inspect
    import re

    import libcst as cst

    from gradlint.analysis.index import node_types

    used: set[str] = set()
    for path in (Path(__file__).resolve().parents[1] / "gradlint").rglob("*.py"):
        used.update(re.findall(r"type\([^()]*\) is (?:not )?cst\.(\w+)", path.read_text()))
    assert {"Name", "Attribute", "Call", "FunctionDef"} <= used
    subclassed = {
        name
        for name in used
        if inspect.isclass(getattr(cst, name))
        and node_types(getattr(cst, name)) != {getattr(cst, name)}
    }
    assert subclassed == set()


def test_node_types_are_what_isinstance_accepts():
    import libcst as cst

    from gradlint.analysis.index import STATEMENTS, node_types

    module = cst.parse_module("import a\nfor x in y:\n    z = f(x)\n")
    for node in (module.body[0], module.body[1], cst.Name("n")):
        for base in (cst.BaseStatement, cst.BaseExpression, cst.CSTNode, cst.Name):
            assert (type(node) in node_types(base)) == isinstance(node, base)
    small = cst.ensure_type(module.body[0], cst.SimpleStatementLine).body[0]
    assert type(small) in STATEMENTS and type(module.body[1]) in STATEMENTS


# -- one torch vocabulary -------------------------------------------------------------

# A name as code spells it: `detach`, `torch.no_grad`, a namespace prefix `torch.nn.`.
_NAME = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*\.?\Z")
# Text prefilters: tokens a file's text must contain, not what a call does.
_TOKEN_ATTRIBUTES = {"trigger_tokens", "also_needs_tokens"}
# Lists of names that are not torch API, each keyed by (module, its first name).
NOT_TORCH_LISTS = {
    ("gradlint/analysis/frameworks.py", "paddle"): "other frameworks' module names",
    ("gradlint/analysis/index.py", "lpar"): "LibCST node fields",
    ("gradlint/analysis/project.py", "body"): "ast statement-list fields",
    ("gradlint/analysis/project.py", "identifier"): "ast grammar types of plain fields",
    ("gradlint/analysis/project.py", "expr_context"): "ast grammar types of leaf fields",
    ("gradlint/analysis/imports.py", "body"): "ast statement-list fields",
    ("gradlint/analysis/saved.py", "grad"): "kinds of operand in saved_tensors.json",
    ("gradlint/analysis/values.py", "load"): "names of a class's factory methods",
    ("gradlint/analysis/impact.py", "tests"): "names of test folders",
    ("gradlint/rules/consequences.py", "crash"): "gradlint's consequence groups",
}


def name_lists(source: str) -> list[tuple[int, list[str]]]:
    """Literals (set, frozenset, tuple, list, or `"a b c".split()`) of three or more
    names that are not all Python builtins, outside the rules' text prefilters."""
    import builtins

    tree = ast.parse(source)
    prefilters = {
        id(node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Assign)
        and any(isinstance(t, ast.Name) and t.id in _TOKEN_ATTRIBUTES for t in node.targets)
    }
    found = []
    for node in ast.walk(tree):
        names: list[str] | None = None
        if isinstance(node, (ast.Set, ast.Tuple, ast.List)) and id(node) not in prefilters:
            if all(isinstance(e, ast.Constant) and isinstance(e.value, str) for e in node.elts):
                names = [e.value for e in node.elts]  # type: ignore[attr-defined]
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "split"
            and isinstance(node.func.value, ast.Constant)
            and isinstance(node.func.value.value, str)
            and not node.args
        ):
            names = node.func.value.value.split()
        if (
            names
            and len(names) >= 3
            and all(_NAME.match(n) for n in names)
            and not set(names) <= set(dir(builtins))
        ):
            found.append((node.lineno, names))
    return found


def test_torch_api_names_live_only_in_torch_api():
    """What a torch call does is said once, in gradlint/analysis/torch_api.py: no other
    rule or analysis module holds a list of torch names of its own."""
    root = PACKAGE.parent
    scattered = []
    used = set()
    for folder in ("rules", "analysis"):
        for path in sorted((PACKAGE / folder).glob("*.py")):
            if path.name == "torch_api.py":
                continue
            relative = path.relative_to(root).as_posix()
            for lineno, names in name_lists(path.read_text(encoding="utf-8")):
                key = (relative, names[0])
                if key in NOT_TORCH_LISTS:
                    used.add(key)
                else:
                    scattered.append(f"{relative}:{lineno}: {names[:4]}")
    assert scattered == [], "move these to gradlint/analysis/torch_api.py"
    assert used == set(NOT_TORCH_LISTS), "stale allow-list entries"


def small_name_sets(source: str) -> list[tuple[int, frozenset[str]]]:
    """Literal sets of names of any size, `frozenset({"eval", "train"})` or a tuple in a
    membership test (`in ("eval", "train")`): what two names are enough to repeat."""
    tree = ast.parse(source)
    found = []
    for node in ast.walk(tree):
        elements = None
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "frozenset"
            and len(node.args) == 1
            and isinstance(node.args[0], ast.Set)
        ):
            elements = node.args[0].elts
        elif isinstance(node, ast.Compare) and isinstance(node.ops[0], (ast.In, ast.NotIn)):
            if isinstance(node.comparators[0], (ast.Tuple, ast.Set)):
                elements = node.comparators[0].elts
        if elements and all(
            isinstance(e, ast.Constant) and isinstance(e.value, str) for e in elements
        ):
            names = frozenset(e.value for e in elements)  # type: ignore[attr-defined]
            if len(names) >= 2 and all(_NAME.match(n) for n in names):
                found.append((node.lineno, names))
    return found


def test_no_module_repeats_a_set_torch_api_names():
    """A set of names torch_api already holds (`{"eval", "train"}`, `{"zip", "enumerate"}`)
    is read from there, even when it is too short for the name-list check above: two
    copies of one set drift apart."""
    from gradlint.analysis import torch_api

    named = {
        value: name
        for name, value in vars(torch_api).items()
        if name.isupper() and isinstance(value, frozenset) and len(value) >= 2
    }
    repeated = []
    for folder in ("rules", "analysis"):
        for path in sorted((PACKAGE / folder).glob("*.py")):
            if path.name == "torch_api.py":
                continue
            for lineno, names in small_name_sets(path.read_text(encoding="utf-8")):
                if names in named:
                    repeated.append(f"{path.name}:{lineno}: torch_api.{named[names]}")
    assert repeated == []


def test_the_small_set_finder_finds_repeats():
    source = (
        'A = frozenset({"eval", "train"})\n'
        'ok = name in ("eval", "train")\n'
        'B = frozenset({"a b", "c"})\n'  # not names
        "C = frozenset({1, 2})\n"
    )
    assert [names for _, names in small_name_sets(source)] == [
        frozenset({"eval", "train"}),
        frozenset({"eval", "train"}),
    ]


def test_the_name_list_finder_finds_lists():
    source = (
        'A = frozenset({"detach", "item", "tolist"})\n'
        'B = ("torch.nn.", "torch.optim.", "torch.utils.")\n'
        'C = frozenset("eval train zero_grad".split())\n'
        'D = ("print", "len", "zip")\n'  # builtins only
        'E = ("a b", "c", "d")\n'  # not names
        "class R:\n    trigger_tokens = ('backward', 'autograd', 'step')\n"
    )
    assert sorted(lineno for lineno, _ in name_lists(source)) == [1, 2, 3]


# -- one binding table ----------------------------------------------------------------

# Functions that walk the tree and read assignment targets without being a scope's
# binding table: each reads another fact, keyed by (module, function).
NOT_BINDING_TABLES = {
    ("gradlint/analysis/bindings.py", "uses"): "the one table's reads, which skip targets",
    ("gradlint/analysis/values.py", "_collect_mutated"): "in-place changes, not bindings",
    ("gradlint/analysis/values.py", "_stored_into"): "writes into containers, nested "
    "functions included",
    ("gradlint/analysis/tensors.py", "_is_container_layer_parameter"): "a class's "
    "`self.x = nn.ModuleList(...)`",
    ("gradlint/analysis/tensors.py", "_class_attributes"): "a class's `self.x` attributes",
    ("gradlint/analysis/tensors.py", "_self_assignments"): "a class's `self.x` attributes",
    ("gradlint/analysis/forwards.py", "_made_to_require_grad"): "`x.requires_grad = ...`",
    ("gradlint/analysis/forwards.py", "_module_attributes"): "a class's `self.x` modules",
    ("gradlint/analysis/registration.py", "_in_class"): "a class's `self.x` attributes",
    ("gradlint/analysis/registration.py", "_added_elements"): "writes into `self.x`",
    ("gradlint/analysis/registration.py", "_single_local_value"): "every use of one name",
    ("gradlint/analysis/train_mode.py", "_assigns"): "a method's `self.x = ...`",
    ("gradlint/analysis/grad_clears.py", "_grad_aliases"): "names bound to a `.grad`",
    ("gradlint/rules/gl003_param_rebind_update.py", "_grad_aliases"): "names bound to a "
    "`.grad`, paired through tuples (grad_clears' reading differs, so it is its own)",
    ("gradlint/rules/gl003_param_rebind_update.py", "_made_leaf_afterwards"): "`x."
    "requires_grad = ...` after a statement",
    ("gradlint/analysis/impact.py", "on_one_sample"): "assignments of a batch of one",
    ("gradlint/analysis/project.py", "_built_attributes"): "`ast`: a class's layers",
    ("gradlint/analysis/project.py", "_self_attributes"): "`ast`: a class's `self.x`",
    ("gradlint/analysis/project.py", "_built_after"): "`ast`: the modules a class's "
    "`__init__` stores in `self.x` after freezing its parameters",
    ("gradlint/analysis/project.py", "_bound_once"): "`ast`: the one value a layer factory "
    "of another file binds the name it returns to",
    ("gradlint/analysis/project.py", "_entered"): "`ast`: names a function binds once to "
    "a grad-mode manager (grad_mode.entered's twin)",
    ("gradlint/analysis/project.py", "_mode_manager"): "`ast`: what an eval-mode manager's "
    "`__init__` stores from its parameters (`self.models = models`)",
    ("gradlint/analysis/project.py", "_python_names"): "`ast`: the local names a function "
    "of another file binds only to plain values (`acc = x.item()`)",
    ("gradlint/analysis/last_activation.py", "_stored_in_self"): "`ast`: the layers a "
    "class stores in `self.x`, this file's and other files' classes alike",
}
# What only gradlint/analysis/bindings.py may define: the one answer to "what does this
# statement bind", and the table built from it.
BINDING_DEFINITIONS = {
    "bindings_of_node",
    "bound_names",
    "assigned_names",
    "paired_value",
    "keyed_name",
    "all_params",
    "ScopeBindings",
}
# The tables and helpers the one table replaced, and what they were.
REMOVED_BINDING_TABLES = {
    "_table": "values' table",
    "_scope_bindings": "tensors' table",
    "_bound_values": "tensors' table of assigned values",
    "_assignment_table": "summaries' table",
    "_assignment_tables": "summaries' table",
    "bindings_in": "loops' table",
    "_pairs": "tensors' pairing of targets and values (bindings.py's is the one)",
    "_paired_value": "values' pairing of targets and values",
    "_bound_names": "GL010's and explain's 'what does this statement bind'",
    "_target_names": "GL007's 'what does this loop bind'",
    "_produced": "GL005's 'what does this statement bind'",
}


def binding_walkers(source: str) -> list[tuple[int, str]]:
    """Functions with a loop over a walk of the tree (`index.walk(...)`, `index.nodes`,
    `ast.walk(...)`, project's `_walk_ast(...)` and `_inner_nodes(...)`, imports'
    `ast_statements(...)`) whose body reads what assignments bind (`.targets`, or
    `target_names(...)`): how a binding table is built."""
    found = []
    for function in ast.walk(ast.parse(source)):
        if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for loop in ast.walk(function):
            if not isinstance(loop, ast.For):
                continue
            walked = loop.iter
            walks = (
                isinstance(walked, ast.Call)
                and isinstance(walked.func, ast.Attribute)
                and walked.func.attr in ("walk", "of_types_in")  # a walk's nodes of some types
            ) or (isinstance(walked, ast.Attribute) and walked.attr == "nodes")
            walks = walks or (
                isinstance(walked, ast.Call)
                and isinstance(walked.func, ast.Name)
                and walked.func.id in ("_inner_nodes", "ast_statements", "_walk_ast")
            )
            reads_targets = any(
                isinstance(node, ast.Attribute)
                and node.attr == "targets"
                or isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id == "target_names"
                for node in ast.walk(loop)
            )
            if walks and reads_targets:
                found.append((function.lineno, function.name))
                break
    return found


def test_one_binding_table():
    """Which statement binds which name is read off one table per scope, built by
    gradlint/analysis/bindings.py: no rule or other analysis module builds its own."""
    root = PACKAGE.parent
    tables = []
    used = set()
    defined: dict[str, list[str]] = {}
    for folder in ("rules", "analysis"):
        for path in sorted((PACKAGE / folder).glob("*.py")):
            relative = path.relative_to(root).as_posix()
            source = path.read_text(encoding="utf-8")
            for lineno, function in binding_walkers(source):
                key = (relative, function)
                if key in NOT_BINDING_TABLES:
                    used.add(key)
                elif relative != "gradlint/analysis/bindings.py":
                    tables.append(f"{relative}:{lineno}: {function}")
            for node in ast.walk(ast.parse(source)):
                if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
                    defined.setdefault(node.name, []).append(relative)
                elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
                    defined.setdefault(node.attr, []).append(relative)
    assert tables == [], "read gradlint/analysis/bindings.py's table instead"
    assert used == set(NOT_BINDING_TABLES), "stale allow-list entries"
    for name in BINDING_DEFINITIONS:
        assert defined.get(name) == ["gradlint/analysis/bindings.py"], (name, defined.get(name))
    revived = {
        name: [p for p in defined.get(name, ()) if p != "gradlint/analysis/bindings.py"]
        for name in REMOVED_BINDING_TABLES
    }
    revived = {name: paths for name, paths in revived.items() if paths}
    assert revived == {}, "use gradlint/analysis/bindings.py"


def test_rules_ask_the_model_what_a_statement_binds():
    """A rule reads what a statement binds from gradlint/analysis/bindings.py
    (`bound_names`, `assigned_names`, the scope tables), not from the targets' syntax."""
    readers = []
    for path in sorted((PACKAGE / "rules").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Name) and node.id == "target_names":
                readers.append(f"{path.name}:{node.lineno}")
    assert readers == []


def test_the_binding_walker_finder_finds_tables():
    source = (
        "def table(index, body):\n"
        "    out = {}\n"
        "    for node in index.walk(body):\n"
        "        if type(node) is cst.Assign:\n"
        "            for t in node.targets:\n"
        "                out.setdefault(dotted_name(t.target), []).append(node)\n"
        "    return out\n"
        "def loop_names(index, scope):\n"
        "    for node in index.nodes:\n"
        "        names = target_names(node.target)\n"
        "def reads(index, body):\n"  # a walk that reads no target
        "    return [n for n in index.walk(body) if type(n) is cst.Name]\n"
    )
    assert binding_walkers(source) == [(1, "table"), (8, "loop_names")]


# -- one argument binding --------------------------------------------------------------

# Functions that read keywords and positions of a call's arguments without binding one
# parameter: each asks another question, keyed by (module, function).
NOT_ARGUMENT_BINDINGS = {
    ("gradlint/analysis/inplace.py", "call_change"): "an in-place torch function's "
    "first operand, whatever its parameter's name (`input`, `tensor`), and the `out=` "
    "and `inplace=True` flags",
    ("gradlint/analysis/saved.py", "operation"): "an operation's operands in order for "
    "the saved-tensor table; any star or `out=`/`inplace=` refuses it",
    ("gradlint/analysis/values.py", "trainable_layer"): "whether a layer may be built "
    "without weights: a star or a no-affine keyword anywhere",
    ("gradlint/analysis/values.py", "_backward_creates_graph"): "whether some backward "
    "may pass create_graph: a `**`, the keyword, or enough positional arguments for "
    "either spelling (Tensor.backward's third, autograd.backward's fourth)",
    ("gradlint/analysis/values.py", "_call"): "whether autograd.grad may pass "
    "create_graph: the keyword, or six or more arguments",
}


def argument_binders(source: str) -> list[tuple[int, str]]:
    """Functions that match a call argument's keyword against a name
    (`arg.keyword.value == param`, `... in names`) and also count positions
    (`enumerate(...)`, or an argument's `.star`): how a binding of arguments to
    parameters is written by hand."""
    found = []
    for function in ast.walk(ast.parse(source)):
        if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        nodes = list(ast.walk(function))
        matches_keyword = any(
            isinstance(node, ast.Compare)
            and any(
                isinstance(side, ast.Attribute)
                and side.attr == "value"
                and isinstance(side.value, ast.Attribute)
                and side.value.attr == "keyword"
                for side in (node.left, *node.comparators)
            )
            for node in nodes
        )
        counts_positions = any(
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "enumerate"
            or isinstance(node, ast.Attribute)
            and node.attr == "star"
            for node in nodes
        )
        if matches_keyword and counts_positions:
            found.append((function.lineno, function.name))
    return found


def test_one_argument_binding():
    """Which argument of a call binds a parameter is told by gradlint/analysis/
    arguments.py, for the project's functions and library calls alike: no rule or other
    analysis module binds arguments by itself."""
    root = PACKAGE.parent
    binders = []
    used = set()
    for folder in ("rules", "analysis"):
        for path in sorted((PACKAGE / folder).glob("*.py")):
            relative = path.relative_to(root).as_posix()
            if relative == "gradlint/analysis/arguments.py":
                continue
            for lineno, function in argument_binders(path.read_text(encoding="utf-8")):
                if (relative, function) in NOT_ARGUMENT_BINDINGS:
                    used.add((relative, function))
                else:
                    binders.append(f"{relative}:{lineno}: {function}")
    assert binders == [], "bind through gradlint/analysis/arguments.py"
    assert used == set(NOT_ARGUMENT_BINDINGS), "stale allow-list entries"


def test_the_argument_binder_finder_finds_binders():
    source = (
        "def forwarded(call, params, param):\n"
        "    position = params.index(param)\n"
        "    for i, arg in enumerate(call.args):\n"
        "        if arg.keyword is not None:\n"
        "            if arg.keyword.value == param:\n"
        "                return arg.value\n"
        "        elif i == position:\n"
        "            return arg.value\n"
        "def at(site, positional, param):\n"
        "    for arg in site.args:\n"
        "        if arg.star:\n"
        "            return None\n"
        "        if arg.keyword is not None and arg.keyword.value == param:\n"
        "            return arg.value\n"
        "def flag(call):\n"  # a keyword lookup alone binds no position
        "    return [a for a in call.args if a.keyword and a.keyword.value == 'out']\n"
    )
    assert argument_binders(source) == [(1, "forwarded"), (9, "at")]


# -- one import map -------------------------------------------------------------------

# The node classes of an import statement, in LibCST and in `ast`.
IMPORT_NODE_CLASSES = {"Import", "ImportFrom", "ImportAlias", "ImportStar", "alias"}
# (module, class) that may name an import node class besides gradlint/analysis/imports.py,
# each with why.
IMPORT_READERS = {
    ("gradlint/analysis/index.py", "ImportStar"): "the `*` is punctuation: the tree walk "
    "skips it with the other trivia",
}


def import_node_readers(source: str) -> list[tuple[int, str]]:
    """Where a module names an import statement's node class (`cst.ImportFrom`,
    `ast.Import`, `ast.alias`, `from libcst import ImportAlias`) or visits one
    (`visit_ImportFrom`): how it would read what an import binds by itself."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Attribute) and node.attr in IMPORT_NODE_CLASSES:
            if node.attr != "alias" or (
                isinstance(node.value, ast.Name) and node.value.id == "ast"
            ):
                found.append((node.lineno, node.attr))
        elif isinstance(node, ast.ImportFrom) and node.module in ("ast", "libcst"):
            found += [(node.lineno, a.name) for a in node.names if a.name in IMPORT_NODE_CLASSES]
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if re.fullmatch(r"(visit|leave)_(Import|ImportFrom|ImportAlias|ImportStar)", node.name):
                found.append((node.lineno, node.name))
    return found


def test_one_import_map():
    """What an import statement binds is read in one place, gradlint/analysis/imports.py,
    for the linted file's LibCST tree and for the other files' `ast` trees alike: no other
    module of gradlint reads an import node."""
    readers = []
    used = set()
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(PACKAGE.parent).as_posix()
        if relative == "gradlint/analysis/imports.py":
            continue
        for lineno, name in import_node_readers(path.read_text(encoding="utf-8")):
            if (relative, name) in IMPORT_READERS:
                used.add((relative, name))
            else:
                readers.append(f"{relative}:{lineno}: {name}")
    assert readers == [], "read imports through gradlint/analysis/imports.py"
    assert used == set(IMPORT_READERS), "stale allow-list entries"


def test_the_import_reader_finder_finds_readers():
    source = (
        "import ast\n"
        "import libcst as cst\n"
        "from libcst import ImportAlias\n"
        "def f(node):\n"
        "    if type(node) is cst.ImportFrom:\n"
        "        return [a.name for a in node.names]\n"
        "    return isinstance(node, (ast.Import, ast.alias))\n"
        "class V:\n"
        "    def visit_Import(self, node):\n"
        "        pass\n"
        "    def visit_Call(self, node):\n"  # not an import
        "        return node.func.alias\n"  # an attribute named alias, not ast's class
    )
    assert sorted(import_node_readers(source)) == [
        (3, "ImportAlias"),
        (5, "ImportFrom"),
        (7, "Import"),
        (7, "alias"),
        (9, "visit_Import"),
    ]


# -- one reading of what callers pass --------------------------------------------------

# The calls that list a function's call sites in the linted file, the calls that bind one
# parameter at one call, and the caller search's records of what calls elsewhere pass.
CALL_SITE_LISTS = {"callers_of", "call_sites"}
ONE_SITE_BINDERS = {"forwarded_argument", "passed_or_default", "argument_at", "argument_of"}
CALLER_RECORDS = {"keyword_constants", "model_arguments"}


def per_site_argument_readers(source: str) -> list[tuple[int, str]]:
    """Functions that walk a function's call sites (`for site in ...callers_of(f)`) and
    bind a parameter at each one themselves, or that read the caller search's records of
    the arguments passed in other files (`call.keyword_constants`,
    `context.model_arguments`): how "what do the callers pass for this parameter" is
    written again beside analysis/caller_arguments.py."""
    found = []
    for function in ast.walk(ast.parse(source)):
        if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for node in ast.walk(function):
            if (
                isinstance(node, ast.Attribute)
                and node.attr in CALLER_RECORDS
                and isinstance(node.ctx, ast.Load)
            ):
                found.append((function.lineno, function.name))
                break
            if not isinstance(node, ast.For) or not isinstance(node.iter, ast.Call):
                continue
            if _called_name(node.iter) not in CALL_SITE_LISTS:
                continue
            inner = [n for statement in node.body for n in ast.walk(statement)]
            if any(isinstance(n, ast.Call) and _called_name(n) in ONE_SITE_BINDERS for n in inner):
                found.append((function.lineno, function.name))
                break
        else:
            # the same walk written as `sites = callers_of(f)` and a comprehension over
            # them that binds the parameter at each (`all(ok(argument_of(s, ...)) for s
            # in sites)`)
            called = {_called_name(n) for n in ast.walk(function) if isinstance(n, ast.Call)}
            comprehends = any(isinstance(n, ast.comprehension) for n in ast.walk(function))
            if comprehends and called & CALL_SITE_LISTS and called & ONE_SITE_BINDERS:
                found.append((function.lineno, function.name))
    return found


def _called_name(call: ast.Call) -> str | None:
    func = call.func
    if isinstance(func, ast.Attribute):
        return func.attr
    return func.id if isinstance(func, ast.Name) else None


def test_one_reading_of_what_callers_pass():
    """What the callers of a function pass for one of its parameters, in the linted file
    and in the project's other files, is read in gradlint/analysis/caller_arguments.py:
    the constant a flag gets, the callable or the model a parameter holds are questions
    asked of that one fact, not walks of the call sites of their own."""
    root = PACKAGE.parent
    readers = []
    for folder in ("rules", "analysis"):
        for path in sorted((PACKAGE / folder).glob("*.py")):
            relative = path.relative_to(root).as_posix()
            if relative == "gradlint/analysis/caller_arguments.py":
                continue
            for lineno, function in per_site_argument_readers(path.read_text(encoding="utf-8")):
                readers.append(f"{relative}:{lineno}: {function}")
    assert readers == [], "ask gradlint/analysis/caller_arguments.py"


def test_the_per_site_reader_finder_finds_readers():
    source = (
        "def passed(self, func, name):\n"
        "    for site in self.callees.callers_of(func):\n"
        "        found = summary.forwarded_argument(site, name)\n"
        "def flags(self, func, param):\n"
        "    return [c.keyword_constants for c in calls]\n"
        "def models(contexts, position):\n"
        "    return all(position in c.model_arguments for c in contexts)\n"
        "def one_site(self, site, func, param):\n"  # one call, not every caller
        "    return passed_or_default(site, func, param, method=False)\n"
        "def callers_in_loops(self, func):\n"  # the sites, no argument read
        "    for site in self.callers_of(func):\n"
        "        yield self.index.scope_of(site)\n"
        "def holds(self, func, name):\n"
        "    sites = self.callees.callers_of(func)\n"
        "    return all(ok(argument_of(site, sig, name)) for site in sites)\n"
    )
    assert per_site_argument_readers(source) == [
        (1, "passed"),
        (4, "flags"),
        (6, "models"),
        (13, "holds"),
    ]


def path_translators(source: str) -> list[tuple[int, str]]:
    """Functions that read the argument a call binds (`forwarded_argument`,
    `passed_or_default`, ...) as a name or module path (`dotted_name(...)`,
    `module_path(...)`), directly or through the variable they bind it to: how "which
    object of the caller is this helper's parameter" is written again beside
    caller_arguments.path_in_caller."""
    found = []
    for function in ast.walk(ast.parse(source)):
        if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        nodes = list(ast.walk(function))
        bound = {
            target.id
            for node in nodes
            if isinstance(node, (ast.Assign, ast.NamedExpr))
            and isinstance(node.value, ast.Call)
            and _called_name(node.value) in ONE_SITE_BINDERS
            for target in (node.targets if isinstance(node, ast.Assign) else [node.target])
            if isinstance(target, ast.Name)
        }

        if any(
            isinstance(node, ast.Call)
            and _called_name(node) in ("dotted_name", "module_path")
            and node.args
            and _reads_a_binding(node.args[0], bound)
            for node in nodes
        ):
            found.append((function.lineno, function.name))
    return found


def _reads_a_binding(expr: ast.AST, bound: set[str]) -> bool:
    if isinstance(expr, ast.Subscript):
        expr = expr.value  # `found[0]` of a (value, default) pair
    if isinstance(expr, ast.Call):
        return _called_name(expr) in ONE_SITE_BINDERS
    return isinstance(expr, ast.Name) and expr.id in bound


def test_one_translation_of_a_helpers_paths_to_its_callers():
    """What a helper does to what it is handed (switches its mode, runs its forward) is
    seen from the call site through caller_arguments.path_in_caller: train_mode's
    helper switches, mode_flow's summaries and forwards' helper forwards read it."""
    root = PACKAGE.parent
    translators = []
    for folder in ("rules", "analysis"):
        for path in sorted((PACKAGE / folder).glob("*.py")):
            relative = path.relative_to(root).as_posix()
            for lineno, function in path_translators(path.read_text(encoding="utf-8")):
                if (relative, function) != (
                    "gradlint/analysis/caller_arguments.py",
                    "path_in_caller",
                ):
                    translators.append(f"{relative}:{lineno}: {function}")
    assert translators == [], "translate through caller_arguments.path_in_caller"


def test_the_path_translator_finder_finds_translators():
    source = (
        "def paths_into(self, call, callee):\n"
        "    for param in params:\n"
        "        argument = summary.forwarded_argument(call, param)\n"
        "        yield module_path(argument), param\n"
        "def switch(self, site, func, model):\n"
        "    found = self.argument_at(site, func, model)\n"
        "    return dotted_name(found[0]) if found is not None else None\n"
        "def helpers(self, call, models):\n"
        "    return dotted_name(summary.forwarded_argument(call, p)) in models\n"
        "def flag_of(call, callee, flag):\n"  # a binding read as a literal, not a path
        "    return passed_or_default(call, callee, flag, method=False)\n"
        "def steps(self, call):\n"  # a receiver's name beside a binding: no translation
        "    argument = summary.forwarded_argument(call, p)\n"
        "    return dotted_name(call.func.value), argument\n"
    )
    assert path_translators(source) == [(1, "paths_into"), (5, "switch"), (8, "helpers")]


def flag_binders(source: str) -> list[tuple[int, str]]:
    """Functions that read a mode switch's flag parameter (`switch.flag`) and bind
    the argument a call gives it themselves: how "which mode does this switch set in
    that call" is written again beside train_mode.ModeSwitch.to_eval_at."""
    found = []
    for function in ast.walk(ast.parse(source)):
        if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        nodes = list(ast.walk(function))
        reads_flag = any(isinstance(n, ast.Attribute) and n.attr == "flag" for n in nodes)
        binds = any(
            isinstance(n, ast.Call) and _called_name(n) in ONE_SITE_BINDERS | {"value_at"}
            for n in nodes
        )
        if reads_flag and binds:
            found.append((function.lineno, function.name))
    return found


def test_one_reading_of_a_switch_flag_at_a_call():
    """`model.train(training)` inside a helper sets the mode its call's `training`
    picks: ModeSwitch.to_eval_at says which, for the helper switches of train_mode and
    for the flag paths of path_conditions alike."""
    root = PACKAGE.parent
    binders = []
    for folder in ("rules", "analysis"):
        for path in sorted((PACKAGE / folder).glob("*.py")):
            relative = path.relative_to(root).as_posix()
            for lineno, function in flag_binders(path.read_text(encoding="utf-8")):
                if (relative, function) != ("gradlint/analysis/train_mode.py", "to_eval_at"):
                    binders.append(f"{relative}:{lineno}: {function}")
    assert binders == [], "ask ModeSwitch.to_eval_at"


def test_the_flag_binder_finder_finds_binders():
    source = (
        "def to_eval(self, switch, site, func):\n"
        "    value = self.conditions.value_at(site, func, switch.flag)\n"
        "    return value\n"
        "def helper(self, call, callee, switch):\n"
        "    if switch.flag is not None:\n"
        "        bound = passed_or_default(call, callee, switch.flag, method=False)\n"
        "def flag_only(self, switch):\n"  # the flag read, nothing bound
        "    return switch.flag is None\n"
    )
    assert flag_binders(source) == [(1, "to_eval"), (4, "helper")]


def bool_literal_readers(source: str) -> list[tuple[int, str]]:
    """Where a module reads `True` or `False` off a name itself (`expr.value ==
    "True"`, `value.value in ("True", "False")`): how "which literal is this flag"
    is written again beside index.bool_literal. A test that also admits `None` asks for
    a constant of three values, another question."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Compare):
            continue
        for operator, side in zip(node.ops, node.comparators, strict=True):
            if isinstance(operator, (ast.Eq, ast.NotEq)) and isinstance(side, ast.Constant):
                words = {side.value}
            elif isinstance(operator, (ast.In, ast.NotIn)) and isinstance(
                side, (ast.Tuple, ast.Set)
            ):
                words = {e.value for e in side.elts if isinstance(e, ast.Constant)}
            else:
                continue
            if words in ({"True"}, {"False"}, {"True", "False"}):
                found.append((node.lineno, ast.unparse(node)))
    return found


def test_one_reading_of_a_bool_literal():
    """`True` and `False` written as a flag are read by gradlint/analysis/index.py's
    bool_literal (and keyword_is_true), for every analysis and rule."""
    root = PACKAGE.parent
    readers = []
    for folder in ("rules", "analysis"):
        for path in sorted((PACKAGE / folder).glob("*.py")):
            relative = path.relative_to(root).as_posix()
            if relative == "gradlint/analysis/index.py":
                continue
            for lineno, text in bool_literal_readers(path.read_text(encoding="utf-8")):
                readers.append(f"{relative}:{lineno}: {text}")
    assert readers == [], "read the literal with index.bool_literal"


def test_the_bool_literal_finder_finds_readers():
    source = (
        "def f(expr, arg):\n"
        "    if expr.value == 'True':\n"
        "        return arg.value.value in ('True', 'False')\n"
        "    return expr.value in ('True', 'False', 'None')\n"  # a three-valued constant
    )
    assert [line for line, _ in bool_literal_readers(source)] == [2, 3]
