"""The training-side plumbing probe: is a loss kept with its graph across a training
loop found however the loss reaches the accumulator?

A companion of probe.py (the evaluation side), not part of the test run and not tuned
on: it writes small projects that cross three dimensions and lints each one with every
rule (`--preview`), in this process:

- L, how the loss reaches the loop: computed inline, by a helper of this file or of
  another, by a step function that backpropagates and returns it (this file or
  another), by a learner object's update method, by the model's own loss method, as a
  helper's tuple or dict entry, by a loss module of the project, as a sum of two
  losses, by an `nn.CrossEntropyLoss()` object, by a learner class of another file
  (star-imported or by name).

Three more families, each with its own negatives: a recurrent state carried across
the loop (S: an RNN's hidden state, an LSTM cell's pair, a state the model keeps on
itself, a helper's; negatives detach, repackage or re-create it each iteration; any
GL001 finding catches it), a first derivative taken without `create_graph=True` by a
helper of this file or another and differentiated again (G: a WGAN-GP penalty, a PINN's
second derivative; negatives pass `create_graph=True`; GL005), and a TD target computed
by the trained network or an unfrozen copy of it (T: inline, in two steps, by a helper,
double DQN, with four loss spellings; negatives compute it under `no_grad` or detach
it; GL013).
- W, where the loop is: a `train(model, loader, opt)` function, a script's top level,
  a Trainer class's method;
- A, how it is kept: `total += loss`, `losses.append(loss)`, a dict of lists, `running =
  running + loss`, a sum weighted by the batch size, a project AverageMeter's
  `update(loss, n)`, a project tracker's `add(loss)`, `losses += [loss]`, a dict of sums.

Each positive keeps every iteration's graph alive for the loop's length (a GL006 or
GL015 finding anywhere in its project catches it). The negatives are the same programs
with the loss kept as `loss.item()` or `loss.detach()`: any GL006, GL015 or GL001
finding there is false.

    python bench/plumbing/training_probe.py            # the table and every miss
    python bench/plumbing/training_probe.py --keep DIR # also keep the projects written
"""

from __future__ import annotations

import argparse
import itertools
import sys
import textwrap
from pathlib import Path

from probe import lint_programs, print_misses, report

HEAD = "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n"

NET = """\
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)

    def forward(self, x):
        return self.fc(x)

    def loss(self, x, y):
        return F.cross_entropy(self(x), y)
"""

LOSSES = """\
def compute_loss(model, x, y):
    return F.cross_entropy(model(x), y)


def compute(model, x, y):
    out = model(x)
    return F.cross_entropy(out, y), out


def compute_dict(model, x, y):
    out = model(x)
    return {'loss': F.cross_entropy(out, y), 'out': out}


def train_step(model, opt, x, y):
    opt.zero_grad()
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    return loss


class Learner:
    def __init__(self, model, opt):
        self.model = model
        self.opt = opt

    def update(self, x, y):
        self.opt.zero_grad()
        loss = F.cross_entropy(self.model(x), y)
        loss.backward()
        self.opt.step()
        return loss


class Output:
    def __init__(self, loss, logits):
        self.loss = loss
        self.logits = logits


def run(model, x, y):
    out = model(x)
    return Output(F.cross_entropy(out, y), out)


def loss_terms(model, x, y):
    out = model(x)
    return {'ce': F.cross_entropy(out, y), 'reg': 0.01 * out.pow(2).mean()}


class SmoothedLoss(nn.Module):
    def __init__(self, eps=0.1):
        super().__init__()
        self.eps = eps

    def forward(self, out, y):
        return F.cross_entropy(out, y, label_smoothing=self.eps)
"""

KEEPERS = """\
class AverageMeter:
    def __init__(self):
        self.sum, self.count = 0.0, 0

    def update(self, value, n=1):
        self.sum += value * n
        self.count += n

    @property
    def avg(self):
        return self.sum / max(self.count, 1)


class Tracker:
    def __init__(self):
        self.values = []

    def add(self, value):
        self.values.append(value)
"""

LOADER = "loader = [(torch.randn(8, 4), torch.randint(0, 3, (8,)))]"

# the loss provenances whose call runs the whole step (zero_grad, backward, step)
STEPS = {"L4", "L5", "L6", "L13", "L14"}
# the provenances whose helpers live in another file: star-imported, or by name
ELSEWHERE = {"L3", "L5", "L13", "L14"}


def loss_lines(L, M, opt):
    """The loop's lines that leave the iteration's loss bound to `loss` (the step's own
    lines included where the provenance runs them)."""
    if L == "L1":
        return [f"loss = F.cross_entropy({M}(x), y)"]
    if L in ("L2", "L3"):
        return [f"loss = compute_loss({M}, x, y)"]
    if L in ("L4", "L5"):
        return [f"loss = train_step({M}, {opt}, x, y)"]
    if L in ("L6", "L13", "L14"):
        return ["loss = learner.update(x, y)"]
    if L == "L7":
        return [f"loss = {M}.loss(x, y)"]
    if L == "L8":
        return [f"loss, out = compute({M}, x, y)"]
    if L == "L9":
        return [f"result = compute_dict({M}, x, y)", "loss = result['loss']"]
    if L in ("L10", "L12"):
        return [f"loss = criterion({M}(x), y)"]
    if L == "L15":
        return [f"outputs = run({M}, x, y)", "loss = outputs.loss"]
    if L == "L16":
        return [f"loss_dict = loss_terms({M}, x, y)", "loss = sum(loss_dict.values())"]
    if L == "L11":
        return [
            f"out = {M}(x)",
            "loss = F.cross_entropy(out, y) + 0.01 * out.pow(2).mean()",
        ]
    raise ValueError(L)


def sink_lines(A, v):
    """(before-loop lines, the keeping line, the result) for the kept value `v`."""
    return {
        "A1": (["total = 0.0"], f"total += {v}", "total"),
        "A2": (["losses = []"], f"losses.append({v})", "losses"),
        "A3": (["history = {'loss': []}"], f"history['loss'].append({v})", "history"),
        "A4": (["running = 0.0"], f"running = running + {v}", "running"),
        "A5": (["epoch_loss = 0.0"], f"epoch_loss += {v} * x.size(0)", "epoch_loss"),
        "A6": (["meter = AverageMeter()"], f"meter.update({v}, x.size(0))", "meter.avg"),
        "A7": (["tracker = Tracker()"], f"tracker.add({v})", "tracker.values"),
        "A8": (["losses = []"], f"losses += [{v}]", "losses"),
        "A9": (["stats = {'loss': 0.0}"], f"stats['loss'] += {v}", "stats"),
    }[A]


def loop_lines(L, A, v, M, opt, setup):
    """The loop with its setup, the accumulator's start before it and its result after."""
    before, keep, result = sink_lines(A, v)
    body = loss_lines(L, M, opt)
    if L not in STEPS:
        body = [f"{opt}.zero_grad()", *body, "loss.backward()", f"{opt}.step()"]
    lines = [*setup, *before, "for x, y in loader:"]
    lines += ["    " + line for line in [*body, keep]]
    return lines, result


def setup_lines(L, M, opt):
    if L in ("L6", "L13", "L14"):
        return [f"learner = Learner({M}, {opt})"]
    if L == "L10":
        return ["criterion = SmoothedLoss()"]
    if L == "L12":
        return ["criterion = nn.CrossEntropyLoss()"]
    return []


def program(L, W, A, v):
    """{relative path: text} of one project."""
    helpers = HEAD + "\n\n" + LOSSES + "\n\n" + KEEPERS
    if L == "L14":
        imports = "from helpers import Learner\n"
        here = "\n\n" + KEEPERS
    elif L in ELSEWHERE:
        imports = "from helpers import *\n"
        here = "\n\n" + KEEPERS
    else:
        imports = ""
        here = "\n\n" + LOSSES + "\n\n" + KEEPERS
    top = HEAD + imports + "\n\n" + NET + here + "\n\n"
    if W == "W1":  # a train function
        lines, result = loop_lines(L, A, v, "model", "opt", setup_lines(L, "model", "opt"))
        text = "def train(model, loader, opt):\n" + textwrap.indent(
            "\n".join([*lines, f"return {result}"]), "    "
        )
        text += (
            "\n\n\nif __name__ == '__main__':\n"
            f"    {LOADER}\n"
            "    model = Net()\n"
            "    opt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
            "    print(train(model, loader, opt))\n"
        )
    elif W == "W2":  # a script's top level
        lines, result = loop_lines(L, A, v, "model", "opt", setup_lines(L, "model", "opt"))
        text = "\n".join(
            [
                LOADER,
                "model = Net()",
                "opt = torch.optim.SGD(model.parameters(), lr=0.1)",
                *lines,
                f"print({result})",
            ]
        )
        text += "\n"
    else:  # a Trainer class's method
        setup = setup_lines(L, "self.model", "self.opt")
        lines, result = loop_lines(L, A, v, "self.model", "self.opt", [])
        init = [
            "def __init__(self, model):",
            "    self.model = model",
            "    self.opt = torch.optim.SGD(model.parameters(), lr=0.1)",
            *["    " + line.replace("learner =", "self.learner =") for line in setup],
        ]
        fit = ["def fit(self, loader):", *["    " + line for line in lines]]
        fit.append(f"    return {result}")
        body = "\n".join([*init, "", *fit]).replace("learner.update", "self.learner.update")
        body = body.replace("self.self.learner", "self.learner")
        body = body.replace("= criterion(", "= self.criterion(").replace(
            "criterion = ", "self.criterion = "
        )
        body = body.replace("self.self.criterion", "self.criterion")
        text = "class Trainer:\n" + textwrap.indent(body, "    ") + "\n"
        text += (
            f"\n\nif __name__ == '__main__':\n    {LOADER}\n    print(Trainer(Net()).fit(loader))\n"
        )
    files = {"main.py": top + text}
    if L in ELSEWHERE:
        files["helpers.py"] = helpers
    return files


RNN = """\
class RNNNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = nn.GRU(4, 8, batch_first=True)
        self.head = nn.Linear(8, 3)

    def init_hidden(self, batch):
        return torch.zeros(1, batch, 8)

    def forward(self, x, hidden):
        out, hidden = self.rnn(x.unsqueeze(1), hidden)
        return self.head(out[:, -1]), hidden


class StatefulNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.cell = nn.GRUCell(4, 8)
        self.head = nn.Linear(8, 3)
        self.hidden = None

    def forward(self, x):
        if self.hidden is None:
            self.hidden = torch.zeros(x.size(0), 8)
        self.hidden = self.cell(x, self.hidden)
        return self.head(self.hidden)


def step_state(model, x, hidden):
    out, hidden = model(x, hidden)
    return out, hidden


def repackage_hidden(h):
    if isinstance(h, torch.Tensor):
        return h.detach()
    return tuple(repackage_hidden(v) for v in h)
"""


def carried_lines(S, cut, M):
    """(before-loop lines, loop lines up to the output `out`) carrying a state across
    the iterations; `cut` detaches or re-creates it in the loop (a negative)."""
    if S == "S7":  # the model keeps the state on itself
        before = []
        loop = [f"out = {M}(x)"]
        if cut == "detach":
            loop.append(f"{M}.hidden = {M}.hidden.detach()")
        elif cut == "repackage":
            loop.append(f"{M}.hidden = repackage_hidden({M}.hidden)")
        elif cut == "fresh":
            loop.insert(0, f"{M}.hidden = None")
        return before, loop
    if S == "S2":  # an LSTM cell's pair
        before = ["h, c = torch.zeros(8, 8), torch.zeros(8, 8)"]
        state = "(h, c)"
        step = ["h, c = cell(x, (h, c))", "out = head(h)"]
    elif S == "S8":  # a plain recurrence through the model
        before = ["h = torch.zeros(8, 3)"]
        state = "h"
        step = [f"h = 0.5 * h + {M}(x, None)[0]", "out = h"]
    else:
        before = {
            "S1": ["hidden = None"],
            "S3": [f"hidden = {M}.init_hidden(8)"],
            "S4": ["hidden = None"],
            "S5": ["hidden = None"],
            "S6": ["hidden = None"],
        }[S]
        state = "hidden"
        call = f"step_state({M}, x, hidden)" if S == "S6" else f"{M}(x, hidden)"
        step = [f"out, hidden = {call}"]
    if cut == "detach":
        if state == "(h, c)":
            pre = ["h, c = h.detach(), c.detach()"]
        else:
            pre = (
                [f"{state} = {state}.detach()"]
                if S != "S1"
                else ["hidden = hidden.detach() if hidden is not None else None"]
            )
        if S in ("S4", "S5", "S6"):
            pre = ["hidden = hidden.detach() if hidden is not None else None"]
        loop = pre + step
    elif cut == "repackage":
        if S in ("S1", "S4", "S5", "S6"):
            pre = ["if hidden is not None:", "    hidden = repackage_hidden(hidden)"]
        else:
            pre = [f"{state.strip('()').split(',')[0] if False else ''}"]
            pre = (
                ["h, c = repackage_hidden((h, c))"]
                if state == "(h, c)"
                else [f"{state} = repackage_hidden({state})"]
            )
        loop = pre + step
    elif cut == "fresh":
        loop = [*before] + step
        before = []
    else:
        loop = step
    return before, loop


def carried_program(S, W, cut):
    """{relative path: text} of one carried-state project."""
    model_class = "StatefulNet" if S == "S7" else "RNNNet"
    if S == "S4":
        imports, here = "from nets import RNNNet, step_state, repackage_hidden\n", ""
    elif S == "S5":
        imports, here = "from nets import *\n", ""
    else:
        imports, here = "", "\n\n" + RNN
    top = HEAD + imports + here + "\n\n"
    M = "self.model" if W == "W3" else "model"
    before, loop = carried_lines(S, cut, M)
    setup = []
    if S == "S2":
        setup = ["cell = nn.LSTMCell(4, 8)", "head = nn.Linear(8, 3)"]
        params = "list(cell.parameters()) + list(head.parameters())"
    else:
        params = f"{M}.parameters()"
    body = [
        *setup,
        f"opt = torch.optim.SGD({params}, lr=0.1)",
        *before,
        "for x, y in loader:",
        *["    " + line for line in loop],
        "    loss = F.cross_entropy(out, y)",
        "    opt.zero_grad()",
        "    loss.backward()",
        "    opt.step()",
    ]
    if W == "W1":
        text = "def train(model, loader):\n" + textwrap.indent("\n".join(body), "    ")
        text += (
            f"\n\n\nif __name__ == '__main__':\n    {LOADER}\n    train({model_class}(), loader)\n"
        )
    elif W == "W2":
        text = "\n".join([LOADER, f"model = {model_class}()", *body]) + "\n"
    else:
        fit = ["def fit(self, loader):", *["    " + line for line in body]]
        init = ["def __init__(self, model):", "    self.model = model"]
        text = "class Trainer:\n" + textwrap.indent("\n".join([*init, "", *fit]), "    ")
        text += (
            f"\n\n\nif __name__ == '__main__':\n    {LOADER}\n"
            f"    Trainer({model_class}()).fit(loader)\n"
        )
    files = {"main.py": top + text}
    if S in ("S4", "S5"):
        files["nets.py"] = HEAD + "\n\n" + RNN
    return files


STATES = [f"S{i}" for i in range(1, 9)]
CUTS = ["detach", "repackage", "fresh"]


QNET = """\
class QNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)

    def forward(self, s):
        return self.fc(s)
"""

REPLAY = "batches = [(torch.randn(8, 4), torch.randint(0, 2, (8,)), torch.randn(8), torch.randn(8, 4), torch.zeros(8))]"


def target_lines(T, Q, cut):
    """Lines that leave the TD target in `target`, from the network `Q` on `s2`."""
    if T == "T1":
        lines = [f"target = r + 0.99 * {Q}(s2).max(1)[0] * (1 - d)"]
    elif T == "T2":
        lines = [f"next_q = {Q}(s2).max(1)[0]", "target = r + 0.99 * next_q * (1 - d)"]
    elif T == "T3":
        lines = [f"target = td_target({Q}, r, s2, d)"]
    else:  # T4: double DQN, the online network picks, the target network values
        lines = [
            f"best = {Q}(s2).argmax(1, keepdim=True)",
            f"target = r + 0.99 * {Q}(s2).gather(1, best).squeeze(1) * (1 - d)",
        ]
    if cut == "no_grad":
        return ["with torch.no_grad():", *["    " + line for line in lines]]
    if cut == "detach":
        return [*lines, "target = target.detach()"]
    return lines


def loss_line(F_):
    return {
        "F1": "loss = F.mse_loss(q_sa, target)",
        "F2": "loss = F.smooth_l1_loss(q_sa, target)",
        "F3": "loss = (q_sa - target).pow(2).mean()",
        "F4": "loss = criterion(q_sa, target)",
    }[F_]


TD_TARGET = """\
def td_target(q, r, s2, d):
    return r + 0.99 * q(s2).max(1)[0] * (1 - d)
"""


def td_program(Q, T, F_, cut):
    """{relative path: text} of one Q-learning project: the prediction `Q(s)`, a target
    from the same network (Q1..Q4) or an unfrozen copy (Q5, Q6)."""
    in_class = Q in ("Q4", "Q6")
    online = "self.q" if in_class else "q_net"
    target_net = {"Q5": "target_net", "Q6": "self.target"}.get(Q, online)
    body = [
        "for s, a, r, s2, d in batches:",
        *["    " + line for line in target_lines(T, target_net, cut)],
        f"    q_sa = {online}(s).gather(1, a.unsqueeze(1)).squeeze(1)",
        "    " + loss_line(F_),
        "    opt.zero_grad()",
        "    loss.backward()",
        "    opt.step()",
    ]
    setup = ["criterion = nn.MSELoss()"] if F_ == "F4" else []
    if in_class:
        init = [
            "def __init__(self, q):",
            "    self.q = q",
            "    self.opt = torch.optim.Adam(self.q.parameters())",
        ]
        if Q == "Q6":
            init.append("    self.target = copy.deepcopy(q)")
        if F_ == "F4":
            init.append("    self.criterion = nn.MSELoss()")
        learn = ["def learn(self, batches):", "    opt = self.opt"]
        learn += ["    " + line.replace("criterion(", "self.criterion(") for line in body]
        text = "class Agent:\n" + textwrap.indent("\n".join([*init, "", *learn]), "    ")
        text += (
            f"\n\n\nif __name__ == '__main__':\n    {REPLAY}\n    Agent(QNet()).learn(batches)\n"
        )
    else:
        lines = ["q_net = QNet()", "opt = torch.optim.Adam(q_net.parameters())"]
        if Q == "Q5":
            lines.append("target_net = copy.deepcopy(q_net)")
        lines += setup + body
        text = "def learn(batches):\n" + textwrap.indent("\n".join(lines), "    ")
        text += f"\n\n\nif __name__ == '__main__':\n    {REPLAY}\n    learn(batches)\n"
    head = "import copy\n" + HEAD
    if Q == "Q2":
        top = head + "from nets import QNet\n\n\n" + TD_TARGET + "\n\n"
        return {"main.py": top + text, "nets.py": HEAD + "\n\n" + QNET}
    if Q == "Q3":
        top = head + "from nets import *\n\n\n"
        return {"main.py": top + text, "nets.py": HEAD + "\n\n" + QNET + "\n\n" + TD_TARGET}
    return {"main.py": head + "\n\n" + QNET + "\n\n" + TD_TARGET + "\n\n" + text}


NETWORKS = [f"Q{i}" for i in range(1, 7)]
TARGETS = [f"T{i}" for i in range(1, 5)]
LOSS_FORMS = [f"F{i}" for i in range(1, 5)]


PENALTY = """\
def gradient_penalty(D, real, fake):
    alpha = torch.rand(real.size(0), 1)
    x = (alpha * real + (1 - alpha) * fake).requires_grad_(True)
    grads = torch.autograd.grad(D(x).sum(), x)[0]
    return ((grads.norm(2, dim=1) - 1) ** 2).mean()


def gradient(y, x):
    return torch.autograd.grad(y, x, grad_outputs=torch.ones_like(y))[0]
"""


def penalty_program(H, U, cut):
    """{relative path: text} of one program whose first derivative, taken by a helper
    (H1 this file, H2 another by name, H3 another by star import), is differentiated
    again: a WGAN-GP penalty in a loss (U1), backpropagated alone (U2), or a PINN's
    second derivative through the same helper (U3). The negative takes it with
    `create_graph=True`."""
    helpers = PENALTY
    if cut == "create_graph":
        helpers = helpers.replace("x)[0]\n", "x, create_graph=True)[0]\n").replace(
            "torch.ones_like(y))[0]", "torch.ones_like(y), create_graph=True)[0]"
        )
    if U == "U3":
        body = [
            "net = nn.Sequential(nn.Linear(1, 16), nn.Tanh(), nn.Linear(16, 1))",
            "opt = torch.optim.Adam(net.parameters())",
            "for step in range(3):",
            "    x = torch.rand(32, 1, requires_grad=True)",
            "    u = net(x)",
            "    u_xx = gradient(gradient(u, x), x)",
            "    loss = (u_xx + u).pow(2).mean()",
            "    opt.zero_grad()",
            "    loss.backward()",
            "    opt.step()",
        ]
    else:
        loss = (
            ["loss = D(fake).mean() - D(real).mean() + 10 * gradient_penalty(D, real, fake)"]
            if U == "U1"
            else ["gp = gradient_penalty(D, real, fake)", "loss = 10 * gp"]
        )
        body = [
            "D = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))",
            "opt = torch.optim.Adam(D.parameters())",
            "for real, fake in [(torch.randn(8, 4), torch.randn(8, 4))]:",
            *["    " + line for line in loss],
            "    opt.zero_grad()",
            "    loss.backward()",
            "    opt.step()",
        ]
    text = "def train():\n" + textwrap.indent("\n".join(body), "    ") + "\n"
    text += "\n\nif __name__ == '__main__':\n    train()\n"
    if H == "H1":
        return {"main.py": HEAD + "\n\n" + helpers + "\n\n" + text}
    imports = (
        "from penalty import gradient, gradient_penalty\n"
        if H == "H2"
        else "from penalty import *\n"
    )
    return {"main.py": HEAD + imports + "\n\n" + text, "penalty.py": "import torch\n\n\n" + helpers}


HELPER_PLACES = ["H1", "H2", "H3"]
PENALTY_USES = ["U1", "U2", "U3"]


PROVENANCES = [f"L{i}" for i in range(1, 17)]
PLACES = ["W1", "W2", "W3"]
KEEPS = [f"A{i}" for i in range(1, 10)]
# the kept value: the loss itself (positive), or cut from its graph (negative)
VALUES = {"": "loss", "item": "loss.item()", "detach": "loss.detach()"}


def programs():
    """(name, expected POS or NEG, {relative path: text}) for every program: the kept
    losses (names K_...), then the carried states (names S_...)."""
    for L, W, A in itertools.product(PROVENANCES, PLACES, KEEPS):
        for cut, v in VALUES.items():
            if L == "L16":  # one entry of the dict of loss terms is what is kept
                v = v.replace("loss", "loss_dict['ce']", 1)
            files = program(L, W, A, v)
            files["setup.py"] = ""  # the project's root: its files are what is searched
            yield f"K_{L}_{W}_{A}" + (f"_{cut}" if cut else ""), "NEG" if cut else "POS", files
    for S, W in itertools.product(STATES, PLACES):
        for cut in ["", *CUTS]:
            files = carried_program(S, W, cut)
            files["setup.py"] = ""
            yield f"S_{S}_{W}" + (f"_{cut}" if cut else ""), "NEG" if cut else "POS", files
    for H, U in itertools.product(HELPER_PLACES, PENALTY_USES):
        for cut in ("", "create_graph"):
            files = penalty_program(H, U, cut)
            files["setup.py"] = ""
            yield f"G_{H}_{U}" + (f"_{cut}" if cut else ""), "NEG" if cut else "POS", files
    for Q, T, F_ in itertools.product(NETWORKS, TARGETS, LOSS_FORMS):
        for cut in ("", "no_grad", "detach"):
            files = td_program(Q, T, F_, cut)
            files["setup.py"] = ""
            yield f"T_{Q}_{T}_{F_}" + (f"_{cut}" if cut else ""), "NEG" if cut else "POS", files


def found_in(name: str, expect: str, codes: set[str]) -> bool:
    """Does the program's family's finding show in its project's codes?"""
    if name.startswith("T_"):
        return "GL013" in codes
    if name.startswith("G_"):
        return "GL005" in codes
    if expect == "NEG":
        return bool(codes & {"GL001", "GL006", "GL015"})
    if name.startswith("K_"):
        return bool(codes & {"GL006", "GL015"})
    return "GL001" in codes


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--keep", type=Path, help="write the projects here and keep them")
    args = parser.parse_args(argv)
    results = [
        (name, expect, found_in(name, expect, codes), codes)
        for name, expect, codes in lint_programs(programs(), args.keep, "gradlint-training-")
    ]
    for family, title, dimensions in (
        ("K", "kept losses", ((1, "provenance"), (2, "loop"), (3, "kept by"))),
        ("S", "carried states", ((1, "state"), (2, "loop"))),
        ("G", "second derivatives", ((1, "helper"), (2, "use"))),
        ("T", "TD targets", ((1, "network"), (2, "target"), (3, "loss"))),
    ):
        report([r for r in results if r[0].startswith(family + "_")], dimensions, title)
    print_misses(results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
