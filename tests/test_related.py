"""Related locations: the other places that explain a finding, attached by every rule
and carried by every front (full, JSON, SARIF, LSP) and the cache."""

from __future__ import annotations

import io
import json
import textwrap
from pathlib import Path

import pytest

from gradlint.cache import diagnostic_from_json, diagnostic_to_json
from gradlint.diagnostics import Diagnostic, Position, Related
from gradlint.engine import FileResult, lint_file
from gradlint.output import write_report

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"


def related_of(path: Path, code: str) -> list[tuple[str, str]]:
    """(source line text, label) of each related place of the file's single `code` finding."""
    result = lint_file(path)
    found = [d for d in result.diagnostics if d.code == code]
    assert len(found) == 1, found
    lines = path.read_text(encoding="utf-8").splitlines()
    return [(lines[r.start.line - 1].strip(), r.message) for r in found[0].related]


# One fixture per rule, with the places its finding should point at: (text on the
# related line, words of its label).
CASES = {
    "GL001/bad_retain_graph_rollout.py": [
        ("h = torch.randn(4, 8, device=device)", "`h` enters the loop"),
        ("loss.backward(retain_graph=True)", "backpropagated here every iteration"),
    ],
    "GL002/bad_index_assign.py": [
        ("w = torch.randn(5, device=device, requires_grad=True)", "`w` is made here"),
    ],
    "GL003/bad_parameters_loop_rebind.py": [
        ("for p in model.parameters():", "`p` is each of these"),
    ],
    "GL004/bad_eval_metrics.py": [("model.eval()", "`model` is put in eval mode here")],
    "GL005/bad_wgan_gp.py": [("loss.backward()", "differentiated again here")],
    "GL006/bad_losses_append.py": [
        ("losses = []", "`losses` is created here, outside the loop"),
        ("for _ in range(n):", "every iteration of this loop keeps one more graph"),
        ("loss.backward()", "the graph that is kept"),
    ],
    "GL007/bad_sgd_no_zero_grad.py": [
        ("for _ in range(n):", "this loop never clears the gradients"),
        ("loss.backward()", "adds to `.grad` here"),
    ],
    "GL010/bad_first_block_raw_batch.py": [("x = ", "`x` comes from here")],
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_every_rule_points_at_the_places_that_explain_it(name):
    path = FIXTURES / name
    found = related_of(path, name.split("/")[0])
    expected = CASES[name]
    assert len(found) == len(expected), found
    for (text, label), (want_text, want_label) in zip(found, expected, strict=True):
        assert text.startswith(want_text), (text, want_text)
        assert want_label in label, (label, want_label)


def test_gl004_points_into_the_helper_file_that_switches_to_eval(tmp_path):
    (tmp_path / "loading.py").write_text(
        "import torch\n\n\ndef load_model(path):\n    model = torch.load(path)\n"
        "    model.eval()\n    return model\n",
        encoding="utf-8",
    )
    serve = tmp_path / "serve.py"
    serve.write_text(
        "from loading import load_model\n\n\ndef predict(path, x):\n"
        "    model = load_model(path)\n    out = model(x)\n    return out.argmax(-1).tolist()\n\n\n"
        "def fine_tune(model, loss, opt):\n    model.train(False)\n    loss.backward()\n",
        encoding="utf-8",
    )
    (finding,) = [d for d in lint_file(serve).diagnostics if d.code == "GL004"]
    here, there, read = finding.related
    assert (here.path, here.start.line) == (str(serve), 5)
    assert "comes back in eval mode" in here.message
    assert Path(there.path).resolve() == (tmp_path / "loading.py").resolve()
    assert (there.start, there.end) == (Position(6, 4), Position(6, 16))
    assert "inside the helper" in there.message
    # why the history is never used: the result ends as numbers there
    assert (read.start.line, read.message) == (7, "only read as a number here")


def test_gl004_points_at_the_helper_of_this_file_that_switches_to_eval(tmp_path):
    path = tmp_path / "serve.py"
    path.write_text(
        "import torch\n\n\ndef load_model(path):\n    model = torch.load(path)\n"
        "    model.eval()\n    return model\n\n\nmodel = load_model('m.pt')\n"
        "out = model(torch.randn(2))\nprint(out.argmax(-1).tolist())\n",
        encoding="utf-8",
    )
    (finding,) = lint_file(path).diagnostics
    assert [(r.start.line, r.message.split(",")[0]) for r in finding.related] == [
        (10, "`model` comes back in eval mode from this call"),
        (6, "put in eval mode here"),
        (12, "only read as a number here"),
    ]


def test_gl004_on_a_helpers_forward_names_every_call_that_runs_it_in_eval_mode(tmp_path):
    # a notebook's sample grid of a global generator, run in eval mode by the training
    # loop's epoch end and again by a last cell (Yangyangii/GAN-Tutorial's infoGAN)
    path = tmp_path / "gan.py"
    path.write_text(
        "import torch\n\n\ndef grid():\n    return G(torch.randn(4, 8)).data.numpy()\n\n\n"
        "for epoch in range(3):\n    G.train()\n    train_step(G)\n    G.eval()\n"
        "    show(grid())\n\nG.eval()\nshow(grid())\n",
        encoding="utf-8",
    )
    (finding,) = [d for d in lint_file(path).diagnostics if d.code == "GL004"]
    assert finding.start.line == 5
    called = [r.start.line for r in finding.related if r.message.startswith("called here")]
    assert called == [12, 15]


# --- the fronts ------------------------------------------------------------------------

SOURCE = (
    "import torch\nh = torch.zeros(3)  # é\nfor _ in range(3):\n    h = h + 1\n    h.backward()\n"
)


def sample(path: str = "train.py", other: str = "helpers.py") -> FileResult:
    diagnostic = Diagnostic(
        "GL001",
        "undetached-loop-state",
        "`h` carried",
        path,
        Position(4, 4),
        Position(4, 13),
        related=(
            Related("`h` enters the loop from here", path, Position(2, 0), Position(2, 18)),
            Related("put in eval mode here", other, Position(7, 4), Position(7, 16)),
        ),
    )
    return FileResult(path, [diagnostic], None, SOURCE)


def render(fmt: str, results) -> str:
    stream = io.StringIO()
    write_report(fmt, results, stream)
    return stream.getvalue()


def test_full_shows_each_related_place_as_a_labelled_secondary_span(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "helpers.py").write_text("\n" * 6 + "    model.eval()\n", encoding="utf-8")
    text = render("full", [sample()])
    assert (
        " ::: train.py:2:1\n"
        "  |\n"
        "2 | h = torch.zeros(3)  # é\n"
        "  | ------------------ `h` enters the loop from here\n"
        " ::: helpers.py:7:5\n"
        "  |\n"
        "7 |     model.eval()\n"
        "  |     ------------ put in eval mode here\n"
    ) in text
    # The primary span keeps its carets, above the related places.
    assert text.index("^^^^^^^^^") < text.index(":::")


def test_full_names_a_related_place_it_cannot_read(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    text = render("full", [sample(other="gone.py")])
    assert " ::: gone.py:7:5\n   = put in eval mode here\n" in text or (
        " ::: gone.py:7:5\n  = put in eval mode here\n" in text
    )


def test_json_has_a_related_list_in_ruffs_location_terms(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (obj,) = json.loads(render("json", [sample()]))
    assert obj["related"] == [
        {
            "message": "`h` enters the loop from here",
            "filename": str(tmp_path / "train.py"),
            "location": {"row": 2, "column": 1},
            "end_location": {"row": 2, "column": 19},
        },
        {
            "message": "put in eval mode here",
            "filename": str(tmp_path / "helpers.py"),
            "location": {"row": 7, "column": 5},
            "end_location": {"row": 7, "column": 17},
        },
    ]


def test_sarif_has_related_locations(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    log = json.loads(render("sarif", [sample()]))
    (result,) = log["runs"][0]["results"]
    first, second = result["relatedLocations"]
    assert first == {
        "id": 1,
        "physicalLocation": {
            "artifactLocation": {"uri": "train.py", "uriBaseId": "%SRCROOT%"},
            "region": {"startLine": 2, "startColumn": 1, "endLine": 2, "endColumn": 19},
        },
        "message": {"text": "`h` enters the loop from here"},
    }
    assert second["id"] == 2
    assert second["physicalLocation"]["artifactLocation"]["uri"] == "helpers.py"
    jsonschema = pytest.importorskip("jsonschema")
    from test_output import sarif_schema

    schema = sarif_schema()
    if schema is not None:
        assert not list(jsonschema.Draft4Validator(schema).iter_errors(log))


def test_lsp_related_information_in_the_clients_units(tmp_path):
    pytest.importorskip("pygls")
    from pygls.workspace.position_codec import PositionCodec

    from gradlint.lsp import ClientPositions, to_lsp_diagnostic

    source = "x = '😀'; y = 1\n"
    path = str(tmp_path / "a.py")
    other = tmp_path / "b.py"
    other.write_text("😀😀 = 1\n", encoding="utf-8")
    diagnostic = Diagnostic(
        "GL001",
        "n",
        "m",
        path,
        Position(1, 0),
        Position(1, 1),
        related=(
            Related("here", path, Position(1, 9), Position(1, 10)),
            Related("there", str(other), Position(1, 2), Position(1, 4)),
            Related("gone", str(tmp_path / "gone.py"), Position(3, 1), Position(3, 2)),
        ),
    )
    codec = PositionCodec()  # UTF-16, the LSP default
    lsp = to_lsp_diagnostic(diagnostic, ClientPositions(source, codec), "file:///a.py")
    here, there, gone = lsp.related_information
    assert here.location.uri == "file:///a.py"
    assert (here.location.range.start.character, here.location.range.end.character) == (10, 11)
    assert here.message == "here"
    assert there.location.uri == other.as_uri()
    assert (there.location.range.start.character, there.location.range.end.character) == (4, 6)
    assert (gone.location.range.start.line, gone.location.range.start.character) == (2, 1)


def test_the_cache_keeps_related_places():
    diagnostic = sample("/p/train.py", "/p/helpers.py").diagnostics[0]
    data = json.loads(json.dumps(diagnostic_to_json(diagnostic)))
    # The finding's own file is stored without its name: it is read back under the
    # name the reader displays.
    assert data["related"][0][1] is None
    back = diagnostic_from_json(data, "train.py")
    assert back.related[0] == Related(
        "`h` enters the loop from here", "train.py", Position(2, 0), Position(2, 18)
    )
    assert back.related[1] == diagnostic.related[1]


def test_a_cached_run_shows_the_same_related_places(tmp_path, monkeypatch):
    from gradlint.cli import main

    source = (FIXTURES / "GL001/bad_retain_graph_rollout.py").read_text(encoding="utf-8")
    (tmp_path / "train.py").write_text(source, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    outputs = []
    for _ in range(2):
        stream = io.StringIO()
        monkeypatch.setattr("sys.stdout", stream)
        main(["--output-format", "json", "train.py"])
        outputs.append(json.loads(stream.getvalue()))
    assert outputs[0] == outputs[1]
    assert [r["location"]["row"] for r in outputs[1][0]["related"]] == [12, 18]
    assert any((tmp_path / ".gradlint_cache").rglob("*.json"))


def test_a_related_place_that_is_the_finding_itself_is_not_repeated(tmp_path):
    path = tmp_path / "t.py"
    path.write_text(
        textwrap.dedent(
            """\
            import torch
            w = torch.zeros(3, requires_grad=True)
            w.add_(1)
            """
        ),
        encoding="utf-8",
    )
    (finding,) = lint_file(path).diagnostics
    assert all(r.start.line != finding.start.line for r in finding.related)
    assert [r.start.line for r in finding.related] == [2]


def test_gl004_names_the_call_in_another_file_where_its_result_ends_as_numbers(tmp_path):
    """GL012's evidence, given by GL004 too: why the history is never used."""
    (tmp_path / "utils.py").write_text(
        "import torch.nn.functional as F\n\n\ndef evaluate(model, x, y):\n"
        "    model.eval()\n    out = model(x)\n    loss = F.cross_entropy(out, y)\n"
        "    return loss, out.softmax(-1)\n",
        encoding="utf-8",
    )
    (tmp_path / "train.py").write_text(
        "import torch\nfrom utils import evaluate\n\nnet = torch.nn.Linear(4, 3)\n"
        "x, y = torch.randn(8, 4), torch.randint(0, 3, (8,))\n"
        "loss, probs = evaluate(net, x, y)\nprint(loss.item(), probs.max().item())\n",
        encoding="utf-8",
    )
    (finding,) = lint_file(tmp_path / "utils.py").diagnostics
    assert finding.code == "GL004"
    *_, caller = finding.related
    assert Path(caller.path).resolve() == (tmp_path / "train.py").resolve()
    assert (caller.start.line, caller.message) == (
        6,
        "returned here, where it is only read as numbers",
    )


def test_gl004_at_a_helper_call_names_no_number_the_helper_hands_back(tmp_path):
    """The accuracy a helper returns says nothing of the graph inside it: the evidence
    is the helper's forward, not where the accuracy is printed."""
    path = tmp_path / "helper.py"
    path.write_text(
        "import torch\nfrom torch import nn\n\n\ndef evaluate(model, loader):\n"
        "    correct = 0\n    for x, y in loader:\n        out = model(x)\n"
        "        correct += (out.argmax(1) == y).sum().item()\n"
        "    return correct / len(loader)\n\n\ndef main(loader):\n"
        "    model = nn.Linear(4, 3)\n    model.eval()\n    acc = evaluate(model, loader)\n"
        "    print(float(max(acc, 0.5)))\n",
        encoding="utf-8",
    )
    (finding,) = lint_file(path).diagnostics
    assert (finding.code, finding.start.line) == ("GL004", 16)
    assert [(r.start.line, r.message.split(",")[0]) for r in finding.related] == [
        (15, "`model` is put in eval mode here"),
        (8, "the forward of `model` inside the helper"),
    ]
