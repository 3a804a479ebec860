"""Correct code in the shapes of the semantic-model issue's list: none may be flagged."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.autograd import grad


# Gradient accumulation: the accumulator is reset every outer iteration and read as a
# number; at most k micro-batches' graphs are ever alive.
def accumulation(model, batches, opt, k):
    for group in batches:
        logged = 0.0
        opt.zero_grad()
        for x, y in group:
            loss = F.mse_loss(model(x), y) / k
            loss.backward()
            logged += loss.item()
        opt.step()


# A sum over environments backpropagated once after the loop.
def over_environments(model, envs, opt):
    total = 0
    for x, y in envs:
        total = total + F.mse_loss(model(x), y)
    opt.zero_grad()
    total.backward()
    opt.step()


# A helper that returns a Python float, and one under no_grad.
class Trainer:
    def __init__(self, model, opt):
        self.model = model
        self.opt = opt

    @torch.no_grad()
    def batch_metric(self, x, y):
        return F.mse_loss(self.model(x), y)

    def fit(self, batches):
        total = 0.0
        for x, y in batches:
            loss = F.mse_loss(self.model(x), y)
            self.opt.zero_grad()
            loss.backward()
            self.opt.step()
            total += self.batch_metric(x, y)
        return total


# MAML with a helper that takes the gradient and returns the fast weights.
def sgd_update(weights, grads, lr):
    return [w - lr * g for w, g in zip(weights, grads)]


def maml(net, weights, tasks, meta_opt, lr):
    for support, query in tasks:
        fast = weights
        for _ in range(3):
            loss = F.mse_loss(net(support[0], fast), support[1])
            grads = grad(loss, fast, create_graph=True)
            fast = sgd_update(fast, grads, lr)
        meta_loss = F.mse_loss(net(query[0], fast), query[1])
        meta_opt.zero_grad()
        meta_loss.backward()
        meta_opt.step()


# A Hessian-vector product in a nested helper.
def hessian_vector_product(loss, params, v):
    grads = grad(loss, params, create_graph=True)
    flat = torch.cat([g.reshape(-1) for g in grads])

    def hvp(vector):
        return grad(flat @ vector, params, retain_graph=True)

    return hvp(v)


# A Jacobian-trace accumulator (continuous normalising flows): not training history.
def jacobian_trace(f, z):
    z = z.requires_grad_()
    out = f(z)
    sum_diag = 0.0
    for i in range(z.shape[1]):
        sum_diag += grad(out[:, i].sum(), z, create_graph=True)[0][:, i]
    return sum_diag


# DataLoader targets reused after the loop are not carried state.
def loader_targets(model, loader, opt):
    for x, y in loader:
        x = x.view(x.size(0), -1)
        loss = F.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    return x.shape


# Tensors that never require grad carry no graph.
def never_requires_grad(model, opt, n):
    x = torch.randn(8, 4)
    for _ in range(n):
        x = x - x.mean(0)
        loss = model(x).sum()
        opt.zero_grad()
        loss.backward()
        opt.step()


# A first derivative rebound with create_graph=True before the grad-grad.
def rebound_first_derivative(f, x):
    x = x.requires_grad_()
    y = f(x).sum()
    g = grad(y, x)[0]
    print(g.norm().item())
    g = grad(y, x, create_graph=True)[0]
    return grad(g.sum(), x)[0]


# One key of a dict detached, the rest kept: only the detached one is accumulated.
def one_key_detached(model, batches, opt):
    history = []
    for x, y in batches:
        out = {"loss": F.mse_loss(model(x), y), "n": x.shape[0]}
        opt.zero_grad()
        out["loss"].backward()
        opt.step()
        out["loss"] = out["loss"].detach()
        history.append(out["loss"])
    return history


# A parameterless module (DropPath) on an input without grad records nothing.
class DropPath(nn.Module):
    def __init__(self, p=0.1):
        super().__init__()
        self.p = p

    def forward(self, x):
        if not self.training:
            return x
        keep = (torch.rand(x.shape[0], 1) > self.p).float()
        return x * keep / (1 - self.p)


def drop_path_eval():
    drop = DropPath()
    drop.eval()
    x = torch.randn(4, 8)
    y = drop(x)
    return y.sum().item()


# A module-level model that a training function switches back: the mode in a handler
# is not known to be eval, so GL004 stays silent. Whatever the mode, the handler's
# forward records a graph that is only read as numbers: GL012's finding.
shared = nn.Linear(4, 2)
shared.eval()


def fine_tune_shared(batches, opt):
    shared.train()
    for x, y in batches:
        loss = F.mse_loss(shared(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()


def serve_shared(x):
    return shared(x).argmax(-1).tolist()  # error: GL012


class Meter:
    def __init__(self):
        self.values = []

    def update(self, val):
        self.values.append(val)


def tracked_numbers(model, batches, opt):
    meter = Meter()
    for x, y in batches:
        loss = F.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        meter.update(loss.item())
    return meter.values


# higher tests/test_patch.py: gradients only checked for presence.
def gradients_are_present(test, loss, params):
    final_grads = torch.autograd.grad(loss, params)
    for g in final_grads:
        test.assertIsNotNone(g)


# Backward inside a method the loop calls, on what the object stored (REINFORCE's
# put_data / train_net): nothing the loop carries reaches it.
class Reinforce(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)
        self.data = []
        self.opt = torch.optim.Adam(self.parameters())

    def pi(self, x):
        return torch.softmax(self.fc(x), -1)

    def put_data(self, item):
        self.data.append(item)

    def train_net(self):
        loss = 0
        for r, prob in self.data:
            loss = loss - torch.log(prob) * r
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        self.data = []


def reinforce_episodes(episodes):
    agent = Reinforce()
    total = 0.0
    for episode in episodes:
        for obs, r in episode:
            prob = agent.pi(obs)
            agent.put_data((r, prob[0]))
            total = total + r
        agent.train_net()
    return total


# The method detaches what it hands back (truncated BPTT inside the helper).
class TruncatedLearner(nn.Module):
    def __init__(self):
        super().__init__()
        self.cell = nn.GRUCell(4, 4)
        self.opt = torch.optim.SGD(self.parameters(), lr=0.1)

    def train_step(self, x, h):
        h = self.cell(x, h)
        loss = h.pow(2).sum()
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        return h.detach()


def train_truncated(xs):
    learner = TruncatedLearner()
    h = torch.zeros(1, 4)
    for x in xs:
        h = learner.train_step(x, h)
    return h
