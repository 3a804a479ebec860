"""A module class whose layers come from a factory function holds the factory's weights,
wherever the factory is: `self.layers = mlp(sizes)` with `def mlp(neurons): layers =
nn.ModuleList([nn.Linear(x, y) ...]); return layers` in networks/core.py. Before, a
factory counted only in its class's own file and only when it returned the layer call
itself, so another file's `Critic(...)` was a model out of sight and its forwards
(in a unit test that only reads their shapes) were never asked about (a SAC code base
of the fresh dev batch)."""

from __future__ import annotations

from test_project import findings, write

CORE = """
    import torch.nn as nn


    def mlp(neurons):
        layers = nn.ModuleList([nn.Linear(x, y) for x, y in zip(neurons[:-1], neurons[1:])])
        return layers


    def names(neurons):
        layers = [str(n) for n in neurons]
        return layers
"""

LINEAR = """
    import torch
    import torch.nn as nn
    from networks.core import FACTORY


    class Critic(nn.Module):
        def __init__(self, obs_dim, act_dim, hidden):
            super().__init__()
            self.layers = FACTORY([obs_dim + act_dim] + hidden + [1])

        def forward(self, state, action):
            x = torch.cat([state, action], dim=-1)
            for layer in self.layers:
                x = layer(x)
            return x.squeeze(-1)
"""

TEST = """
    import torch
    from networks.linear import Critic


    def test_linear_critic():
        critic = Critic(5, 10, [16])
        value = critic(torch.ones((2, 5)), torch.ones((2, 10)))
        assert list(value.size()) == [2]
"""


def project(tmp_path, factory: str) -> list[tuple[int, str]]:
    write(
        tmp_path,
        {
            "pyproject.toml": "",
            "networks/__init__.py": "",
            "networks/core.py": CORE,
            "networks/linear.py": LINEAR.replace("FACTORY", factory),
            "tests/test_linear.py": TEST,
        },
    )
    return findings(tmp_path / "tests/test_linear.py")


def test_a_class_built_from_another_files_layer_factory_holds_weights(tmp_path):
    assert project(tmp_path, "mlp") == [(7, "GL012")]


def test_a_factory_of_something_else_gives_no_weights(tmp_path):
    assert project(tmp_path, "names") == []


def test_a_factory_of_the_same_file_returning_a_local_name(tmp_path):
    write(
        tmp_path,
        {
            "model.py": """
                import torch
                import torch.nn as nn


                def mlp(sizes):
                    layers = nn.Sequential(*[nn.Linear(a, b) for a, b in zip(sizes, sizes[1:])])
                    return layers


                class Net(nn.Module):
                    def __init__(self):
                        super().__init__()
                        self.body = mlp([4, 8, 2])

                    def forward(self, x):
                        return self.body(x)
            """,
            "evaluate.py": """
                import torch
                from model import Net


                def evaluate(x):
                    net = Net()
                    net.load_state_dict(torch.load("net.pt"))
                    net.eval()
                    return net(x).argmax(1).tolist()
            """,
        },
    )
    assert findings(tmp_path / "evaluate.py") == [(9, "GL004")]


def test_a_factory_returning_a_name_bound_once_is_a_layer_factory():
    """What the summary records (review of 2026-12-07: the same-file test above passes
    through another path too, so this pins _bound_once itself)."""
    import textwrap

    from gradlint.analysis.project import summarise_source

    source = textwrap.dedent(CORE) + textwrap.dedent(
        """
        import torch.nn as nn


        def rebound(sizes):
            layers = nn.ModuleList([nn.Linear(a, b) for a, b in zip(sizes, sizes[1:])])
            layers = [str(s) for s in sizes]
            return layers


        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.layers = mlp([4, 8, 2])
        """
    )
    summary = summarise_source(source, "core.py")
    assert summary.layer_factories == ["mlp"]
    assert "Net" in summary.parameter_classes
