"""One import map (gradlint/analysis/imports.py): the linted file's LibCST tree and the
project's other files' `ast` trees are read by one reading of what an import binds, so the
two sides agree on relative imports, `import a.b [as c]`, star imports, and imports inside
functions, `try:` and `if:`."""

from __future__ import annotations

import ast
import os
import textwrap

import libcst as cst
import pytest
from test_project import EVALUATE, MEASURE, findings, write

from gradlint.analysis import project
from gradlint.analysis.imports import ast_import_map, names_bound_by
from gradlint.analysis.index import FileIndex

SHAPES = """
import torch
import torch.nn.functional as F
import os.path
from . import utils
from ..models.vae import VAE as V
from .helpers import *
try:
    from apex import amp
except ImportError:
    amp = None
if torch.cuda.is_available():
    from .gpu import step
else:
    from .cpu import step


def main():
    from evaluation import evaluate
    import numpy as np
    return evaluate, np


class Box:
    from collections import OrderedDict as table
"""


def _both(text: str):
    text = textwrap.dedent(text)
    index = FileIndex(cst.parse_module(text))
    tree = ast.parse(text)
    return index, index.imports, ast_import_map(tree)


def _scopes(imports) -> list[tuple[str, tuple, str]]:
    """(local, origin, where: module / the function's or class's name) per binding."""
    out = []
    for binding in imports.bindings:
        scope = binding.scope
        if scope is None:
            where = "module"
        elif isinstance(scope, cst.CSTNode):
            where = scope.name.value  # type: ignore[attr-defined]
        else:
            where = scope.name  # type: ignore[attr-defined]
        out.append((binding.local, binding.origin, where))
    return out


def test_the_linted_file_and_other_files_read_the_same_imports():
    index, from_libcst, from_ast = _both(SHAPES)
    assert (
        _scopes(from_libcst)
        == _scopes(from_ast)
        == [
            ("torch", ("torch", 0, None), "module"),
            ("F", ("torch.nn.functional", 0, None), "module"),
            ("os", ("os", 0, None), "module"),  # `import os.path` binds `os`
            ("utils", ("", 1, "utils"), "module"),
            ("V", ("models.vae", 2, "VAE"), "module"),
            ("amp", ("apex", 0, "amp"), "module"),  # under `try:`: still the module's
            ("step", ("gpu", 1, "step"), "module"),
            ("step", ("cpu", 1, "step"), "module"),
            ("evaluate", ("evaluation", 0, "evaluate"), "main"),
            ("np", ("numpy", 0, None), "main"),
            ("table", ("collections", 0, "OrderedDict"), "Box"),
        ]
    )
    assert from_libcst.star_imports == from_ast.star_imports == [("helpers", 1)]
    assert from_libcst.modules == from_ast.modules
    assert ("os.path", 0) in from_ast.modules and ("models.vae.VAE", 2) in from_ast.modules
    assert from_libcst.origins() == from_ast.origins()
    # the linted file's tables are read off the same map
    assert index.imported_from == from_libcst.origins()
    assert index.star_imports == [("helpers", 1)]
    assert index.aliases["F"] == "torch.nn.functional"
    assert index.aliases["os"] == "os"
    assert "V" not in index.aliases  # relative: the project's own code, never torch


def test_the_caller_search_reads_import_a_dot_b_as_the_linted_file_does():
    # Before, the linted file's table keyed `import os.path` as "os.path" and the caller
    # search's as "os"; now both bind `os` (what Python binds).
    index, _, from_ast = _both("import os.path\nimport a.b as c\n")
    assert (
        index.imported_from
        == from_ast.origins()
        == {
            "os": ("os", 0, None),
            "c": ("a.b", 0, None),
        }
    )


def test_a_name_imported_in_a_function_is_read_there_and_the_module_one_elsewhere():
    _, imports, _ = _both(
        """
        def main():
            from utils import evaluate
            return evaluate


        from other import evaluate
        """
    )
    main = next(b.scope for b in imports.bindings if b.scope is not None)
    assert imports.target("evaluate", lambda: main) == ("utils", 0, "evaluate")
    assert imports.target("evaluate", lambda: None) == ("other", 0, "evaluate")
    assert imports.origins()["evaluate"] == ("other", 0, "evaluate")


@pytest.mark.parametrize(
    ("text", "dotted", "expected"),
    [
        ("import pkg.utils\n", "pkg.utils.evaluate", ("pkg.utils", 0, "evaluate")),
        ("import pkg.utils\n", "pkg.evaluate", ("pkg", 0, "evaluate")),
        ("import pkg.utils as U\n", "U.evaluate", ("pkg.utils", 0, "evaluate")),
        ("from . import utils\n", "utils.evaluate", ("utils", 1, "evaluate")),
        ("from pkg import utils\n", "utils.evaluate", ("pkg.utils", 0, "evaluate")),
        ("from .utils import evaluate\n", "evaluate", ("utils", 1, "evaluate")),
        ("import utils\n", "utils", None),  # a module is not called
        ("import pkg.utils\n", "pkg.other.evaluate", None),  # not a module it loads
        ("from pkg import utils\n", "utils.sub.evaluate", None),
    ],
)
def test_what_a_called_dotted_name_names_through_the_imports(text, dotted, expected):
    _, from_libcst, from_ast = _both(text)
    assert from_libcst.target(dotted) == from_ast.target(dotted) == expected


def test_the_binding_table_takes_an_import_s_names_from_the_map():
    module = cst.parse_module("import a.b\nimport a.b as c\nfrom m import n as k, o\n")
    statements = [line.body[0] for line in module.body]  # type: ignore[attr-defined]
    assert [names_bound_by(s) for s in statements] == [["a"], ["c"], ["k", "o"]]


# -- what the shapes change in findings --------------------------------------------------

TRAIN = """
    import torch
    {imports}


    def main(model, loader):
        model.eval()
        acc = {call}(model, loader)
        return acc
"""


def test_a_helper_called_through_import_a_dot_b(tmp_path):
    # `import pkg.utils` then `pkg.utils.evaluate(...)`: the linted file's table held
    # the key "pkg.utils", which no call's head is, so the helper went unread.
    write(tmp_path, {"pkg/__init__.py": "", "pkg/utils.py": EVALUATE})
    write(
        tmp_path,
        {"train.py": TRAIN.format(imports="import pkg.utils", call="pkg.utils.evaluate")},
    )
    assert findings(tmp_path / "train.py") == [(7, "GL004")]


def test_a_package_that_re_exports_under_try(tmp_path):
    # A package `__init__.py` that imports its modules under `try:` (optional
    # dependencies): its star import was read only at the top level, not under `try:`.
    init = "try:\n    from .metrics import *\nexcept ImportError:\n    pass\n"
    write(tmp_path, {"helpers/__init__.py": init, "helpers/metrics.py": EVALUATE})
    write(
        tmp_path,
        {"train.py": TRAIN.format(imports="from helpers import evaluate", call="evaluate")},
    )
    assert findings(tmp_path / "train.py") == [(7, "GL004")]
    summary = project.summary_of_file(str(tmp_path / "helpers/__init__.py"))
    assert summary is not None and summary.star_imports == [("metrics", 1)]


def test_a_class_re_exported_under_try_holds_parameters(tmp_path):
    write(
        tmp_path,
        {
            "models/__init__.py": "try:\n    from .vae import *\nexcept ImportError:\n    pass\n",
            "models/vae.py": """
                from torch import nn


                class VAE(nn.Module):
                    def __init__(self):
                        super().__init__()
                        self.enc = nn.Linear(4, 2)

                    def forward(self, x):
                        return self.enc(x)
            """,
            "tests/test_vae.py": """
                import torch
                from models import VAE


                def test_forward():
                    model = VAE()
                    print(model(torch.randn(3, 4)).shape)
            """,
        },
    )
    assert findings(tmp_path / "tests" / "test_vae.py") == [(7, "GL012")]


def test_a_function_s_own_import_is_the_one_its_call_runs(tmp_path):
    # `main` imports `evaluate` from utils for itself; the module's later import of
    # another `evaluate` is what the rest of the file calls. The last import in source
    # order was read for every call.
    quiet = "def evaluate(model, loader):\n    return 0\n"
    write(tmp_path, {"utils.py": EVALUATE, "other.py": quiet})
    write(
        tmp_path,
        {
            "train.py": """
                import torch


                def main(model, loader):
                    from utils import evaluate
                    model.eval()
                    return evaluate(model, loader)


                def peek(model, loader):
                    model.eval()
                    return evaluate(model, loader)


                from other import evaluate
            """
        },
    )
    assert findings(tmp_path / "train.py") == [(7, "GL004")]


CALLERS = """
    import torch
    from torch import nn
    import pkg.measure


    def main(loader):
        model = nn.Linear(4, 2)
        {guard}
            acc = pkg.measure.evaluate(model, loader)
            pkg.measure.reset()
        return acc
"""


@pytest.mark.parametrize(
    ("guard", "expected"),
    [("with torch.no_grad():", []), ("if True:", [(10, "GL012"), (16, "GL002")])],
    ids=["no-grad", "recording"],
)
def test_the_caller_search_finds_calls_through_import_a_dot_b(tmp_path, guard, expected):
    # `evaluate` and `reset` are called only through `pkg.measure.evaluate(...)`: the
    # caller search did not take that for a call of them, found no caller, and reported
    # both as if called with grad recording.
    write(
        tmp_path,
        {"pkg/__init__.py": "", "pkg/measure.py": MEASURE, "run.py": CALLERS.format(guard=guard)},
    )
    assert findings(tmp_path / "pkg" / "measure.py") == expected


# -- names a star import of a project module binds ---------------------------------------

# A validation loop of pre-0.4 code: `Variable` comes from the project's helpers module
# through `from <helpers> import *`, not from an import of the linted file.
SCORE = """
    import torch
    {star}


    def score(net, batches):
        net.eval()
        total = 0.0
        for x, y in batches:
            x = {wrapper}(x, volatile=True)
            total += (net(x).argmax(1) == y).float().mean().item()
        return total
"""

WRAPS = "from torch.autograd import Variable\nimport torch.nn as nn\n"


@pytest.mark.parametrize(
    ("files", "star", "wrapper", "expected"),
    [
        # the helpers module imports Variable itself
        ({"common.py": WRAPS}, "from common import *", "Variable", [(9, "GL008")]),
        # through a chain of star imports, under `try:`, in a package, relative
        (
            {
                "lib/__init__.py": "try:\n    from .shared import *\nexcept ImportError:\n    pass\n",
                "lib/shared.py": "from .base import *\n",
                "lib/base.py": WRAPS,
            },
            "from lib import *",
            "Variable",
            [(9, "GL008")],
        ),
        # a cycle of star imports ends
        (
            {"a.py": "from b import *\n", "b.py": "from a import *\n" + WRAPS},
            "from a import *",
            "Variable",
            [(9, "GL008")],
        ),
        # `__all__` leaves it out
        (
            {"common.py": WRAPS + "__all__ = ['nn']\n"},
            "from common import *",
            "Variable",
            [],
        ),
        # a name with a leading underscore is not exported without `__all__`
        (
            {"common.py": "from torch.autograd import Variable as _Var\n"},
            "from common import *",
            "_Var",
            [],
        ),
        # ...and is when `__all__` lists it
        (
            {"common.py": "from torch.autograd import Variable as _Var\n__all__ = ['_Var']\n"},
            "from common import *",
            "_Var",
            [(9, "GL008")],
        ),
        # `__all__` grown by a later statement lists it too (read in source order)
        (
            {"common.py": WRAPS + "__all__ = ['nn']\n__all__ += ['Variable']\n"},
            "from common import *",
            "Variable",
            [(9, "GL008")],
        ),
        # ...but not one computed first: what it lists stays unknown
        (
            {
                "common.py": WRAPS
                + "__all__ = [n for n in dir() if not n.startswith('_')]\n__all__ += ['x']\n"
            },
            "from common import *",
            "Variable",
            [(9, "GL008")],
        ),
        # ...and one rebound later lists only what it lists last
        (
            {"common.py": WRAPS + "__all__ = ['Variable']\n__all__ = ['nn']\n"},
            "from common import *",
            "Variable",
            [],
        ),
        # the module rebinds the name: its own class, not torch's
        (
            {"common.py": WRAPS + "\n\nclass Variable:\n    pass\n"},
            "from common import *",
            "Variable",
            [],
        ),
        # the inner module's import is hidden by the outer module's own definition
        (
            {
                "outer.py": "from inner import *\n\n\ndef Variable(x, volatile=False):\n    return x\n",
                "inner.py": WRAPS,
            },
            "from outer import *",
            "Variable",
            [],
        ),
        # the linted file's own import of the name decides
        (
            {"common.py": WRAPS, "mine.py": "def Variable(x, volatile=False):\n    return x\n"},
            "from common import *\nfrom mine import Variable",
            "Variable",
            [],
        ),
    ],
    ids=[
        "direct",
        "chain-in-package",
        "cycle",
        "all-excludes",
        "underscore",
        "all-includes-underscore",
        "all-grown-later",
        "all-computed-then-grown",
        "all-rebound-later",
        "rebound-there",
        "hidden-by-outer-definition",
        "own-import-wins",
    ],
)
def test_a_name_a_star_import_binds_resolves_to_what_that_module_binds(
    tmp_path, files, star, wrapper, expected
):
    write(tmp_path, files)
    write(tmp_path, {"run.py": SCORE.format(star=star.replace("\n", "\n    "), wrapper=wrapper)})
    found = [f for f in findings(tmp_path / "run.py") if f[1] == "GL008"]
    line_shift = star.count("\n")
    assert found == [(line + line_shift, code) for line, code in expected]


def test_a_file_s_own_top_level_definition_hides_a_star_imported_name(tmp_path):
    write(tmp_path, {"common.py": WRAPS})
    source = SCORE.format(star="from common import *", wrapper="Variable") + (
        "\n\n    def Variable(x, volatile=False):\n        return x\n"
    )
    write(tmp_path, {"run.py": source})
    assert [f for f in findings(tmp_path / "run.py") if f[1] == "GL008"] == []


def test_the_project_index_reads_what_star_imports_bind(tmp_path):
    write(
        tmp_path,
        {
            "first.py": "from torch.autograd import Variable\nimport numpy as np\n",
            "second.py": "from second_base import *\nimport torch.nn as nn\n",
            "second_base.py": "import torch.nn.functional as F\nimport numpy as np\n"
            "from .nowhere import thing\n",
        },
    )
    index = project.ProjectIndex(str(tmp_path / "run.py"))
    assert index.star_names([("first", 0), ("second", 0), ("missing", 0)]) == {
        "Variable": ("torch.autograd", 0, "Variable"),
        "np": ("numpy", 0, None),
        "nn": ("torch.nn", 0, None),
        "F": ("torch.nn.functional", 0, None),
    }
    # the file's import map then qualifies them, as an import of its own would
    module = cst.parse_module("from first import *\nfrom second import *\nx = Variable\n")
    linted = FileIndex(module, index)
    assert linted.aliases["Variable"] == "torch.autograd.Variable"
    assert linted.aliases["F"] == "torch.nn.functional"
    assert linted.imported_from["nn"] == ("torch.nn", 0, None)
    # without the project they stay unbound
    assert "Variable" not in FileIndex(module).aliases


# -- a parameter that hides an import ------------------------------------------------------


def test_a_parameter_hides_the_module_s_import_of_its_name():
    index = FileIndex(
        cst.parse_module(
            textwrap.dedent(
                """
                import torch.nn.functional as F
                y = F.relu(x)


                def score(F, batch):
                    def inner():
                        return F.relu(batch)
                    return F(batch), (lambda F: F.relu(batch)), inner
                """
            )
        )
    )
    calls: dict[str, list] = {}
    for call in index.calls:
        func = call.func
        head = func.value if isinstance(func, cst.Attribute) else func
        calls.setdefault(cst.Module([]).code_for_node(func), []).append(
            (
                index.qualified_name(func),
                index.import_alias_at(call, cst.ensure_type(head, cst.Name).value),
            )
        )
    # module level: the import; in the function, its closure and the lambda: the parameter
    assert calls["F.relu"] == [
        ("torch.nn.functional.relu", "torch.nn.functional"),
        ("F.relu", None),
        ("F.relu", None),
    ]
    assert calls["F"] == [("F", None)]


@pytest.mark.parametrize(
    "body",
    [
        # the model passed under the name of an import (evolution strategies' evaluation)
        """
        def rollout(nn, env):
            obs = env.reset()
            out = nn(torch.tensor(obs))
            return out.data.numpy()
        """,
        # another import's name, a keyword-only parameter, read in a comprehension
        """
        def rollout(env, *, F):
            return [F(torch.tensor(obs)).argmax(1).tolist() for obs in env.reset()]
        """,
    ],
    ids=["parameter", "keyword-only"],
)
def test_a_model_passed_under_an_imported_name_is_run(tmp_path, body):
    call = "rollout(Policy(), env)" if "nn, env" in body else "rollout(env, F=Policy())"
    head = "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n\n"
    main = """


        class Policy(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(4, 2)

            def forward(self, x):
                return self.fc(x)


        def main(env):
            return {call}
    """
    main = textwrap.dedent(main).replace("{call}", call)
    write(tmp_path, {"es.py": head + textwrap.dedent(body) + main})
    assert [code for _, code in findings(tmp_path / "es.py")] == ["GL012"]


def test_the_cache_relints_a_file_when_a_star_imported_module_s_imports_change(
    tmp_path, monkeypatch, capsys
):
    """The names a star import binds come from the helper's summary, so the linted file's
    cached result depends on it: dropping the helper's Variable import re-lints it."""
    from gradlint import cli

    write(tmp_path, {"common.py": WRAPS})
    write(tmp_path, {"run.py": SCORE.format(star="from common import *", wrapper="Variable")})
    monkeypatch.chdir(tmp_path)

    def run() -> str:
        cli.main(["-j1", "--select", "GL008", "."])
        return capsys.readouterr().out

    assert "run.py:9:" in run()
    assert "run.py:9:" in run()  # from the cache
    (tmp_path / "common.py").write_text("import torch.nn as nn\n", encoding="utf-8")
    stat = (tmp_path / "common.py").stat()
    os.utime(tmp_path / "common.py", ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))
    assert "run.py:9:" not in run()
