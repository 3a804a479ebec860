"""One function for both phases, picked by a flag (issue 19 §2, path conditions): the eval
switch and the backward on two branches of `if train:`, and the callers giving the flag.
A finding at the forward for a call that runs no backward of its result and is not under
no_grad (GL004 when the model is put in eval mode on that path, GL012 when it stays in
training mode); silence for the training call, a call under no_grad, and wherever the flag
cannot be read."""

import contextlib
import enum

import torch
import torch.nn.functional as F
from torch import nn


class LoopPhase(enum.Enum):
    TRAIN = 0
    VAL = 1
    TEST = 2


# -- findings ---------------------------------------------------------------------------


# The common evaluation shape: `run_epoch(..., train=False)` records a graph nobody uses.
def run_epoch(model, loader, optimizer, train=True):
    if train:
        model.train()
    else:
        model.eval()
    total = 0.0
    for x, y in loader:
        out = model(x)  # error: GL004
        loss = F.cross_entropy(out, y)
        if train:
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        total += loss.item()
    return total


def fit(model, loader, val_loader, n):
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(n):
        run_epoch(model, loader, opt, train=True)
        print(run_epoch(model, val_loader, opt, train=False))


# pytorch-GAT: a closure its factory returns, the phase an enum member, the validation
# call under no_grad and the test call outside it.
def get_main_loop(gat, loss_fn, optimizer, graph, labels):
    def main_loop(phase, epoch=0):
        if phase == LoopPhase.TRAIN:
            gat.train()
        else:
            gat.eval()
        scores = gat(graph)  # error: GL004
        loss = loss_fn(scores, labels)
        if phase == LoopPhase.TRAIN:
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        accuracy = (scores.argmax(-1) == labels).float().mean().item()
        if phase == LoopPhase.TEST:
            return accuracy
        print(epoch, accuracy)

    return main_loop


def train_gat(gat, graph, labels, epochs):
    optimizer = torch.optim.Adam(gat.parameters())
    main_loop = get_main_loop(gat, nn.CrossEntropyLoss(), optimizer, graph, labels)
    for epoch in range(epochs):
        main_loop(phase=LoopPhase.TRAIN, epoch=epoch)
        with torch.no_grad():
            main_loop(phase=LoopPhase.VAL, epoch=epoch)
    return main_loop(phase=LoopPhase.TEST)


# `if not train:` polarity, a positional flag, and an early return that guards the step.
def step(model, x, y, optimizer, train):
    if not train:
        model.eval()
    else:
        model.train()
    loss = F.mse_loss(model(x), y)  # error: GL004
    if not train:
        return loss.item()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return loss.item()


def use_step(model, x, y, optimizer):
    step(model, x, y, optimizer, True)
    return step(model, x, y, optimizer, False)


# The flag's default decides: `evaluate_or_fit(model, x, y, opt)` evaluates.
def evaluate_or_fit(model, x, y, optimizer, split="val"):
    if split == "train":
        model.train()
    elif split == "val":
        model.eval()
    out = model(x)  # error: GL004
    loss = F.mse_loss(out, y)
    if split == "train":
        loss.backward()
        optimizer.step()
    return loss.item()


def use_evaluate_or_fit(model, x, y, optimizer):
    evaluate_or_fit(model, x, y, optimizer, split="train")
    return evaluate_or_fit(model, x, y, optimizer)


# The caller switches the model; the function only picks the backward by its flag.
def run_epoch_plain(model, loader, optimizer, train=True):
    total = 0.0
    for x, y in loader:
        out = model(x)  # error: GL004
        loss = F.cross_entropy(out, y)
        if train:
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        total += loss.item()
    return total


def fit_plain(model, loader, val_loader, opt):
    model.train()
    run_epoch_plain(model, loader, opt)
    model.eval()
    return run_epoch_plain(model, val_loader, opt, train=False)


# A loop over the phases (the transfer-learning tutorial without its
# `torch.set_grad_enabled(phase == "train")`): the "val" iteration records for nothing.
def fit_phases(model, loaders, criterion, optimizer, epochs):
    for _ in range(epochs):
        for phase in ["train", "val"]:
            if phase == "train":
                model.train()
            else:
                model.eval()
            running = 0.0
            for x, y in loaders[phase]:
                out = model(x)  # error: GL004
                loss = criterion(out, y)
                if phase == "train":
                    optimizer.zero_grad()
                    loss.backward()
                    optimizer.step()
                running += loss.item()
            print(phase, running)


# No eval switch: the model stays in training mode, and the loss is only read as a number
# in the evaluation call (GL012, at the forward, with that call as the related place).
def run_epoch_in_train_mode(model, loader, optimizer, train=True):
    total = 0.0
    for x, y in loader:
        out = model(x)  # error: GL012
        loss = F.cross_entropy(out, y)
        if train:
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        total += loss.item()
    return total


def fit_in_train_mode(loader, val_loader):
    model = nn.Linear(4, 2)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    run_epoch_in_train_mode(model, loader, opt)
    return run_epoch_in_train_mode(model, val_loader, opt, train=False)


# The loop over phases in training mode throughout.
def fit_phases_in_train_mode(loaders):
    model = nn.Linear(4, 2)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for phase in ["train", "val"]:
        for x, y in loaders[phase]:
            loss = F.cross_entropy(model(x), y)  # error: GL012
            if phase == "train":
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
            print(phase, loss.item())


# The flag read through a local that stands for a test of it (a vocoder's
# `train = (phase == "train_no_dev")`), one call per phase.
def train_step(model, x, y, optimizer, phase):
    train = (phase == "train_no_dev")
    if train:
        model.train()
    else:
        model.eval()
    loss = F.mse_loss(model(x), y)  # error: GL004
    if train:
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return loss.item()


def use_train_step(model, x, y, optimizer):
    train_step(model, x, y, optimizer, "train_no_dev")
    train_step(model, x, y, optimizer, "dev")


# The flag picks the grad-mode manager too, but the one it picks for evaluation records.
def train_val_recording(net, loader, optimizer):
    is_train = optimizer is not None
    net.train() if is_train else net.eval()
    with (torch.enable_grad() if is_train else contextlib.nullcontext()):
        for x, y in loader:
            loss = F.cross_entropy(net(x), y)  # error: GL004
            if is_train:
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()


def use_train_val_recording(loader):
    net = nn.Linear(4, 2)
    optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
    train_val_recording(net, loader, optimizer)
    train_val_recording(net, loader, None)


# The caller loops over the phases and hands each to the step (a vocoder's
# `for phase, loader in data_loaders.items()`, here a literal).
def phase_step(model, x, y, optimizer, phase):
    if phase == "train":
        model.train()
    else:
        model.eval()
    loss = F.mse_loss(model(x), y)  # error: GL004
    if phase == "train":
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return loss.item()


def fit_phase_steps(x, y, epochs):
    model = nn.Linear(4, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(epochs):
        for phase, batches in {"train": [x, x], "val": [x]}.items():
            for batch in batches:
                phase_step(model, batch, y, optimizer, phase)


# -- traps: silent ----------------------------------------------------------------------


# The caller's loop runs only training phases.
def phase_step_trained(model, x, y, optimizer, phase):
    if phase == "val":
        model.eval()
    else:
        model.train()
    loss = F.mse_loss(model(x), y)
    if phase != "val":
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return loss.item()


def fit_phase_steps_trained(x, y):
    model = nn.Linear(4, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for phase in ("train", "finetune"):
        phase_step_trained(model, x, y, optimizer, phase)


# The flag picks the grad-mode manager: evaluation runs under no_grad (SimCLR's linear
# evaluation).
def train_val(net, loader, optimizer):
    is_train = optimizer is not None
    net.train() if is_train else net.eval()
    with (torch.enable_grad() if is_train else torch.no_grad()):
        for x, y in loader:
            loss = F.cross_entropy(net(x), y)
            if is_train:
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()


def use_train_val(loader):
    net = nn.Linear(4, 2)
    optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
    train_val(net, loader, optimizer)
    train_val(net, loader, None)


# Training mode, the evaluation call under no_grad.
def run_epoch_in_train_mode_guarded(model, loader, optimizer, train=True):
    total = 0.0
    for x, y in loader:
        loss = F.cross_entropy(model(x), y)
        if train:
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        total += loss.item()
    return total


def fit_in_train_mode_guarded(loader, val_loader):
    model = nn.Linear(4, 2)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    run_epoch_in_train_mode_guarded(model, loader, opt)
    with torch.no_grad():
        return run_epoch_in_train_mode_guarded(model, val_loader, opt, train=False)


# The evaluation call under no_grad: every recording call trains.
def run_epoch_guarded(model, loader, optimizer, train=True):
    if train:
        model.train()
    else:
        model.eval()
    total = 0.0
    for x, y in loader:
        loss = F.cross_entropy(model(x), y)
        if train:
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        total += loss.item()
    return total


def fit_guarded(model, loader, val_loader, opt):
    run_epoch_guarded(model, loader, opt, train=True)
    with torch.no_grad():
        return run_epoch_guarded(model, val_loader, opt, train=False)


# The caller switches the model, and runs the evaluation under no_grad.
def run_epoch_plain_guarded(model, loader, optimizer, train=True):
    for x, y in loader:
        loss = F.cross_entropy(model(x), y)
        if train:
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()


def fit_plain_guarded(model, loader, val_loader, opt):
    model.train()
    run_epoch_plain_guarded(model, loader, opt)
    model.eval()
    with torch.no_grad():
        run_epoch_plain_guarded(model, val_loader, opt, train=False)


# The tutorial as written: grad mode follows the phase.
def fit_phases_tutorial(model, loaders, criterion, optimizer):
    for phase in ("train", "val"):
        if phase == "train":
            model.train()
        else:
            model.eval()
        for x, y in loaders[phase]:
            optimizer.zero_grad()
            with torch.set_grad_enabled(phase == "train"):
                loss = criterion(model(x), y)
                if phase == "train":
                    loss.backward()
                    optimizer.step()
            print(loss.item())


# Phases from a variable, and a loop variable rebound in the body: nothing is known.
def fit_phases_unknown(model, loaders, criterion, optimizer, phases):
    for phase in phases:
        if phase == "train":
            model.train()
        else:
            model.eval()
        for x, y in loaders[phase]:
            loss = criterion(model(x), y)
            if phase == "train":
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
    for phase in ["train", "val"]:
        phase = phase.upper()
        if phase == "TRAIN":
            model.train()
        else:
            model.eval()
        for x, y in loaders[phase]:
            loss = criterion(model(x), y)
            if phase == "TRAIN":
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()


# The flag comes from the command line: which phase runs is unknown.
def run_epoch_args(model, loader, optimizer, train=True):
    if train:
        model.train()
    else:
        model.eval()
    for x, y in loader:
        loss = F.cross_entropy(model(x), y)
        if train:
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()


def main(args, model, loader, opt):
    run_epoch_args(model, loader, opt, train=args.train)


# The backward runs whatever the flag: the graph is used on every path.
def run_epoch_always(model, loader, optimizer, train=True):
    if train:
        model.train()
    else:
        model.eval()
    for x, y in loader:
        loss = F.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def fit_always(model, loader, opt):
    run_epoch_always(model, loader, opt, train=True)
    run_epoch_always(model, loader, opt, train=False)


# The flag is rebound before the test: the caller's value is not what decides.
def run_epoch_rebound(model, loader, optimizer, train=True, frozen=False):
    train = train and not frozen
    if train:
        model.train()
    else:
        model.eval()
    for x, y in loader:
        loss = F.cross_entropy(model(x), y)
        if train:
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()


def fit_rebound(model, loader, opt):
    run_epoch_rebound(model, loader, opt, train=True)
    run_epoch_rebound(model, loader, opt, train=False)


# A string flag given an enum member: whether they compare equal is not known.
def run_phase(model, x, y, optimizer, phase):
    if phase == "train":
        model.train()
    else:
        model.eval()
    loss = F.mse_loss(model(x), y)
    if phase == "train":
        loss.backward()
        optimizer.step()


def use_run_phase(model, x, y, optimizer):
    run_phase(model, x, y, optimizer, "train")
    run_phase(model, x, y, optimizer, LoopPhase.TEST)


# The evaluating call's caller differentiates what the function returns.
def compute(model, x, y, train):
    if train:
        model.train()
    else:
        model.eval()
    loss = F.mse_loss(model(x), y)
    if train:
        loss.backward()
    return loss


def use_compute(model, x, y):
    compute(model, x, y, True)
    loss = compute(model, x, y, False)
    loss.backward()


# Only training calls: the eval branch never runs in this file.
def run_epoch_train_only(model, loader, optimizer, train=True):
    if train:
        model.train()
    else:
        model.eval()
    for x, y in loader:
        loss = F.cross_entropy(model(x), y)
        if train:
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()


def fit_train_only(model, loader, opt):
    run_epoch_train_only(model, loader, opt)
    run_epoch_train_only(model, loader, opt, train=True)
