"""GL014 traps: accumulation done right, and clears that only look like they are inside a
window. None of it may be flagged."""

import torch
import torch.nn.functional as F


def clear_after_step_same_branch(model, loader, opt, k):
    for i, (x, y) in enumerate(loader):
        loss = F.mse_loss(model(x), y) / k
        loss.backward()
        if (i + 1) % k == 0:
            opt.step()
            opt.zero_grad()


def step_and_clear_every_iteration(model, loader, opt):
    for x, y in loader:
        opt.zero_grad()
        F.mse_loss(model(x), y).backward()
        opt.step()


def clear_before_inner_accumulation_loop(model, batches, opt, k):
    for batch in batches:
        opt.zero_grad()
        for chunk in batch.chunk(k):
            model(chunk).sum().backward()
        opt.step()


def helper_steps_and_clears(model, loader, opt, k):
    def update():
        opt.step()
        opt.zero_grad()

    for i, x in enumerate(loader):
        model(x).sum().backward()
        if (i + 1) % k == 0:
            update()


def helper_clears_only_at_window_end(trainer, loader):
    for x in loader:
        trainer.backward_and_maybe_step(x)


class Trainer:
    def __init__(self, model, opt, k):
        self.model, self.opt, self.k, self.seen = model, opt, k, 0

    def backward_and_maybe_step(self, x):
        self.model(x).sum().backward()
        self.seen += 1
        if self.seen % self.k != 0:
            return
        self.opt.step()
        self.opt.zero_grad()


def skip_non_finite(model, loader, opt):
    for x in loader:
        opt.zero_grad()
        loss = model(x).sum()
        loss.backward()
        if torch.isfinite(loss):
            opt.step()


def generator_every_n_critic(netG, netD, optD, optG, loader, n_critic):
    for i, real in enumerate(loader):
        netD.zero_grad()
        with torch.no_grad():
            fake = netG(torch.randn(8, 2))
        d_loss = netD(real).mean() - netD(fake).mean()
        d_loss.backward()
        optD.step()
        if i % n_critic == 0:
            netG.zero_grad()
            g_loss = -netD(netG(torch.randn(8, 2))).mean()
            g_loss.backward()
            optG.step()


def model_clear_with_two_optimizers(model, loader, opt_a, opt_b, k):
    for i, x in enumerate(loader):
        model.zero_grad()
        model(x).sum().backward()
        opt_a.step()
        if i % k == 0:
            opt_b.step()


def per_sample_gradients(model, samples, opt):
    norms = []
    for x in samples:
        for p in model.parameters():
            p.grad = None
        model(x).sum().backward()
        norms.append(sum(p.grad.norm().item() for p in model.parameters()))
    opt.step()
    return norms


def adversarial_inner_loop(model, loader, opt, steps):
    for x, y in loader:
        delta = torch.zeros_like(x, requires_grad=True)
        for _ in range(steps):
            model.zero_grad()
            F.cross_entropy(model(x + delta), y).backward()
            delta.data = delta.data + 0.01 * delta.grad.sign()
            delta.grad.zero_()
        opt.zero_grad()
        F.cross_entropy(model(x + delta.detach()), y).backward()
        opt.step()


def accelerate_accumulate(accelerator, model, loader, opt):
    for i, x in enumerate(loader):
        with accelerator.accumulate(model):
            opt.zero_grad()
            accelerator.backward(model(x).sum())
            if accelerator.sync_gradients or i % 4 == 0:
                opt.step()


def lbfgs_closure(model, x, opt, k):
    def closure():
        opt.zero_grad()
        loss = model(x).sum()
        loss.backward()
        return loss

    for i in range(10):
        opt.zero_grad()
        model(x).sum().backward()
        if i % k == 0:
            opt.step(closure)


def clear_inner_parameter_loop(model, loader, opt):
    for x in loader:
        for p in model.parameters():
            p.grad = None
        model(x).sum().backward()
        opt.step()


def inner_loop_steps_itself(model, loader, opt, scheduler):
    for epoch in range(3):
        for x in loader:
            opt.zero_grad()
            model(x).sum().backward()
            opt.step()
        scheduler.step()


def clear_again_after_inner_loop(model, x, opt, warmup):
    for _ in range(warmup):
        opt.zero_grad()
        model(x).sum().backward()
    opt.zero_grad()
    model(x).sum().backward()
    opt.step()


def clear_per_epoch_window_in_inner_loop(model, loader, optimizer, scaler, accumulate):
    # yolov5: the epoch loop clears once; its inner loop accumulates and clears itself
    last_opt_step = -1
    for epoch in range(3):
        optimizer.zero_grad()
        for i, x in enumerate(loader):
            scaler.scale(model(x).sum()).backward()
            if i - last_opt_step >= accumulate:
                scaler.step(optimizer)
                scaler.update()
                optimizer.zero_grad()
                last_opt_step = i


def branch_backpropagates_its_own_loss(generator, discriminator, opt_ge, opt_d, loader, n_skip):
    # clustergan: the generator steps every n_skip iterations on a loss of the branch
    for i, real in enumerate(loader):
        opt_ge.zero_grad()
        fake = generator(torch.randn(8, 2))
        if i % n_skip == 0:
            ge_loss = discriminator(fake).mean()
            ge_loss.backward(retain_graph=True)
            opt_ge.step()
        opt_d.zero_grad()
        d_loss = discriminator(real).mean() - discriminator(fake.detach()).mean()
        d_loss.backward()
        opt_d.step()


def ensemble_each_clears_its_own(models, optimizers, x):
    # each pass clears another model's optimizer: no window is cut short
    for epoch in range(3):
        for model, opt in zip(models, optimizers):
            opt.zero_grad()
            model(x).sum().backward()
        for opt in optimizers:
            opt.step()


def counter_window_cleared_after_step(model, loader, opt, grad_accum_steps):
    opt.zero_grad()
    accum_counter = 0
    for x in loader:
        (model(x).mean() / grad_accum_steps).backward()
        accum_counter += 1
        if accum_counter < grad_accum_steps:
            continue
        opt.step()
        opt.zero_grad()
        accum_counter = 0


def ignite_update_fn(engine, batch, model, optimizer, accumulation_steps):
    x, y = batch
    loss = F.mse_loss(model(x), y) / accumulation_steps
    loss.backward()
    if engine.state.iteration % accumulation_steps == 0:
        optimizer.step()
        optimizer.zero_grad()
    return loss.item()


class ManualAccumulation:
    def training_step(self, batch, batch_idx):
        opt = self.optimizers()
        self.manual_backward(self.compute_loss(batch))
        if (batch_idx + 1) % self.accumulate == 0:
            opt.step()
            opt.zero_grad()


class StepWhenWindowEnds:
    def micro_step(self, x):
        self.opt.zero_grad()
        self.model(x).sum().backward()
        if self.skip_nonfinite and not torch.isfinite(self.loss):
            return
        self.opt.step()



class MaskRCNN:
    """multimodallearning/pytorch-mask-rcnn: the epoch loop calls `train_epoch`, which
    clears once, then steps and clears every BATCH_SIZE batches of its own loop. The
    window is the helper's loop's, and it is kept right."""

    def train_model(self, train_generator, optimizer, epochs):
        for epoch in range(epochs):
            self.train_epoch(train_generator, optimizer)

    def train_epoch(self, datagenerator, optimizer):
        batch_count = 0
        optimizer.zero_grad()
        for x, y in datagenerator:
            batch_count += 1
            F.mse_loss(self.forward(x), y).backward()
            if (batch_count % self.config.BATCH_SIZE) == 0:
                optimizer.step()
                optimizer.zero_grad()
                batch_count = 0
