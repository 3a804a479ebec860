"""A meta-learner's inner adaptation loop hands its unroll to a caller that
differentiates it (census, dev half: cnguyen10/few_shot_meta_learning Simpa.py:598).
`adaptation()` takes only functional gradients (`autograd.grad`, no backward, no
step), carries `phi` (built from a hypernetwork's output) across its inner updates and
returns it; `train()` backpropagates a loss of it into the hypernetworks. The carried
history is the meta-gradient's path: nothing may be flagged, except where marked."""
import torch
import torch.nn as nn


class HyperNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.zeros(4))

    def forward(self):
        return [self.w * 1.0]


class Learner:
    def __init__(self):
        self.hyper_net = HyperNet()
        self.phi_net = HyperNet()
        self.optimizer = torch.optim.Adam(
            [*self.hyper_net.parameters(), *self.phi_net.parameters()]
        )

    def kl(self, params, phi):
        return sum(((p - q) ** 2).sum() for p, q in zip(params, phi))

    def train_phi(self, params, phi):
        grads = torch.autograd.grad(self.kl(params, phi), phi, retain_graph=True)
        return [q + 0.1 * g for q, g in zip(phi, grads)]

    def adaptation(self, x, num_inner_updates):
        params = self.hyper_net.forward()
        phi = self.phi_net.forward()
        for _ in range(num_inner_updates):
            loss = (x * params[0]).sum() + self.kl(params, phi)
            grads = torch.autograd.grad(loss, params, retain_graph=True)
            new_phi = self.train_phi(params, phi)
            phi = [q + 0.0 for q in new_phi]
            new_params = [None] * len(params)
            for i in range(len(params)):
                new_params[i] = params[i] - 0.1 * grads[i]
            params = [p + 0.0 for p in new_params]
        return params, phi

    def train(self, xs):
        for x in xs:
            params, phi = self.adaptation(x, 5)
            loss = self.kl(params, phi)
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()


# The same inner loop whose carried value stays inside the function: only a number
# leaves it, so each inner step keeps the previous steps' history for nothing.
def adapt_and_report(learner, x, num_inner_updates):
    params = learner.hyper_net.forward()
    phi = learner.phi_net.forward()
    kl = 0.0
    for _ in range(num_inner_updates):
        loss = (x * params[0]).sum() + learner.kl(params, phi)
        grads = torch.autograd.grad(loss, params, retain_graph=True)
        new_phi = learner.train_phi(params, phi)
        phi = [q + 0.0 for q in new_phi]  # error: GL001
        new_params = [None] * len(params)
        for i in range(len(params)):
            new_params[i] = params[i] - 0.1 * grads[i]
        params = [p + 0.0 for p in new_params]
        kl = loss.item()
    return kl


# A first-order MAML step: each task's inner gradient is an `autograd.grad` without
# `create_graph` (GL005's finding), and the per-task query losses are summed and
# backpropagated once after the task loop, a within-step sum (not GL006's history).
def first_order_meta_step(model, opt, tasks, inner_lr=0.01):
    opt.zero_grad()
    meta_loss = 0.0
    for x, y in tasks:
        params = list(model.parameters())
        grads = torch.autograd.grad(nn.functional.mse_loss(model(x), y), params)  # error: GL005
        fast = [p - inner_lr * g for p, g in zip(params, grads)]
        meta_loss = meta_loss + nn.functional.mse_loss(nn.functional.linear(x, *fast), y)
    meta_loss.backward()
    opt.step()
