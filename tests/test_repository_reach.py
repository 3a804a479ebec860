"""How far the project-wide pass reaches (analysis/project.py): a script deep in a
repository importing the repository's packages from its root (`egs/*/*/local/`,
`src/systems/<name>/simulation/`), and a caller in another file that hands a function
a copy of its model (`copy.deepcopy(model)`, `model.to(device)`) rather than the name."""

from __future__ import annotations

from test_project import findings, preview_findings, write

SIMULATION = """
    import torch


    def simulate(model, x, steps):
        trajectory = []
        for _ in range(steps):
            x = x + 0.1 * model(x).detach()
            trajectory.append(x)
        return torch.cat(trajectory).numpy()
"""

SCRIPT = """
    import torch
    from torch import nn
    from src.systems.pendulum.physics.simulation import simulate

    model = nn.Linear(2, 2)
    model.eval()
    print(simulate(model, torch.zeros(1, 2), 10))
"""


def test_a_script_five_folders_deep_reads_the_repositorys_packages(tmp_path):
    write(
        tmp_path,
        {
            ".git/HEAD": "ref: refs/heads/main\n",
            "src/systems/pendulum/physics/simulation.py": SIMULATION,
            "src/systems/pendulum/experiments/runs/simulate.py": SCRIPT,
        },
    )
    script = tmp_path / "src/systems/pendulum/experiments/runs/simulate.py"
    assert findings(script) == [(7, "GL004")]


def test_without_a_repository_marker_the_deep_import_stays_out_of_sight(tmp_path):
    write(
        tmp_path,
        {
            "src/systems/pendulum/physics/simulation.py": SIMULATION,
            "src/systems/pendulum/experiments/runs/simulate.py": SCRIPT,
        },
    )
    assert findings(tmp_path / "src/systems/pendulum/experiments/runs/simulate.py") == []


VISUALISE = """
    def plot_predictions(model, x):
        predictions = model(x)
        return predictions.argmax(-1).tolist()
"""

TRAIN = """
    import copy

    import torch
    from torch import nn
    from visualise import plot_predictions

    model = nn.Linear(4, 3)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    best = None
    for epoch in range(3):
        loss = model(torch.randn(8, 4)).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        best = copy.deepcopy(model)
    print(plot_predictions(PASSED, torch.randn(2, 4)))
"""


def test_a_copy_of_the_model_handed_from_another_file_is_a_model(tmp_path):
    for passed in ("copy.deepcopy(model)", "model.to('cpu')", "copy.copy(model).eval()"):
        write(tmp_path, {"visualise.py": VISUALISE, "train.py": TRAIN.replace("PASSED", passed)})
        assert findings(tmp_path / "visualise.py") == [(2, "GL012")], passed


def test_something_else_built_from_the_model_says_nothing(tmp_path):
    write(
        tmp_path,
        {"visualise.py": VISUALISE, "train.py": TRAIN.replace("PASSED", "make_head(model)")},
    )
    assert findings(tmp_path / "visualise.py") == []


MODEL = """
    from torch import nn


    class VQVAE(nn.Module):
        def __init__(self):
            super().__init__()
            self.dec = nn.Linear(4, 4)

        def forward(self, x):
            return self.dec(x)

        def decode_code(self, code):
            return self.dec(code)
"""

SAMPLE = """
    import torch
    from vqvae import VQVAE

    if __name__ == "__main__":
        model = VQVAE()
        model.load_state_dict(torch.load("vqvae.pt"))
        decoded = model.decode_code(torch.randn(2, 4))
        decoded = decoded.clamp(-1, 1)
        print(decoded.mean().item())
"""


def test_a_method_returning_to_a_scripts_module_level_code_is_followed_there(tmp_path):
    write(tmp_path, {"vqvae.py": MODEL, "sample.py": SAMPLE})
    assert preview_findings(tmp_path / "vqvae.py") == [(13, "GL012")]


def test_a_module_level_name_a_function_reads_may_keep_the_graph(tmp_path):
    kept = SAMPLE + "\n\n    def keep():\n        return decoded\n"
    write(tmp_path, {"vqvae.py": MODEL, "sample.py": kept})
    assert preview_findings(tmp_path / "vqvae.py") == []


def test_a_notebook_caller_with_a_blank_to_fill_says_nothing_sure(tmp_path):
    from test_project import notebook

    write(tmp_path, {"vqvae.py": MODEL})
    cells = (
        "import torch\nfrom vqvae import VQVAE\nmodel = VQVAE()\n",
        "decoded = model.decode_code(torch.randn(2, 4))\nprint(decoded.mean().item())\n",
    )
    notebook(tmp_path, "explore.ipynb", *cells)
    assert preview_findings(tmp_path / "vqvae.py") == [(13, "GL012")]
    # an exercise's blank may hold another call of the method, or another use of it
    notebook(tmp_path, "explore.ipynb", *cells, "loss = <YOUR CODE>\nloss.backward()\n")
    assert preview_findings(tmp_path / "vqvae.py") == []
