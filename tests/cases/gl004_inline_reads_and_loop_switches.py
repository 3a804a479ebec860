"""GL004 where the eval forward's output is read as numbers inside its own statement
(`print(model(x).argmax(1))`, `losses.append(criterion(model(x), y).item())`), as GL012
already says of a model in training mode, and where the eval switch goes through the
variable of a loop over the models (`for net in (G, D): net.eval()`). Not a switch under
a condition in the loop, which puts only some modules in eval mode. Lint only: markers
are the expected findings."""

import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 2)
        self.bn = nn.BatchNorm1d(2)

    def forward(self, x):
        return self.bn(self.fc(x))


model = Net()
critic = Net()
criterion = nn.CrossEntropyLoss()
loader = [(torch.randn(4, 3), torch.zeros(4, dtype=torch.long))]


def show_predictions():
    model.eval()
    for x, _ in loader:
        print(model(x).argmax(1))  # error: GL004


def show_losses(losses):
    model.eval()
    for x, y in loader:
        losses.append(criterion(model(x), y).item())  # error: GL004


def check_shape():
    model.eval()
    x, _ = loader[0]
    model(x).sum().backward()  # differentiated: the graph is used


def score_both():
    for net in (model, critic):
        net.eval()
    x, _ = loader[0]
    out = critic(model(x))  # error: GL004
    return out.mean().item()


def freeze_norms():
    for m in model.modules():
        if isinstance(m, nn.BatchNorm1d):
            m.eval()
    x, _ = loader[0]
    # some layers only: not known to be in eval mode, so not GL004's; the graph is still
    # thrown away, and another model's switch does not make this forward GL004's
    out = model(x)  # error: GL012
    return out.mean().item()


nets = {"G": Net(), "D": Net()}
ensemble = [Net(), Net()]
images = []


def sample_from_all():
    # a loop over a dict's values, its items, or an enumeration of a list switches
    # every element; a forward of one picked by a constant key is in eval mode
    for m in nets.values():
        m.eval()
    x, _ = loader[0]
    images.append(nets["G"](x).cpu())  # error: GL004


def sample_from_items():
    for _name, m in nets.items():
        m.eval()
    x, _ = loader[0]
    images.append(nets["D"](x).cpu())  # error: GL004


def sample_from_ensemble():
    for _i, m in enumerate(ensemble):
        m.eval()
    x, _ = loader[0]
    images.append(ensemble[1](x).cpu())  # error: GL004


def sample_after_one_is_switched_back():
    for m in nets.values():
        m.eval()
    nets["G"].train()
    x, _ = loader[0]
    images.append(nets["G"](x).cpu())  # training mode again: neither GL004 nor GL012


def sample_all_but_one():
    # an iteration may skip the switch: not every element is known to be in eval mode
    for name, m in nets.items():
        if name == "G":
            continue
        m.eval()
    x, _ = loader[0]
    images.append(nets["G"](x).cpu())


def sample_after_the_first():
    for m in ensemble:
        m.eval()
        break
    x, _ = loader[0]
    images.append(ensemble[1](x).cpu())


def sample_a_replaced_one():
    for m in nets.values():
        m.eval()
    nets["G"] = Net()  # a new module, in training mode
    x, _ = loader[0]
    images.append(nets["G"](x).cpu())


def sample_one_switched_back_by_its_name():
    for m in nets.values():
        m.eval()
    g = nets["G"]
    g.train()
    x, _ = loader[0]
    images.append(nets["G"](x).cpu())


def frozen_features(x):
    model.eval()
    return model(x)  # its caller differentiates it: the graph is used


def fit_head():
    x, y = loader[0]
    loss = criterion(critic(frozen_features(x)), y)
    loss.backward()
