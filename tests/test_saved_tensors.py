"""The saved-tensor table GL011 reads is what the installed torch does: regenerated in
memory here (CI has torch), it must equal the shipped file, and the shipped file must be
in the wheel."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gradlint.analysis import saved as gradlint_saved

pytest.importorskip("torch")

from runtime_check import saved_tensors  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def generated() -> dict:
    return saved_tensors.generate()


def test_the_shipped_table_matches_the_installed_torch(generated):
    shipped = saved_tensors.shipped()
    assert shipped["torch"] == generated["torch"], (
        f"table made with torch {shipped['torch']}, installed {generated['torch']}: "
        f"run `{saved_tensors.COMMAND}`"
    )
    assert shipped == generated, f"run `{saved_tensors.COMMAND}`"


def test_the_shipped_file_is_the_rendered_table(generated):
    """Byte for byte, so `--write` on an unchanged torch leaves git clean."""
    text = saved_tensors.TABLE_PATH.read_text(encoding="utf-8")
    assert text == saved_tensors.render(generated)
    assert json.loads(text) == generated


def test_gradlint_reads_every_case_of_the_file():
    data = saved_tensors.shipped()
    table = gradlint_saved.table()
    assert table.torch == data["torch"]
    assert set(table.ops) == set(data["ops"])
    for key, cases in data["ops"].items():
        assert len(table.ops[key]) == len(cases), key
        for case in cases:
            saves, output = table.ops[key][tuple(case["operands"])]
            assert saves == frozenset(case["saves"]) and output == case["output"]


def test_saving_depends_on_which_operands_require_grad(generated):
    """The reason the table is per combination: `w * x` keeps x only for w's gradient."""
    cases = {tuple(c["operands"]): c["saves"] for c in generated["ops"]["*"]}
    assert cases[("grad", "tensor")] == [1]
    assert cases[("tensor", "grad")] == [0]
    assert cases[("grad", "grad")] == [0, 1]
    assert all(("tensor", "tensor") != k for k in cases), "nothing recorded, nothing listed"


def test_check_command_fails_on_a_stale_table(tmp_path, monkeypatch, capsys, generated):
    stale = json.loads(json.dumps(generated))
    stale["ops"]["torch.sigmoid"][0]["output"] = False
    path = tmp_path / "saved_tensors.json"
    path.write_text(saved_tensors.render(stale), encoding="utf-8")
    monkeypatch.setattr(saved_tensors, "TABLE_PATH", path)
    monkeypatch.setattr(saved_tensors, "generate", lambda: generated)
    assert saved_tensors.main(["--check"]) == 1
    assert "does not match the installed torch" in capsys.readouterr().err
    assert saved_tensors.main(["--write"]) == 0
    assert saved_tensors.main(["--check"]) == 0


def test_the_table_is_package_data():
    from gradlint.config import tomllib

    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    patterns = config["tool"]["setuptools"]["package-data"]["gradlint"]
    shipped = saved_tensors.TABLE_PATH.relative_to(ROOT / "gradlint")
    assert any(shipped.match(pattern) for pattern in patterns)
