"""Correct code from the real-code ledger (bench/real-code/ledger.tsv) that gradlint once
flagged: each function is the shape of one FALSE row, reduced. None may be flagged."""
import argparse

import numpy as np
import paddle
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.autograd import grad

parser = argparse.ArgumentParser()
args = parser.parse_args()


class LinearValue(nn.Module):
    def forward(self, x):
        return x


# awd-lstm-lm main.py: a loop counter advanced by a Python int is not tensor state.
def lm_counter(model, data, opt, hidden):
    batch, i = 0, 0
    while i < data.size(0) - 1:
        seq_len = max(5, int(np.random.normal(70, 5)))
        seq_len = min(seq_len, args.bptt + 10)
        out, hidden = model(data[i : i + seq_len], hidden)
        hidden = tuple(h.detach() for h in hidden)
        loss = out.sum()
        opt.zero_grad()
        loss.backward()
        opt.step()
        batch += 1
        i += seq_len


# PyTorch-GAN began.py: a float kept in [0, 1] from `.item()` and min/max.
def began_k(d, xs, opt, gamma=0.5, lambda_k=0.001):
    k = 0.0
    for x in xs:
        d_loss_real = d(x).mean()
        d_loss_fake = d(x * 0.5).mean()
        d_loss = d_loss_real - k * d_loss_fake
        opt.zero_grad()
        d_loss.backward()
        opt.step()
        diff = torch.mean(gamma * d_loss_real - d_loss_fake)
        k = k + lambda_k * diff.item()
        k = min(max(k, 0), 1)


# learn2learn maml_trpo.py: an object rebound by `.to(device)` each iteration is not
# a graph-carrying tensor.
def rebound_module(policy, opt, batches, device):
    baseline = LinearValue()
    for x in batches:
        baseline = baseline.to(device)
        loss = policy(x).sum() + baseline(x).sum()
        opt.zero_grad()
        loss.backward()
        opt.step()


# higher test_higher.py: an unrolled MAML inner loop. The fast weights carry the graph
# on purpose and the losses are kept for the meta-step after the loop.
def maml_inner_loop(net, fast_weights, batches, lr):
    losses = []
    grads = []
    for x, y in batches:
        loss = F.mse_loss(net(x, params=fast_weights), y)
        g = grad(loss, fast_weights, create_graph=True)
        losses.append(loss)
        grads.append(g)
        fast_weights = [w - lr * gw for w, gw in zip(fast_weights, g)]
    return sum(losses), fast_weights


# First-order MAML: the gradient is taken with respect to the carried weights.
def first_order_fast_weights(net, weights, batches, lr, meta_opt):
    for x, y in batches:
        loss = F.mse_loss(net(x, weights), y)
        g = torch.autograd.grad(loss, weights, create_graph=False)
        weights = [w - lr * gw for w, gw in zip(weights, g)]
    meta_opt.zero_grad()
    F.mse_loss(net(x, weights), y).backward()
    meta_opt.step()


# higher's differentiable optimizer: `diffopt.step(loss)` keeps the graph.
def differentiable_optimizer(fnet, diffopt, batches):
    losses = []
    for x, y in batches:
        loss = F.mse_loss(fnet(x), y)
        diffopt.step(loss)
        losses.append(loss)
    return losses


# deepxde: the Paddle branch of a multi-backend function is not torch code.
def multi_backend_predict(net, x, backend_name):
    if backend_name == "paddle":
        net.eval()
        inputs = paddle.to_tensor(x, stop_gradient=False)
        outputs = net(inputs)
        return outputs.numpy()
    return None


# deepxde model.py predict: inputs require grad and the operator differentiates the
# outputs with respect to them (a PDE residual).
def predict_with_operator(net, x, operator):
    net.eval()
    inputs = torch.as_tensor(x).requires_grad_()
    outputs = net(inputs)
    y = operator(inputs, outputs)
    return y.detach().numpy()


# deepxde callbacks.py: the input was made to require grad in another method.
class OperatorPredictor:
    def __init__(self, x, op, model):
        self.x = torch.as_tensor(x)
        self.x.requires_grad_()
        self.op = op
        self.model = model

    def on_predict_end(self):
        self.model.net.eval()
        outputs = self.model.net(self.x)
        self.value = self.op(self.x, outputs).detach().numpy()


# deepxde: the mode depends on a flag; after the if/else it is not known to be eval.
def outputs_losses(net, training, inputs, targets):
    if training:
        net.train()
    else:
        net.eval()
    outputs = net(inputs)
    return F.mse_loss(outputs, targets)


# higher deep-energy-mnist.py: the model's own forward runs gradient steps.
class UnrollEnergy(nn.Module):
    def __init__(self, enet):
        super().__init__()
        self.enet = enet

    def forward(self, x):
        y = torch.zeros(x.size(0), 10, requires_grad=True)
        for _ in range(5):
            energy = self.enet(x, y).sum()
            (g,) = torch.autograd.grad(energy, y, create_graph=True)
            y = y - 0.1 * g
        return y


def test_energy(model, loader):
    model.eval()
    correct = 0
    for data, target in loader:
        output = model(data)
        correct += output.argmax(1).eq(target).sum().item()
    return correct


# dino eval_knn.py: the helper that runs the forward is decorated with no_grad.
@torch.no_grad()
def extract_features(model, loader):
    feats = []
    for x in loader:
        feats.append(model(x))
    return torch.cat(feats)


def knn_main(model, loader):
    model.eval()
    features = extract_features(model, loader)
    return features


# awd-lstm: a recurrent state that is both input and output of the forward is not a
# derivative operator; this one is under no_grad anyway.
def lm_evaluate(model, batches, hidden):
    model.eval()
    total = 0.0
    with torch.no_grad():
        for x, y in batches:
            output, hidden = model(x, hidden)
            total += F.cross_entropy(output, y).item()
            hidden = tuple(h.detach() for h in hidden)
    return total


# A training helper called after eval(): eval is deliberate (frozen batch norm) and the
# helper differentiates inside.
def fine_tune_step(model, batch, opt):
    loss = model(batch).sum()
    opt.zero_grad()
    loss.backward()
    opt.step()
    return loss.item()


def fine_tune(model, batches, opt):
    model.eval()
    for batch in batches:
        fine_tune_step(model, batch, opt)


# torch/fx/passes/splitter_base.py: a helper runs the forward only for a hook's side
# effect and drops its output at once.
def capture_inputs(main_mod, example_inputs):
    captured = []
    handle = main_mod.register_forward_pre_hook(lambda m, i: captured.append(i))
    main_mod(*example_inputs)
    handle.remove()
    return captured


def splitter(split_mod, sample_input):
    split_mod.eval()
    inputs = capture_inputs(split_mod, sample_input)
    return inputs


# HowToTrainYourMAMLPytorch: evaluation adapts with an inner loop even in eval mode;
# the module's forward reaches autograd.grad through a method it calls.
class MAMLFewShotClassifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.classifier = nn.Linear(4, 2)

    def inner_loop_update(self, loss, weights):
        grads = torch.autograd.grad(loss, weights, create_graph=False)
        return [w - 0.1 * g for w, g in zip(weights, grads)]

    def forward(self, batch, steps):
        x, y = batch
        weights = list(self.classifier.parameters())
        for _ in range(steps):
            loss = F.cross_entropy(F.linear(x, *weights), y)
            weights = self.inner_loop_update(loss, weights)
        return F.cross_entropy(F.linear(x, *weights), y)

    def evaluation_forward_prop(self, batch):
        return self.forward(batch, steps=5)

    def run_validation_iter(self, batch):
        if self.training:
            self.eval()
        losses = self.evaluation_forward_prop(batch)
        return losses.item()


# diffusers dreambooth scripts: a pipeline object moved between devices in the loop.
class AutoencoderKL:
    @classmethod
    def from_pretrained(cls, name):
        return cls()


def offload_vae(transformer, batches, opt, offload):
    vae = AutoencoderKL.from_pretrained("vae")
    for batch in batches:
        if offload:
            vae = vae.to("cuda")
        latents = vae.encode(batch)
        if offload:
            vae = vae.to("cpu")
        loss = transformer(latents).sum()
        opt.zero_grad()
        loss.backward()
        opt.step()


# diffusers amused: a value read off a config attribute of a call's result.
def codebook(accelerator, model, batches, opt):
    for batch in batches:
        codebook_size = accelerator.unwrap_model(model).config.codebook_size
        logits = model(batch).reshape(-1, codebook_size)
        loss = logits.logsumexp(-1).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()


# diffusers sdxl: a tensor from a config, or None, moved each step.
def latents_stats(vae_config, model, batches, opt):
    latents_mean = None
    if vae_config is not None:
        latents_mean = torch.tensor(vae_config).view(1, 4, 1, 1)
    for x in batches:
        if latents_mean is not None:
            latents_mean = latents_mean.to(device=x.device, dtype=x.dtype)
            x = x - latents_mean
        loss = model(x).sum()
        opt.zero_grad()
        loss.backward()
        opt.step()
