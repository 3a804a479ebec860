"""GL014 shapes beyond the runnable fixtures: a clear inside an accumulation window."""

import torch
import torch.nn.functional as F


def amp_scaler_window(model, loader, optimizer, scaler, args):
    for step, (x, y) in enumerate(loader):
        optimizer.zero_grad(set_to_none=True)  # error: GL014
        with torch.autocast("cuda"):
            loss = F.cross_entropy(model(x), y) / args.gradient_accumulation_steps
        scaler.scale(loss).backward()
        if step % args.gradient_accumulation_steps == 0 or step == len(loader) - 1:
            scaler.step(optimizer)
            scaler.update()


def clear_after_step_and_every_iteration(model, loader, opt, k):
    for i, x in enumerate(loader):
        opt.zero_grad()  # error: GL014
        model(x).sum().backward()
        if (i + 1) % k == 0:
            opt.step()
            opt.zero_grad()


def clear_after_backward(model, loader, opt, accum_iter):
    for i, x in enumerate(loader):
        model(x).mean().backward()
        model.zero_grad()  # error: GL014
        if not (i + 1) % accum_iter:
            opt.step()


def manual_clear_every_iteration(params, loader, opt, k):
    for i, x in enumerate(loader):
        for p in params:  # error: GL014
            p.grad = None
        (x @ params[0]).sum().backward()
        if i % k == k - 1:
            opt.step()


class Learner:
    def __init__(self, model, optimizer, accumulate):
        self.model, self.optimizer, self.accumulate = model, optimizer, accumulate

    def micro_batch(self, x):
        self.model.zero_grad()
        self.model(x).sum().backward()

    def train(self, loader):
        for i, x in enumerate(loader):
            self.micro_batch(x)  # error: GL014
            if (i + 1) % self.accumulate == 0:
                self.optimizer.step()


def generator_iterations(aG, aD, optimizer_g, gen_iters):
    for _ in range(gen_iters):
        aG.zero_grad()  # error: GL014
        cost = -aD(aG(torch.randn(8, 2))).mean()
        cost.backward()
    optimizer_g.step()


def counter_window_with_continue(model, loader, opt, grad_accum_steps):
    accum_counter = 0
    for x in loader:
        opt.zero_grad(set_to_none=True)  # error: GL014
        (model(x).mean() / grad_accum_steps).backward()
        accum_counter += 1
        if accum_counter < grad_accum_steps:
            continue
        opt.step()
        accum_counter = 0


def update_fn(engine, batch):
    # ignite: the engine calls this once per micro-batch
    optimizer.zero_grad()  # error: GL014
    x, y = batch
    loss = F.mse_loss(model(x), y) / accumulation_steps
    loss.backward()
    if engine.state.iteration % accumulation_steps == 0:
        optimizer.step()
    return loss.item()


class ManualLightningModule:
    def training_step(self, batch, batch_idx):
        opt = self.optimizers()
        opt.zero_grad()  # error: GL014
        self.manual_backward(self.compute_loss(batch))
        if (batch_idx + 1) % self.accumulate == 0:
            opt.step()


# The same loop with a count that is not one: only the last pass reaches the step.
GEN_PASSES_MANY = 3


def generator_loop_of_constant_passes(generator, critic, opt_g, noise):
    for _ in range(GEN_PASSES_MANY):
        generator.zero_grad()  # error: GL014
        (-critic(generator(noise)).mean()).backward()
    opt_g.step()


def generator_loop_of_a_shadowed_constant(generator, critic, opt_g, noise, n):
    GEN_PASSES_ONE = n  # noqa: N806 - the module's constant is 1, this local is not
    for _ in range(GEN_PASSES_ONE):
        generator.zero_grad()  # error: GL014
        (-critic(generator(noise)).mean()).backward()
    opt_g.step()


GEN_PASSES_ONE = 1


# One generator pass per iteration (a module constant, as in improved-wgan's
# congan_train.py): reported, at most a warning, since nothing is lost until it grows.
GEN_PASSES = 1


def generator_loop_of_one_pass(generator, critic, opt_g, noise):
    for _ in range(GEN_PASSES):
        generator.zero_grad()  # error: GL014
        (-critic(generator(noise)).mean()).backward()
    opt_g.step()


def generator_loop_of_range_one(generator, critic, opt_g, noise):
    for _ in range(1):
        generator.zero_grad()  # error: GL014
        (-critic(generator(noise)).mean()).backward()
    opt_g.step()
