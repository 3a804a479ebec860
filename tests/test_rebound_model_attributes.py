"""A name bound to instances of several classes of the file (issue "Generalise"): a
course notebook compares architectures by binding `model` to one, training it, then to
the next, and hands each to the same plotting helper. What the helper runs,
`model.decoder(z)`, is the decoder of whichever class was built: each of them sets
`self.decoder` to a layer with weights, so the forward records a graph that the plot
throws away (for the calls that hand it a class whose decoder has weights). When one
of the classes does not set the attribute, or is not a class of the file, what it is
cannot be told."""

from __future__ import annotations

from test_project import findings, write

AUTOENCODERS = """
    import torch
    import torch.nn as nn


    class AE(nn.Module):
        def __init__(self):
            super().__init__()
            self.encoder = nn.Linear(8, 2)
            self.decoder = nn.Linear(2, 8)


    class DeepAE(nn.Module):
        def __init__(self):
            super().__init__()
            self.encoder = nn.Sequential(nn.Linear(8, 4), nn.ReLU(), nn.Linear(4, 2))
            self.decoder = nn.Sequential(nn.Linear(2, 4), nn.ReLU(), nn.Linear(4, 8))


    def plot(model):
        encoded = model.encoder(torch.randn(4, 8))
        decoded = model.decoder(encoded)
        return decoded.cpu().data.numpy(), encoded.cpu().data.numpy()


    model = AE()
    model = model.to("cpu")
    optimizer = torch.optim.Adam(model.parameters())
    plot(model)
    model = DeepAE()
    optimizer = torch.optim.Adam(model.parameters())
    plot(model)
"""


def _findings(tmp_path, source: str) -> list[tuple[int, str]]:
    write(tmp_path, {"compare.py": source})
    return findings(tmp_path / "compare.py")


def test_the_attribute_of_every_class_built_has_weights(tmp_path):
    assert (21, "GL012") in _findings(tmp_path, AUTOENCODERS)


def test_no_weights_in_any_class_built_records_no_graph(tmp_path):
    parameterless = AUTOENCODERS.replace(
        "self.decoder = nn.Linear(2, 8)", "self.decoder = nn.Sigmoid()"
    ).replace(
        "self.decoder = nn.Sequential(nn.Linear(2, 4), nn.ReLU(), nn.Linear(4, 8))",
        "self.decoder = nn.Tanh()",
    )
    assert (21, "GL012") not in _findings(tmp_path, parameterless)
