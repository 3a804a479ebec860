"""Building blocks for rule fixes. Each returns a Fix made of text edits, so one fix can
carry its import and the LSP can offer it as a quick fix. A builder returns None when it
cannot produce code that is certain to parse (a statement sharing its line with others,
say), and the rule then reports without a fix."""

from __future__ import annotations

import libcst as cst

from gradlint.diagnostics import Applicability, Edit, Fix, Position
from gradlint.edits import split_lines


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
        isinstance(stmt, cst.SimpleStatementLine)
        and len(stmt.body) == 1
        and isinstance(stmt.body[0], cst.Expr)
        and isinstance(stmt.body[0].value, (cst.SimpleString, cst.ConcatenatedString))
    )


def _is_future_import(stmt: cst.CSTNode) -> bool:
    return (
        isinstance(stmt, cst.SimpleStatementLine)
        and len(stmt.body) == 1
        and isinstance(stmt.body[0], cst.ImportFrom)
        and isinstance(stmt.body[0].module, cst.Name)
        and stmt.body[0].module.value == "__future__"
    )


def own_line(context, statement: cst.CSTNode) -> cst.SimpleStatementLine | None:
    """The line that holds exactly this statement and nothing else, inside a block."""
    index = context.facts.index
    line = (
        statement if isinstance(statement, cst.SimpleStatementLine) else index.parent.get(statement)
    )
    if not isinstance(line, cst.SimpleStatementLine) or len(line.body) != 1:
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
    lines = split_lines(context.source)
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
    return Fix(title, tuple(edits), applicability)


def render(node: cst.CSTNode) -> str:
    return cst.Module([]).code_for_node(node)
