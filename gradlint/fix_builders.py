"""Building blocks for rule fixes. Each returns a Fix made of text edits, so one fix can
carry its import and the LSP can offer it as a quick fix. A builder returns None when it
cannot produce code that is certain to parse (a statement sharing its line with others,
say), and the rule then reports without a fix."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import libcst as cst

from gradlint.analysis.imports import is_future_import
from gradlint.diagnostics import Applicability, Diagnostic, Edit, Fix, Position


def torch_name(context) -> tuple[str, Edit | None]:
    """The local name for `torch` and, when the file does not import it, an edit that
    adds `import torch` after the module docstring and `__future__` imports."""
    for local, qualified in context.facts.index.aliases.items():
        if qualified == "torch" and "." not in local:
            return local, None
    insert_line = 1
    for stmt in context.module.body:
        if _is_docstring(stmt) or _is_future_import(stmt):
            insert_line = context.position_of(stmt)[1].line + 1
            continue
        break
    return "torch", Edit(Position(insert_line, 0), Position(insert_line, 0), "import torch\n")


def _is_docstring(stmt: cst.CSTNode) -> bool:
    return (
        type(stmt) is cst.SimpleStatementLine
        and len(stmt.body) == 1
        and type(stmt.body[0]) is cst.Expr
        and isinstance(stmt.body[0].value, (cst.SimpleString, cst.ConcatenatedString))
    )


def _is_future_import(stmt: cst.CSTNode) -> bool:
    return (
        type(stmt) is cst.SimpleStatementLine
        and len(stmt.body) == 1
        and is_future_import(stmt.body[0])
    )


def own_line(context, statement: cst.CSTNode) -> cst.SimpleStatementLine | None:
    """The line that holds exactly this statement and nothing else, inside a block."""
    index = context.facts.index
    line = statement if type(statement) is cst.SimpleStatementLine else index.parent.get(statement)
    if type(line) is not cst.SimpleStatementLine or len(line.body) != 1:
        return None
    if not isinstance(index.parent.get(line), (cst.IndentedBlock, cst.Module)):
        return None
    return line


def _newline(line: str) -> str:
    for ending in ("\r\n", "\n", "\r"):
        if line.endswith(ending):
            return ending
    return "\n"


def _indent_unit(context) -> str:
    unit = context.module.default_indent
    return unit if unit and not unit.strip() else "    "


def wrap_in_no_grad(
    context, statement: cst.CSTNode, title: str, applicability: Applicability
) -> Fix | None:
    """Put one statement, on its own line(s), inside `with torch.no_grad():`."""
    return rewrite_statement(context, statement, title, applicability, wrap_no_grad=True)


def wrap_inference_in_no_grad(
    context, statement: cst.CSTNode, title: str, applicability: Applicability
) -> Fix | None:
    """wrap_in_no_grad for a forward whose graph is only waste, except a notebook cell's
    last expression: inside the block IPython would show its value no more, and what
    the cell shows is worth more than the graph it keeps."""
    if context.facts.index.shown_by_its_cell(statement):
        return None
    return wrap_in_no_grad(context, statement, title, applicability)


def wrap_block_in_no_grad(
    context, statement: cst.BaseCompoundStatement, title: str, applicability: Applicability
) -> Fix | None:
    """Put a compound statement (a whole loop), as written, inside `with torch.no_grad():`
    by indenting each of its lines one unit. None when a string in it spans lines (its
    text would change) or the statement does not start its own line."""
    index = context.facts.index
    if not isinstance(index.parent.get(statement), (cst.IndentedBlock, cst.Module)):
        return None
    for node in index.walk(statement, into_functions=True):
        if isinstance(node, (cst.SimpleString, cst.FormattedString)) and "\n" in render(node):
            return None
    start, end = context.position_of(statement)
    lines = context.lines
    first = lines[start.line - 1]
    indent = first[: len(first) - len(first.lstrip(" \t"))]
    if first[len(indent) :] == "" or len(indent) != start.column:
        return None
    newline = _newline(first)
    unit = _indent_unit(context)
    name, import_edit = torch_name(context)
    body = []
    for text in lines[start.line - 1 : end.line]:
        stripped = text.rstrip("\r\n")
        if not stripped.strip():
            body.append(stripped)
        elif stripped.startswith(indent):
            body.append(indent + unit + stripped[len(indent) :])
        else:  # a continuation line indented less than the statement
            body.append(unit + stripped)
    text = f"{indent}with {name}.no_grad():{newline}" + newline.join(body)
    end_column = len(lines[end.line - 1].rstrip("\r\n"))
    edits = ([import_edit] if import_edit is not None else []) + [
        Edit(Position(start.line, 0), Position(end.line, end_column), text)
    ]
    return Fix(title, tuple(edits), applicability)


def rewrite_statement(
    context,
    statement: cst.CSTNode,
    title: str,
    applicability: Applicability,
    new_code: str | None = None,
    *,
    wrap_no_grad: bool = False,
) -> Fix | None:
    """Replace one statement that stands on its own line(s) with `new_code` (default:
    the statement as written), optionally inside `with torch.no_grad():`."""
    line_node = own_line(context, statement)
    if line_node is None:
        return None
    start, end = context.position_of(line_node)
    lines = context.lines
    first = lines[start.line - 1]
    indent = first[: len(first) - len(first.lstrip(" \t"))]
    newline = _newline(first)
    if new_code is None:
        # Keep the statement's own text (comments, continuation lines) as written.
        original = [text.rstrip("\r\n") for text in lines[start.line - 1 : end.line]]
        original[0] = original[0][len(indent) :]
    else:
        original = new_code.splitlines()
        # Keep what follows the statement on its last line (a trailing comment).
        _, statement_end = context.position_of(statement)
        if statement_end.line == end.line:
            original[-1] += lines[end.line - 1].rstrip("\r\n")[statement_end.column :]
    # Lines of new code are relative to the statement's indent; continuation lines of
    # the original text already carry their own.
    relative = new_code is not None
    edits: list[Edit] = []
    extra = ""
    header = ""
    if wrap_no_grad:
        name, import_edit = torch_name(context)
        if import_edit is not None:
            edits.append(import_edit)
        extra = _indent_unit(context)
        header = f"{indent}with {name}.no_grad():{newline}"
    body = [indent + extra + original[0]] + [
        (indent + extra + text) if relative else (extra + text if text.strip() else text)
        for text in original[1:]
    ]
    text = header + newline.join(body)
    end_column = len(lines[end.line - 1].rstrip("\r\n"))
    edits.append(Edit(Position(start.line, 0), Position(end.line, end_column), text))
    fix = Fix(title, tuple(edits), applicability)
    if wrap_no_grad:
        context.no_grad_wraps.append(_Wrap(fix, line_node, start.line, end.line, body, header))
    return fix


@dataclass
class _Wrap:
    """A fix that puts one statement inside `with torch.no_grad():`, as built, so that
    adjacent ones can share one block (merge_adjacent_wraps)."""

    fix: Fix
    line: cst.SimpleStatementLine
    first: int  # its first and last source lines
    last: int
    body: list[str]  # its lines inside the block, indented
    header: str  # `with torch.no_grad():` and the line break


def merge_adjacent_wraps(context, diagnostics: list[Diagnostic]) -> list[Diagnostic]:
    """Statements next to each other in one block that each get their own
    `with torch.no_grad():` share one instead: every finding of the run gets the same
    edits (which --fix applies once), with its own title. Only findings that survived
    `# noqa` are merged, so a suppressed statement is never wrapped by its neighbour's
    fix. Comment and blank lines between them move into the block with them."""
    wraps = {id(w.fix): w for w in context.no_grad_wraps}
    if len(wraps) < 2:
        return diagnostics
    index = context.index
    by_line: dict[int, list[Diagnostic]] = {}
    found: dict[int, _Wrap] = {}
    for diagnostic in diagnostics:
        wrap = wraps.get(id(diagnostic.fix))
        if wrap is not None:
            by_line.setdefault(id(wrap.line), []).append(diagnostic)
            found[id(wrap.line)] = wrap
    runs: list[list[_Wrap]] = []
    for wrap in sorted(found.values(), key=lambda w: w.first):
        block = index.parent.get(wrap.line)
        statements = getattr(block, "body", ())
        if runs:
            previous = runs[-1][-1]
            siblings = index.parent.get(previous.line) is block
            # a notebook's next cell is run on its own: one block cannot span both
            if (
                siblings
                and _follows(statements, previous.line, wrap.line)
                and not index.starts_a_cell(wrap.line)
            ):
                runs[-1].append(wrap)
                continue
        runs.append([wrap])
    replaced: dict[int, Fix] = {}
    lines = context.lines
    for run in runs:
        if len(run) < 2:
            continue
        members = [d for w in run for d in by_line[id(w.line)]]
        if len({d.fix.applicability for d in members if d.fix is not None}) != 1:
            continue
        newline = _newline(lines[run[0].first - 1])
        extra = _indent_unit(context)
        body: list[str] = []
        for wrap, after in zip(run, [*run[1:], None], strict=True):
            body += wrap.body
            if after is not None:
                for text in lines[wrap.last : after.first - 1]:
                    text = text.rstrip("\r\n")
                    body.append(extra + text if text.strip() else "")
        last_line = run[-1].last
        end = Position(last_line, len(lines[last_line - 1].rstrip("\r\n")))
        block = Edit(Position(run[0].first, 0), end, run[0].header + newline.join(body))
        shared = [e for w in run for e in w.fix.edits[:-1]]  # the `import torch`, if any
        imports = tuple(dict.fromkeys(shared))
        for diagnostic in members:
            assert diagnostic.fix is not None
            replaced[id(diagnostic)] = Fix(
                diagnostic.fix.title, (*imports, block), diagnostic.fix.applicability
            )
    if not replaced:
        return diagnostics
    return [
        dataclasses.replace(d, fix=replaced[id(d)]) if id(d) in replaced else d for d in diagnostics
    ]


def _follows(statements, before: cst.CSTNode, after: cst.CSTNode) -> bool:
    """Is `after` the statement right after `before` in the block's body?"""
    for first, second in zip(statements, statements[1:], strict=False):
        if first is before:
            return second is after
    return False


def add_keyword_argument(context, call: cst.Call, keyword: str, value: str) -> tuple[Edit, ...]:
    """Edits that pass `keyword=value` to `call`, written like its other arguments: the
    spacing after their commas and around a keyword's `=`, and, when they stand one per
    line before a closing parenthesis on its own line, on a line of its own with their
    indent (keeping a trailing comma if they have one). The call must have arguments."""
    args = call.args
    last = args[-1]
    equal = "="
    for arg in args:
        if arg.keyword is not None and type(arg.equal) is cst.AssignEqual:
            equal = render(arg.equal)
            break
    argument = f"{keyword}{equal}{value}"
    lines = context.lines
    starts = [context.position_of(arg)[0] for arg in args]
    _, call_end = context.position_of(call)
    before_paren = lines[call_end.line - 1][: call_end.column - 1]
    one_per_line = (
        len({p.line for p in starts}) == len(starts)
        and starts[0].line > context.position_of(call.func)[1].line
        and not before_paren.strip()
    )
    _, value_end = context.position_of(last.value)
    if one_per_line:
        text = lines[starts[-1].line - 1]
        indent = text[: starts[-1].column]
        newline = _newline(text)
        if indent.strip():
            one_per_line = False
    if one_per_line:
        at = Position(call_end.line, 0)
        if type(last.comma) is cst.Comma:
            return (Edit(at, at, f"{indent}{argument},{newline}"),)
        return (Edit(value_end, value_end, ","), Edit(at, at, f"{indent}{argument}{newline}"))
    separator = ", "
    for arg in args[:-1]:
        if type(arg.comma) is cst.Comma and isinstance(
            arg.comma.whitespace_after, cst.SimpleWhitespace
        ):
            separator = "," + arg.comma.whitespace_after.value
            break
    # After the last argument's value, before any trailing comma.
    return (Edit(value_end, value_end, f"{separator}{argument}"),)


def torch_nn_name(context) -> tuple[str, Edit | None]:
    """The local name for `torch.nn` (`nn` after `from torch import nn` or `import
    torch.nn as nn`, else `torch.nn`) and the `import torch` edit when one is needed."""
    for local, qualified in context.facts.index.aliases.items():
        if qualified == "torch.nn" and "." not in local:
            return local, None
    name, import_edit = torch_name(context)
    return f"{name}.nn", import_edit


def wrap_expression(
    context, expr: cst.CSTNode, callee: str, title: str, applicability: Applicability
) -> Fix:
    """Pass `expr` to `torch.nn.<callee>(...)`, in place: `[a, b]` becomes
    `nn.ModuleList([a, b])`; a tuple written without parentheses keeps its meaning."""
    name, import_edit = torch_nn_name(context)
    start, end = context.position_of(expr)
    bare_tuple = type(expr) is cst.Tuple and not expr.lpar
    opening = f"{name}.{callee}(" + ("(" if bare_tuple else "")
    closing = "))" if bare_tuple else ")"
    edits = [Edit(start, start, opening), Edit(end, end, closing)]
    if import_edit is not None:
        edits.insert(0, import_edit)
    return Fix(title, tuple(edits), applicability)


def render(node: cst.CSTNode) -> str:
    return cst.Module([]).code_for_node(node)
