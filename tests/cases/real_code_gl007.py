"""GL007 on real code (/work/ledger_work/GL007.tsv), reduced to its shape: the real
missing-zero_grad bugs at their pre-fix commits carry their marker; the correct code that
looks like one (framework wrappers, accumulation, fresh leaves, closures) may not be
flagged."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch import optim

from project.engine import train_one_epoch  # out of sight: its loop is its own file's


# yastrebksv/TennisCourtDetector base_trainer.py (fixed by "added optimizer.zero_grad").
def tennis_train(model, train_loader, optimizer, criterion, device, max_iters=1000):
    losses = []
    for iter_id, batch in enumerate(train_loader):
        out = model(batch[0].float().to(device))
        loss = criterion(F.sigmoid(out), batch[1].float().to(device))
        loss.backward()
        optimizer.step()  # error: GL007
        losses.append(loss.item())
        if iter_id > max_iters:
            break
    return losses


# wenet-e2e/wekws executor.py (PR #73): the step is skipped on a non-finite norm, and
# nothing ever clears.
def kws_train(model, optimizer, data_loader, clip=50.0):
    for batch_idx, (feats, target) in enumerate(data_loader):
        loss = F.cross_entropy(model(feats), target)
        loss.backward()
        grad_norm = nn.utils.clip_grad_norm_(model.parameters(), clip)
        if torch.isfinite(grad_norm):
            optimizer.step()  # error: GL007


# Hsintien-Ng/idinvert_pytorch-reproduced training_loop_encoder.py (issue #1): the
# encoder's optimizer is cleared, the discriminator's never is.
def idinvert(E, G, D, loader, optimizer_E, optimizer_D):
    for epoch in range(10):
        for step, x in enumerate(loader):
            x_rec = G(E(x))
            D_loss = F.softplus(D(x_rec.detach())).mean() + F.softplus(-D(x)).mean()
            D_loss.backward()
            optimizer_D.step()  # error: GL007
            E_loss = (x - x_rec).pow(2).mean() + F.softplus(-D(x_rec)).mean()
            optimizer_E.zero_grad()
            E_loss.backward()
            optimizer_E.step()


# facebookresearch/nwm train.py (issue #16): only the plain branch clears; the bfloat16
# branch's scaler steps on summed gradients.
def nwm(model, loader, opt, scaler, bfloat_enable):
    for x, y in loader:
        loss = F.mse_loss(model(x), y)
        if not bfloat_enable:
            opt.zero_grad()
            loss.backward()
            opt.step()
        else:
            scaler.scale(loss).backward()
            scaler.unscale_(opt)
            nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
            scaler.step(opt)  # error: GL007
            scaler.update()


# locuslab/fast_adversarial MNIST/train_mnist.py (issue #26): `opt.zero_grad()` clears
# the model, never the perturbation, so each PGD step follows sign(g1 + ... + gk). The
# repo's own CIFAR code calls `delta.grad.zero_()` in the same place.
def mnist_pgd(model, loader, opt, epsilon, alpha, attack_iters):
    for X, y in loader:
        delta = torch.zeros_like(X).uniform_(-epsilon, epsilon)
        delta.data = torch.max(torch.min(1 - X, delta.data), 0 - X)
        for _ in range(attack_iters):
            delta.requires_grad = True
            output = model(X + delta)
            loss = F.cross_entropy(output, y)
            opt.zero_grad()
            loss.backward()
            grad = delta.grad.detach()
            I = output.max(1)[1] == y
            delta.data[I] = torch.clamp(delta + alpha * torch.sign(grad), -epsilon, epsilon)[I]  # error: GL007
            delta.data[I] = torch.max(torch.min(1 - X, delta.data), 0 - X)[I]
        delta = delta.detach()
        loss = F.cross_entropy(model(torch.clamp(X + delta, 0, 1)), y)
        opt.zero_grad()
        loss.backward()
        opt.step()


# torch/_inductor/fx_passes/numeric_utils.py run_model: a new SGD each iteration over
# parameters whose .grad is never cleared; the compared gradients are running sums.
def numeric_run_model(model_base, model_input, num_iterations=10):
    for i in range(num_iterations):
        pred_base = model_base(*model_input)
        pred_base[0].sum().backward(retain_graph=True)
        optimizer_base = optim.SGD([p for _, p in model_base.named_parameters()], lr=0.01)
        optimizer_base.step()  # error: GL007


# -- traps: correct code that looks like the pitfall -----------------------------------


# salesforce/corr_based_prediction main.py (issue #1 asked whether it accumulates): a
# clear before the loop, and one after every step.
def corr_based(model, loader, optimizer):
    optimizer.zero_grad()
    for inputs, targets in loader:
        loss = F.cross_entropy(model(inputs), targets)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()


# chrischoy/SpatioTemporalSegmentation lib/train.py (issue #46): the sub-iterations sum
# into one step on purpose; the clear is per step, in the outer loop.
def sub_iterations(model, data_iter, optimizer, scheduler, iters, iter_size):
    for iteration in range(iters):
        optimizer.zero_grad()
        for sub_iter in range(iter_size):
            x, target = next(data_iter)
            loss = F.cross_entropy(model(x), target) / iter_size
            loss.backward()
        optimizer.step()
        scheduler.step()


# facebookresearch/mae engine_pretrain.py: backward and step inside a loss-scaler
# object (out of sight), the clear every accum_iter steps.
def mae_pretrain(model, loader, optimizer, loss_scaler, accum_iter):
    optimizer.zero_grad()
    for data_iter_step, samples in enumerate(loader):
        loss = model(samples) / accum_iter
        loss_scaler(loss, optimizer, parameters=model.parameters(),
                    update_grad=(data_iter_step + 1) % accum_iter == 0)
        if (data_iter_step + 1) % accum_iter == 0:
            optimizer.zero_grad()


# diffusers pix2pix_zero: a fresh leaf and a fresh SGD over it at every denoising step.
def pix2pix_zero(unet, latents, timesteps, lr):
    for t in timesteps:
        x_in = latents.detach().clone()
        x_in.requires_grad = True
        opt = torch.optim.SGD([x_in], lr=lr)
        with torch.enable_grad():
            loss = unet(x_in, t).pow(2).mean()
            loss.backward()
            opt.step()
        latents = x_in.detach()
    return latents


# diffusers dps_pipeline: `.grad` read from a tensor made a leaf again each step, and
# the update rebinds a new tensor.
def dps(unet, scheduler, image, zeta, measurement, operator):
    for t in scheduler.timesteps:
        with torch.enable_grad():
            image = image.requires_grad_()
            out = scheduler.step(unet(image, t), t, image)
            loss = F.mse_loss(operator(out.pred_original_sample), measurement)
            loss.backward()
            with torch.no_grad():
                image_pred = out.prev_sample - zeta * image.grad
                image = image_pred.detach()
    return image


# fast_adversarial CIFAR10/train_pgd.py: the perturbation is cleared every step.
def cifar_pgd(model, X, y, epsilon, alpha, attack_iters):
    delta = torch.zeros_like(X).uniform_(-epsilon, epsilon)
    delta.requires_grad = True
    for _ in range(attack_iters):
        loss = F.cross_entropy(model(X + delta), y)
        loss.backward()
        grad = delta.grad.detach()
        delta.data = torch.clamp(delta + alpha * torch.sign(grad), -epsilon, epsilon)
        delta.grad.zero_()
    return delta.detach()


# fast_adversarial CIFAR10/train_fgsm.py: delta is made anew (or detached) every batch.
def cifar_fgsm(model, loader, opt, epsilon, alpha):
    for X, y in loader:
        delta = torch.zeros_like(X).uniform_(-epsilon, epsilon)
        delta.requires_grad = True
        loss = F.cross_entropy(model(X + delta), y)
        loss.backward()
        grad = delta.grad.detach()
        delta.data = torch.clamp(delta + alpha * torch.sign(grad), -epsilon, epsilon)
        delta = delta.detach()
        loss = F.cross_entropy(model(X + delta), y)
        opt.zero_grad()
        loss.backward()
        opt.step()


# advertorch MomentumIterativeAttack: `detach_(); zero_()` on the perturbation's grad.
def momentum_attack(predict, x, y, nb_iter, eps_iter):
    delta = nn.Parameter(torch.zeros_like(x))
    for i in range(nb_iter):
        if delta.grad is not None:
            delta.grad.detach_()
            delta.grad.zero_()
        loss = F.cross_entropy(predict(x + delta), y)
        loss.backward()
        delta.data += eps_iter * delta.grad.sign()
    return delta.data


# HF Trainer-like: the backward is in `training_step` (accelerator.backward), step and
# clear together every gradient_accumulation_steps.
class HFTrainer:
    def training_step(self, model, inputs):
        loss = model(**inputs).loss
        self.accelerator.backward(loss)
        return loss.detach()

    def inner_loop(self, model, epoch_iterator, accumulation_steps):
        tr_loss = 0.0
        for step, inputs in enumerate(epoch_iterator):
            tr_loss += self.training_step(model, inputs).item()
            if (step + 1) % accumulation_steps == 0:
                self.optimizer.step()
                self.lr_scheduler.step()
                model.zero_grad()
        return tr_loss


# Accelerate / Fabric: their backward wrappers, with the clear in the loop.
def accelerate_loop(accelerator, model, optimizer, loader):
    for batch in loader:
        with accelerator.accumulate(model):
            loss = model(batch).mean()
            accelerator.backward(loss)
            optimizer.step()
            optimizer.zero_grad()


def fabric_loop(fabric, model, optimizer, loader):
    for batch in loader:
        optimizer.zero_grad(set_to_none=True)
        loss = model(batch).mean()
        fabric.backward(loss)
        optimizer.step()


# DeepSpeed: `engine.step()` steps and zeroes the gradients itself.
def deepspeed_loop(model_engine, loader):
    for batch in loader:
        loss = model_engine(batch).mean()
        model_engine.backward(loss)
        model_engine.step()


# Lightning manual optimization: no loop in sight (the Trainer's is its own); and a
# loop of several steps that clears each one.
class ManualModule:
    def training_step(self, batch, batch_idx):
        opt = self.optimizers()
        loss = self.compute_loss(batch)
        self.manual_backward(loss)
        opt.step()

    def unrolled_step(self, batch, k):
        opt = self.optimizers()
        for _ in range(k):
            loss = self.compute_loss(batch)
            opt.zero_grad()
            self.manual_backward(loss)
            opt.step()


# The backward, the step or the clear out of sight: an imported epoch function, a
# helper of another file named for the clear.
def epochs(model, loader, optimizer, n):
    for epoch in range(n):
        train_one_epoch(model, loader, optimizer)


def clear_in_imported_helper(model, loader, optimizer, utils):
    for x, y in loader:
        utils.zero_grad(model)
        F.mse_loss(model(x), y).backward()
        optimizer.step()


# A model (and its optimizer) built by a factory each trial.
def trials(build, x, y, configs):
    for cfg in configs:
        model, optimizer = build(cfg)
        F.mse_loss(model(x), y).backward()
        optimizer.step()


# Paddle's spelling in a multi-backend branch.
def paddle_branch(model, opt, loader):
    for x, y in loader:
        loss = model(x, y)
        loss.backward()
        opt.step()
        opt.clear_grad()


# The clear written without its call: the attribute is read and dropped, nothing cleared.
def forgotten_parentheses(model, opt, loader):
    for x, y in loader:
        opt.zero_grad
        F.mse_loss(model(x), y).backward()
        opt.step()  # error: GL007


# The bound method handed on uncalled is a clear its receiver runs.
def handed_on(model, opt, loader, run_step):
    for x, y in loader:
        run_step(F.mse_loss(model(x), y), before=opt.zero_grad)
        opt.step()
