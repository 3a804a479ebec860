"""Correct code that looks like a pitfall: none of it may be flagged."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.autograd import grad


def repackage_hidden(h):
    if isinstance(h, torch.Tensor):
        return h.detach()
    return tuple(repackage_hidden(v) for v in h)


def lm_train(model, batches, opt):
    hidden = model.init_hidden(8)
    for x, y in batches:
        hidden = repackage_hidden(hidden)
        out, hidden = model(x, hidden)
        loss = F.cross_entropy(out, y)
        opt.zero_grad()
        loss.backward()
        opt.step()


def tbptt(cell, xs, opt, k=4):
    h = torch.zeros(1, 8)
    for i, x in enumerate(xs):
        h = cell(x, h)
        if (i + 1) % k == 0:
            loss = h.sum()
            opt.zero_grad()
            loss.backward()
            opt.step()
            h = h.detach()


def full_bptt(cell, xs, opt):
    h = torch.zeros(1, 8)
    for x in xs:
        h = cell(x, h)
    h.sum().backward()
    opt.step()


def detach_inplace(cell, xs, opt):
    h = torch.zeros(1, 8)
    for x in xs:
        h = cell(x, h)
        opt.zero_grad()
        h.sum().backward()
        opt.step()
        h.detach_()


def ema_update(ema_model, model, decay=0.999):
    with torch.no_grad():
        for e, p in zip(ema_model.parameters(), model.parameters()):
            e.mul_(decay).add_(p, alpha=1 - decay)


def clip(model):
    for p in model.parameters():
        p.data.clamp_(-0.01, 0.01)
        if p.grad is not None:
            p.grad.zero_()


def init_weights(m):
    if isinstance(m, nn.Linear):
        nn.init.xavier_uniform_(m.weight)
        m.bias.data.fill_(0.01)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.register_buffer("running", torch.zeros(4))

    def forward(self, x):
        y = self.fc(x)
        y += 1
        self.running.mul_(0.9).add_(y.mean(0).detach(), alpha=0.1)
        return y.relu_()


def logging_loop(model, loader, opt):
    total = 0.0
    losses = []
    for x, y in loader:
        loss = F.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        total += loss.item()
        losses.append(loss.detach().cpu())
        correct = (model(x).argmax(1) == y).sum()
        del correct


def microbatch(model, chunks, opt):
    for step in range(10):
        acc = 0
        for c in chunks:
            acc += model(c).sum()
        opt.zero_grad()
        acc.backward()
        opt.step()


def finetune_frozen_bn(model, loader, opt):
    model.eval()
    for x, y in loader:
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()


def pgd(model, x, y, eps=0.03, steps=5):
    model.eval()
    x_adv = x.clone().detach().requires_grad_(True)
    for _ in range(steps):
        loss = F.cross_entropy(model(x_adv), y)
        g, = grad(loss, x_adv)
        x_adv = (x_adv + eps * g.sign()).detach().requires_grad_(True)
    return x_adv


@torch.inference_mode()
def predict(model, x):
    model.eval()
    return model(x)


def validate(model, loader):
    model.eval()
    with torch.no_grad():
        return [model(x) for x, _ in loader]


def laplacian(u, x):
    du = grad(u.sum(), x, create_graph=True)[0]
    log_du = du.detach().cpu()
    d2u = grad(du.sum(), x)[0]
    return d2u, log_du


def saliency(model, x):
    x.requires_grad_()
    g = grad(model(x).sum(), x)[0]
    return g.abs()


def fomaml(model, loss_fn, params, lr):
    grads = torch.autograd.grad(loss_fn(params), params, create_graph=False)
    fast = [p - lr * g for p, g in zip(params, grads)]
    loss_fn(fast).backward()


def manual_sgd(w, data, lr=0.1):
    for x, y in data:
        loss = ((x @ w - y) ** 2).mean()
        loss.backward()
        with torch.no_grad():
            w -= lr * w.grad
        w.grad = None


def fresh_leaf(w, data, lr=0.1):
    for x, y in data:
        loss = ((x @ w - y) ** 2).mean()
        loss.backward()
        w = (w - lr * w.grad).detach().requires_grad_()
    return w


def counters(model, loader, opt):
    step = 0
    running = 0.0
    best = float("inf")
    for x, y in loader:
        loss = F.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        step += 1
        running = 0.9 * running + 0.1 * loss.item()
        best = min(best, loss.item())
        seen = step * x.size(0)
        del seen


def grad_then_gradgrad(func, inputs):
    # torch's own jit test utilities: a first-order grad, then the same name rebound
    # with create_graph=True before the second-order grad.
    outputs = func(*inputs)
    grads = torch.autograd.grad(outputs.sum(), inputs)
    outputs = func(*inputs)
    l1 = outputs.sum()
    grads = torch.autograd.grad(l1, inputs, create_graph=True)
    l2 = sum(g.sum() for g in grads) * l1
    return torch.autograd.grad(l2, inputs)


class FrozenBatchNorm2d(nn.Module):
    # transformers' DETR family: weight and bias are buffers, not parameters.
    def __init__(self, n):
        super().__init__()
        self.register_buffer("weight", torch.ones(n))
        self.register_buffer("bias", torch.zeros(n))


def replace_batch_norm(model):
    for name, module in model.named_children():
        if isinstance(module, nn.BatchNorm2d):
            new_module = FrozenBatchNorm2d(module.num_features)
            new_module.weight.copy_(module.weight)
            new_module.bias.copy_(module.bias)
            model._modules[name] = new_module


def prune_linear_layer(layer, index):
    # transformers.pytorch_utils: requires_grad switched off around the copy.
    w = layer.weight.index_select(0, index).detach().clone()
    new_layer = nn.Linear(layer.in_features, len(index))
    new_layer.weight.requires_grad = False
    new_layer.weight.copy_(w)
    new_layer.weight.requires_grad = True
    return new_layer


def trainer_loop(self, batches, model):
    # HF Trainer: callback state carried across steps; backward hides in a helper.
    for inputs in batches:
        self.control = self.callback_handler.on_step_begin(self.args, self.state, self.control)
        tr_loss_step = self.training_step(model, inputs)
        self._tr_loss += tr_loss_step
        self.optimizer.step()
        self.control = self.callback_handler.on_step_end(self.args, self.state, self.control)


# torch/testing/_internal/jit_utils.py: the same name recomputed with create_graph=True
# under the same condition before the grad-grad.
def checkTrace_grad_grad(func, inputs, inputs_require_grads):
    outputs = func(*inputs)
    if inputs_require_grads:
        grads = torch.autograd.grad(outputs.sum(), inputs)
    outputs = func(*inputs)
    if inputs_require_grads:
        grads = torch.autograd.grad(outputs.sum(), inputs, create_graph=True)
    if inputs_require_grads:
        l2 = sum(g.sum() for g in grads)
        return torch.autograd.grad(l2, inputs)
    return None


# diffusers examples/vqgan/train_vqgan.py: the adaptive weight's gradients are first
# order on purpose, detached, then scale a loss that is backpropagated.
def grad_layer_wrt_loss(loss, layer):
    return torch.autograd.grad(
        outputs=loss, inputs=layer, grad_outputs=torch.ones_like(loss), retain_graph=True
    )[0].detach()


def vqgan_step(perceptual_loss, gen_loss, last_layer, opt):
    w = grad_layer_wrt_loss(perceptual_loss, last_layer).norm(p=2)
    w = w / grad_layer_wrt_loss(gen_loss, last_layer).norm(p=2).clamp(min=1e-8)
    loss = perceptual_loss + w * gen_loss
    opt.zero_grad()
    loss.backward()
    opt.step()


# diffusers research_projects/autoencoderkl: the same weight computed inline, detached
# after the ratio.
def adaptive_weight(nll_loss, g_loss, last_layer, opt):
    nll_grads = torch.autograd.grad(nll_loss, last_layer, retain_graph=True)[0]
    g_grads = torch.autograd.grad(g_loss, last_layer, retain_graph=True)[0]
    disc_weight = torch.norm(nll_grads) / (torch.norm(g_grads) + 1e-4)
    disc_weight = torch.clamp(disc_weight, 0.0, 1e4).detach()
    loss = nll_loss + disc_weight * g_loss
    opt.zero_grad()
    loss.backward()
    opt.step()
