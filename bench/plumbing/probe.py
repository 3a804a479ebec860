"""The plumbing probe: does an evaluation forward stay found however the model reaches it?

Not part of the test run, and not tuned on: it writes small projects that cross three
dimensions and lints each one with every rule (`--preview`), in this process:

- P, the model's provenance: built in the evaluation, handed in from this file or
  another, kept by an object (built there, handed to it, in another file, by a base
  class of another file), a dict or list of models, `torch.load`, a factory of this file
  or another (re-exported, choosing a class, loading weights), a module-level model
  read as a global or imported, a registry of classes, DataParallel, `deepcopy`, a
  torchvision model, a method of the model, a keyword argument, a chain of two helpers;
- C, where the mode is: `eval()` in the evaluation (GL004), in its caller (GL004), or
  nowhere (GL012);
- U, how the output ends as numbers: a correct count, a loss total, numpy predictions,
  probabilities as lists, outputs gathered then compared, a dict of metric lists, a
  printed loss, a helper's tuple.

Each positive records a graph for nothing (a GL004, GL012 or GL015 finding anywhere in
its project catches it). The negatives are the C1 programs with the loop under `with
torch.no_grad():` or the function under `@torch.no_grad()`: any such finding there is
false. The corpus census measures real code; this measures the model's reach over
plumbing nobody picked from the corpus, so a gap it shows is a gap of the model.

    python bench/plumbing/probe.py            # the table by dimension, and every miss
    python bench/plumbing/probe.py --keep DIR # also keep the projects written
"""

from __future__ import annotations

import argparse
import collections
import itertools
import shutil
import sys
import tempfile
import textwrap
from pathlib import Path

NET = """\
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)

    def forward(self, x):
        return self.fc(x)

    def predict(self, x):
        return self(x).softmax(-1)
"""

TRAIN = """\
def train(model, loader):
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    model.train()
    for x, y in loader:
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
"""

HEAD = "import copy\nimport numpy as np\nimport torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n"

LOADER = "loader = [(torch.randn(8, 4), torch.randint(0, 3, (8,)))]"


def use_lines(U, M):
    """(before-loop lines, loop body lines, after lines) computing from M(x)."""
    if U == "U1":  # correct count
        return (
            ["correct = 0"],
            [f"out = {M}(x)", "correct += out.argmax(1).eq(y).sum().item()"],
            ["return correct"],
        )
    if U == "U2":  # loss total
        return (
            ["total = 0.0"],
            [f"out = {M}(x)", "total += F.cross_entropy(out, y).item()"],
            ["return total"],
        )
    if U == "U3":  # numpy predictions
        return (
            ["preds = []"],
            [f"preds.append({M}(x).detach().cpu().numpy())"],
            ["return np.concatenate(preds)"],
        )
    if U == "U4":  # probabilities as lists
        return (
            ["results = []"],
            [f"probs = torch.softmax({M}(x), -1)", "results.extend(probs.tolist())"],
            ["return results"],
        )
    if U == "U5":  # outputs gathered then compared
        return (
            ["outs, ys = [], []"],
            [f"outs.append({M}(x))", "ys.append(y)"],
            [
                "acc = torch.cat(outs).argmax(1).eq(torch.cat(ys)).float().mean().item()",
                "return acc",
            ],
        )
    if U == "U6":  # dict of metric lists
        return (
            ["metrics = {'loss': [], 'acc': []}"],
            [
                f"out = {M}(x)",
                "metrics['loss'].append(F.cross_entropy(out, y).item())",
                "metrics['acc'].append((out.argmax(1) == y).float().mean().item())",
            ],
            ["return metrics"],
        )
    if U == "U7":  # printed per batch
        return ([], [f"loss = F.cross_entropy({M}(x), y)", "print('val loss', loss.item())"], [])
    if U == "U8":  # tuple result of a helper, then numbers
        return (
            ["n = 0"],
            [
                f"labels, scores = top1({M}, x)",
                "n += labels.eq(y).sum().item() + scores.sum().item()",
            ],
            ["return n"],
        )
    if U == "U9":  # a loss and an accuracy returned as tensors, read as numbers by the caller
        return (
            ["losses, accs = [], []"],
            [
                f"out = {M}(x)",
                "losses.append(F.cross_entropy(out, y))",
                "accs.append((out.argmax(1) == y).float().mean())",
            ],
            [
                "loss, acc = torch.stack(losses).mean(), torch.stack(accs).mean()",
                "return loss.item(), acc.item()",
            ],
        )
    if U == "U10":  # an AverageMeter of `.item()` values
        return (
            ["meter = AverageMeter()"],
            [f"loss = F.cross_entropy({M}(x), y)", "meter.update(loss.item(), x.size(0))"],
            ["return meter.sum / meter.count"],
        )
    if U == "U11":  # a metric helper that makes the number
        return (["accs = []"], [f"accs.append(accuracy({M}(x), y))"], ["return sum(accs)"])
    if U == "U12":  # `.data.max(1)[1]`, as old code reads predictions
        return (
            ["correct = 0"],
            [f"pred = {M}(x).data.max(1)[1]", "correct += pred.eq(y).sum().item()"],
            ["return correct"],
        )
    raise ValueError(U)


TOP1 = """\
def top1(model, x):
    out = model(x)
    return out.argmax(1), out.max(1)[0]


class AverageMeter:
    def __init__(self):
        self.sum, self.count = 0.0, 0

    def update(self, value, n=1):
        self.sum += value * n
        self.count += n


def accuracy(out, y):
    return (out.argmax(1) == y).float().mean().item()
"""


def script_main(lines: list[str]) -> str:
    """The script's `if __name__ == '__main__':` block of these (indented) lines."""
    return "\n\nif __name__ == '__main__':\n" + "\n".join(lines) + "\n"


def eval_function(name, params, M, U, prelude=(), guard=None, indent=""):
    before, body, after = use_lines(U, M)
    lines = [f"def {name}({', '.join(params)}):"]
    inner = list(prelude) + before
    loop = ["for x, y in loader:"] + ["    " + b for b in body]
    if guard == "with":
        loop = ["with torch.no_grad():"] + ["    " + line for line in loop]
    inner += loop + after
    lines += ["    " + line for line in inner]
    text = "\n".join(lines) + "\n"
    if guard == "decorator":
        text = "@torch.no_grad()\n" + text
    return textwrap.indent(text, indent)


def program(P, C, U, guard):
    """files dict, or None when the combination makes no sense."""
    ev_in = C == "C1"
    ev_out = C == "C2"
    files = {}
    if P == "P1":  # built locally in the evaluation
        if ev_out:
            return None
        pre = ["model = Net()", "model.load_state_dict(torch.load('w.pt'))"] + (
            ["model.eval()"] if ev_in else []
        )
        src = (
            HEAD
            + NET
            + "\n\n"
            + TOP1
            + "\n\n"
            + eval_function("evaluate", ["loader"], "model", U, pre, guard)
        )
        src += script_main([f"    {LOADER}", "    print(evaluate(loader))"])
        files["main.py"] = src
        return files
    if P in ("P2", "P3", "P9", "P10", "P12", "P13", "P15", "P16", "P17", "P18"):
        M = "model.predict" if P == "P17" else "model"
        pre = ["model.eval()"] if ev_in else []
        ev = eval_function("evaluate", ["model", "loader"], M, U, pre, guard)
        build = {
            "P2": "model = Net()",
            "P3": "model = Net()",
            "P9": "model = torch.load('model.pt')",
            "P10": "model = build_model()",
            "P12": "model = nn.DataParallel(Net().to(device))",
            "P13": "model = Net()",
            "P15": "model = Net()",
            "P16": "model = torchvision.models.resnet18(num_classes=3)",
            "P17": "model = Net()",
            "P18": "model = Net().to(device)",
        }[P]
        main = [f"    {LOADER}", "    device = 'cpu'", f"    {build}"]
        if P != "P9":
            main.append("    train(model, loader)")
        target = "model"
        if P == "P13":
            main.append("    ema = copy.deepcopy(model)")
            target = "ema"
        if ev_out:
            main.append(f"    {target}.eval()")
        main.append(f"    print(evaluate({target}, loader))")
        main_block = script_main(main)
        imports = ""
        if P == "P16":
            imports = "import torchvision\n"
        if P == "P3":
            files["models.py"] = NET
            files["utils.py"] = HEAD + "\n\n" + TOP1 + "\n\n" + ev
            files["main.py"] = (
                HEAD
                + "from models import Net\nfrom utils import evaluate\n\n\n"
                + TRAIN
                + main_block
            )
            return files
        if P == "P10":
            files["models.py"] = NET + "\n\ndef build_model():\n    return Net()\n"
            files["main.py"] = (
                HEAD
                + "from models import build_model\n\n\n"
                + TOP1
                + "\n\n"
                + TRAIN
                + "\n\n"
                + ev
                + main_block
            )
            return files
        if P == "P15":
            files["models/__init__.py"] = "from .net import Net\n"
            files["models/net.py"] = NET
            files["main.py"] = (
                HEAD
                + "from models import Net\n\n\n"
                + TOP1
                + "\n\n"
                + TRAIN
                + "\n\n"
                + ev
                + main_block
            )
            return files
        files["main.py"] = (
            HEAD + imports + NET + "\n\n" + TOP1 + "\n\n" + TRAIN + "\n\n" + ev + main_block
        )
        return files
    if P in ("P19", "P20", "P21", "P23", "P24", "P30", "P31"):
        pre = ["model.eval()"] if ev_in else []
        ev = eval_function("evaluate", ["model", "loader"], "model", U, pre, guard)
        main = [f"    {LOADER}"]
        extra_main_imports = ""
        defs = ""
        if P == "P19":
            defs = "def build_model():\n    return Net()\n\n\n"
            main.append("    model = build_model()")
        elif P == "P20":
            files["models.py"] = (
                NET
                + "\n\nclass Net2(Net):\n    pass\n\n\ndef get_model(name):\n    if name == 'a':\n        return Net()\n    return Net2()\n"
            )
            extra_main_imports = "from models import get_model\n"
            main.append("    model = get_model('a')")
        elif P == "P21":
            files["models.py"] = (
                NET
                + "\n\ndef load_model(path):\n    m = Net()\n    m.load_state_dict(torch.load(path))\n    return m\n"
            )
            extra_main_imports = "from models import load_model\n"
            main.append("    model = load_model('w.pt')")
        elif P == "P23":
            files["models.py"] = (
                "import torch.nn as nn\n\nmodel = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))\n"
            )
            extra_main_imports = "from models import model\n"
        elif P == "P24":
            defs = "MODELS = {'net': Net}\n\n\n"
            main.append("    model = MODELS['net']()")
        else:
            main.append("    model = Net()")
        if P != "P23":
            pass
        main.append("    train(model, loader)")
        if ev_out:
            main.append("    model.eval()")
        if P == "P30":
            main.append("    print(evaluate(model=model, loader=loader))")
        elif P == "P31":
            main.append("    print(run_eval(model, loader))")
        else:
            main.append("    print(evaluate(model, loader))")
        main_block = script_main(main)
        if P == "P31":
            files["models.py"] = NET
            files["evaluation.py"] = (
                HEAD
                + "\n\n"
                + TOP1
                + "\n\n"
                + ev
                + "\n\ndef run_eval(model, loader):\n    return evaluate(model, loader)\n"
            )
            files["main.py"] = (
                HEAD
                + "from models import Net\nfrom evaluation import run_eval\n\n\n"
                + TRAIN
                + main_block
            )
            return files
        if P in ("P20", "P21", "P23"):
            files["main.py"] = (
                HEAD
                + extra_main_imports
                + "\n\n"
                + TOP1
                + "\n\n"
                + TRAIN
                + "\n\n"
                + ev
                + main_block
            )
            return files
        files["main.py"] = (
            HEAD + NET + "\n\n" + defs + TOP1 + "\n\n" + TRAIN + "\n\n" + ev + main_block
        )
        return files
    if P in ("P4", "P5", "P6"):
        pre = ["self.model.eval()"] if ev_in else []
        meth = eval_function(
            "evaluate", ["self", "loader"], "self.model", U, pre, guard, indent="    "
        )
        init = (
            "    def __init__(self):\n        self.model = Net()\n"
            if P == "P4"
            else "    def __init__(self, model):\n        self.model = model\n"
        )
        cls = "class Evaluator:\n" + init + "\n" + meth
        main = [f"    {LOADER}"]
        if P == "P4":
            main += ["    ev = Evaluator()", "    train(ev.model, loader)"]
        else:
            main += ["    model = Net()", "    train(model, loader)", "    ev = Evaluator(model)"]
        if ev_out:
            main.append("    ev.model.eval()")
        main.append("    print(ev.evaluate(loader))")
        main_block = script_main(main)
        if P == "P6":
            files["models.py"] = NET
            files["evaluator.py"] = HEAD + "\n\n" + TOP1 + "\n\n" + cls
            files["main.py"] = (
                HEAD
                + "from models import Net\nfrom evaluator import Evaluator\n\n\n"
                + TRAIN
                + main_block
            )
            return files
        files["main.py"] = HEAD + NET + "\n\n" + TOP1 + "\n\n" + TRAIN + "\n\n" + cls + main_block
        return files
    if P == "P7":  # dict of models
        pre = ["models['net'].eval()"] if ev_in else []
        ev = eval_function("evaluate", ["models", "loader"], "models['net']", U, pre, guard)
        main = [
            f"    {LOADER}",
            "    model = Net()",
            "    train(model, loader)",
            "    models = {'net': model}",
        ]
        if ev_out:
            main.append("    model.eval()")
        main.append("    print(evaluate(models, loader))")
        files["main.py"] = (
            HEAD + NET + "\n\n" + TOP1 + "\n\n" + TRAIN + "\n\n" + ev + script_main(main)
        )
        return files
    if P == "P8":  # list of models, looped
        pre = ["model.eval()"] if ev_in else []
        ev = eval_function("evaluate", ["model", "loader"], "model", U, pre, guard)
        main = [
            f"    {LOADER}",
            "    nets = [Net(), Net()]",
            "    for net in nets:",
            "        train(net, loader)",
            "    for net in nets:",
        ]
        if ev_out:
            main.append("        net.eval()")
        main.append("        print(evaluate(net, loader))")
        files["main.py"] = (
            HEAD + NET + "\n\n" + TOP1 + "\n\n" + TRAIN + "\n\n" + ev + script_main(main)
        )
        return files
    if P == "P11":  # module-level model, read as a global
        pre = ["model.eval()"] if ev_in else []
        ev = eval_function("evaluate", ["loader"], "model", U, pre, guard)
        main = [f"    {LOADER}", "    train(model, loader)"]
        if ev_out:
            main.append("    model.eval()")
        main.append("    print(evaluate(loader))")
        files["main.py"] = (
            HEAD
            + NET
            + "\n\nmodel = Net()\n\n\n"
            + TOP1
            + "\n\n"
            + TRAIN
            + "\n\n"
            + ev
            + script_main(main)
        )
        return files
    if P == "P25":  # an evaluation closure nested in the training function
        pre = ["model.eval()"] if ev_in else []
        ev = eval_function("evaluate", [], "model", U, pre, guard, indent="    ")
        fit = "def fit(model, loader):\n" + ev + "\n"
        fit += "    opt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
        fit += "    for epoch in range(3):\n        model.train()\n"
        fit += "        for x, y in loader:\n            opt.zero_grad()\n"
        fit += "            F.cross_entropy(model(x), y).backward()\n            opt.step()\n"
        if ev_out:
            fit += "        model.eval()\n"
        fit += "        print(evaluate())\n"
        main = script_main([f"    {LOADER}", "    fit(Net(), loader)"])
        files["main.py"] = HEAD + NET + "\n\n" + TOP1 + "\n\n" + fit + main
        return files
    if P == "P26":  # a script: the evaluation inline after each epoch's training
        if guard == "decorator":
            return None
        before, body, after = use_lines(U, "model")
        after = [line for line in after if not line.startswith("return")]
        loop = ["for x, y in loader:"] + ["    " + b for b in body]
        if guard == "with":
            loop = ["with torch.no_grad():"] + ["    " + line for line in loop]
        block = (["model.eval()"] if C != "C3" else []) + before + loop + after
        script = [LOADER, "model = Net()", "opt = torch.optim.SGD(model.parameters(), lr=0.1)"]
        script += ["for epoch in range(3):", "    model.train()", "    for x, y in loader:"]
        script += ["        opt.zero_grad()", "        F.cross_entropy(model(x), y).backward()"]
        script += ["        opt.step()"] + ["    " + line for line in block]
        files["main.py"] = HEAD + NET + "\n\n" + TOP1 + "\n\n" + "\n".join(script) + "\n"
        return files
    if P == "P27":  # evaluated every epoch by the function that trains
        pre = ["model.eval()"] if ev_in else []
        ev = eval_function("evaluate", ["model", "loader"], "model", U, pre, guard)
        fit = "def fit(model, loader):\n    for epoch in range(3):\n        train(model, loader)\n"
        if ev_out:
            fit += "        model.eval()\n"
        fit += "        print(evaluate(model, loader))\n"
        main = script_main([f"    {LOADER}", "    fit(Net(), loader)"])
        files["main.py"] = (
            HEAD + NET + "\n\n" + TOP1 + "\n\n" + TRAIN + "\n\n" + ev + "\n\n" + fit + main
        )
        return files
    if P == "P28":  # a model two attributes deep in an agent handed to the evaluation
        pre = ["agent.policy.net.eval()"] if ev_in else []
        ev = eval_function("evaluate", ["agent", "loader"], "agent.policy.net", U, pre, guard)
        classes = "class Policy:\n    def __init__(self):\n        self.net = Net()\n\n\n"
        classes += "class Agent:\n    def __init__(self):\n        self.policy = Policy()\n"
        main = [f"    {LOADER}", "    agent = Agent()", "    train(agent.policy.net, loader)"]
        if ev_out:
            main.append("    agent.policy.net.eval()")
        main.append("    print(evaluate(agent, loader))")
        files["main.py"] = (
            HEAD
            + NET
            + "\n\n"
            + classes
            + "\n\n"
            + TOP1
            + "\n\n"
            + TRAIN
            + "\n\n"
            + ev
            + script_main(main)
        )
        return files
    if P == "P14":  # base class of another file keeps the model
        pre = ["self.model.eval()"] if ev_in else []
        meth = eval_function(
            "evaluate", ["self", "loader"], "self.model", U, pre, guard, indent="    "
        )
        files["models.py"] = NET
        files["base.py"] = (
            HEAD
            + "\n\n"
            + TOP1
            + "\n\nclass BaseAgent:\n    def __init__(self, model):\n        self.model = model\n\n"
            + meth
        )
        main = [f"    {LOADER}", "    agent = Agent()", "    train(agent.model, loader)"]
        if ev_out:
            main.append("    agent.model.eval()")
        main.append("    print(agent.evaluate(loader))")
        files["main.py"] = (
            HEAD
            + "from models import Net\nfrom base import BaseAgent\n\n\n"
            + TRAIN
            + "\n\nclass Agent(BaseAgent):\n    def __init__(self):\n        super().__init__(Net())\n"
            + script_main(main)
        )
        return files
    raise ValueError(P)


PROVENANCES = [f"P{i}" for i in range(1, 22)] + [
    "P23",
    "P24",
    "P25",
    "P26",
    "P27",
    "P28",
    "P30",
    "P31",
]


def programs():
    """(name, expected POS or NEG, {relative path: text}) for every program."""
    for P, C, U in itertools.product(
        PROVENANCES, ["C1", "C2", "C3"], [f"U{i}" for i in range(1, 13)]
    ):
        for guard in (None, "with", "decorator"):
            if guard and C != "C1":
                continue
            files = program(P, C, U, guard)
            if files is None:
                continue
            files["setup.py"] = ""  # the project's root: its files are what is searched
            yield f"{P}_{C}_{U}" + (f"_{guard}" if guard else ""), "NEG" if guard else "POS", files


def lint_project(root: Path) -> set[str]:
    from gradlint.config import Config
    from gradlint.engine import lint_file

    codes: set[str] = set()
    for path in sorted(root.rglob("*.py")):
        result = lint_file(path, Config(preview=True))
        if result.error is not None:
            codes.add("ERROR")
        codes.update(d.code for d in result.diagnostics)
    return codes


def lint_programs(programs, keep: Path | None, prefix: str) -> list[tuple[str, str, set[str]]]:
    """(name, POS or NEG, the codes found in its project) for each program, its project
    written under `keep`, else under a temporary folder removed afterwards."""
    base = keep or Path(tempfile.mkdtemp(prefix=prefix))
    linted = []
    try:
        for name, expect, files in programs:
            root = base / name
            for rel, text in files.items():
                path = root / rel
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(text, encoding="utf-8")
            linted.append((name, expect, lint_project(root)))
    finally:
        if keep is None:
            shutil.rmtree(base, ignore_errors=True)
    return linted


def report(results, dimensions, title: str = "") -> None:
    """The counts of (name, expected, found, codes) results, then one line per
    dimension (the place of its key in the name: `P3_C1_U2`) of the positives found."""
    lead = f"{title}: " if title else ""
    positives = [r for r in results if r[1] == "POS"]
    negatives = [r for r in results if r[1] == "NEG"]
    print(f"{lead}positives found: {sum(r[2] for r in positives)} of {len(positives)}")
    print(f"{lead}negatives flagged (false): {sum(r[2] for r in negatives)} of {len(negatives)}")
    for place, dimension in dimensions:
        tally: dict[str, list[int]] = collections.defaultdict(lambda: [0, 0])
        for name, _, found, _ in positives:
            key = name.split("_")[place]
            tally[key][0] += found
            tally[key][1] += 1
        cells = [
            f"{k} {v[0]}/{v[1]}" for k, v in sorted(tally.items(), key=lambda kv: int(kv[0][1:]))
        ]
        print(f"{dimension:>12}: " + ", ".join(cells))


def print_misses(results) -> None:
    for name, expect, found, codes in results:
        if found != (expect == "POS") or "ERROR" in codes:
            what = "missed" if expect == "POS" else "false finding"
            print(f"{what}: {name} {sorted(codes)}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--keep", type=Path, help="write the projects here and keep them")
    args = parser.parse_args(argv)
    results = [
        (name, expect, bool(codes & {"GL004", "GL012", "GL015"}), codes)
        for name, expect, codes in lint_programs(programs(), args.keep, "gradlint-plumbing-")
    ]
    report(results, ((0, "provenance"), (1, "mode"), (2, "use")))
    print_misses(results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
