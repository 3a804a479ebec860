"""The shapes of the held-out measurement (the "Generalise" issue's list): real pitfalls
carry their expected code on the flagged line; the traps carry none."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Policy(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(4, 4)
        self.head = nn.Linear(4, 2)

    def forward(self, x):
        return self.head(torch.relu(self.body(x)))

    def act(self, obs):
        return self.forward(obs).argmax(-1)  # error: GL012


# 1. eval() in main(), the forward in a function that receives the model: reported where
# the evaluation runs, which is also where `no_grad` fixes it.
def evaluate(net, loader):
    correct = 0
    for x, y in loader:
        out = net(x)
        correct += (out.argmax(1) == y).sum().item()
    return correct


def main(loader):
    net = Policy()
    net.eval()
    return evaluate(net, loader)  # error: GL004


# 2. forwards through module methods of an object whose class is not known here.
def run_episode(agent, env):
    agent.eval()
    obs, done, total = env.reset(), False, 0.0
    while not done:
        action = agent.act(obs)  # error: GL004
        obs, reward, done = env.step(action.item())
        total += reward
    return total


# 3. eval() under an isinstance guard.
def score(net, x):
    if isinstance(net, nn.Module):
        net.eval()
    logits = net(x)  # error: GL004
    return logits.argmax(-1).tolist()


# 4. eval and backward on two branches of one flag: only the eval branch wastes.
def step(model, x, y, opt, train):
    if train:
        model.train()
        loss = F.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss.item()
    model.eval()
    pred = model(x)  # error: GL004
    return F.mse_loss(pred, y).item()


# 5. a character-level generator: every step's forward in train mode, read as numbers.
def generate(decoder, hidden, start, steps, temperature=0.8):
    inp, chars = start, []
    for _ in range(steps):
        output, hidden = decoder(inp, hidden)  # error: GL012, GL015
        weights = output.data.view(-1).div(temperature).exp()
        top = torch.multinomial(weights, 1)[0].item()
        chars.append(top)
        inp = torch.tensor([top])
    return chars


def greedy_decode(model, src, max_len):
    ys = [0]
    for _ in range(max_len):
        out = model(src, torch.tensor(ys))  # error: GL012
        _, top = out.data.topk(1)
        ys.append(top.item())
    return ys


class CharRNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = nn.GRU(8, 8)

    def forward(self, x, h):
        return self.rnn(x, h)


class Seq2Seq(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(8, 8)

    def forward(self, src, ys):
        return self.proj(src)


def sample_during_training(steps):
    # the generators' callers hand them modules with parameters, in training mode
    print(generate(CharRNN(), torch.zeros(1, 1, 8), torch.zeros(1, 1, 8), steps))
    print(greedy_decode(Seq2Seq(), torch.zeros(1, 8), steps))


# 6. the loss bound in a tuple assignment, then kept across iterations.
def compute(model, batch):
    x, y = batch
    pred = model(x)
    return F.cross_entropy(pred, y), (pred.argmax(1) == y).float().mean()


def train_epoch(model, loader, opt):
    total = 0
    for batch in loader:
        loss, acc = compute(model, batch)
        opt.zero_grad()
        loss.backward()
        opt.step()
        total += loss  # error: GL006
    return total


# 7. an evaluation closure nested inside a training function.
def fit(model, loader, val_x, opt, epochs):
    def validate():
        model.eval()
        return model(val_x).argmax(-1).tolist()  # error: GL004

    for _ in range(epochs):
        model.train()
        for x, y in loader:
            opt.zero_grad()
            F.mse_loss(model(x), y).backward()
            opt.step()
        validate()


# 8. trap: requires_grad set on a leaf by attribute, later differentiated.
def fit_line(x, y):
    w = torch.zeros(3)
    w.requires_grad = True
    loss = ((x @ w - y) ** 2).mean()
    loss.backward()
    return w.grad


# 9. a rollout that carries an LSTM's hidden state across `while not done` segments.
def rollout(lstm, head, env, opt, segment):
    hidden = (torch.zeros(1, 1, 8), torch.zeros(1, 1, 8))
    obs, done = env.reset(), False
    while not done:
        losses = []
        for _ in range(segment):
            out, hidden = lstm(obs.view(1, 1, -1), hidden)  # error: GL001
            value = head(out).squeeze()
            obs, reward, done = env.step(0)
            losses.append((value - reward) ** 2)
        opt.zero_grad()
        torch.stack(losses).sum().backward()
        opt.step()


# 10. the first inner step of MAML without create_graph=True.
def maml_step(model, tasks, meta_opt, inner_lr):
    meta_opt.zero_grad()
    for (xs, ys), (xq, yq) in tasks:
        params = list(model.parameters())
        support = F.mse_loss(model(xs), ys)
        grads = torch.autograd.grad(support, params)  # error: GL005
        fast = [p - inner_lr * g for p, g in zip(params, grads)]
        query = F.mse_loss(torch.func.functional_call(model, dict(zip(
            [n for n, _ in model.named_parameters()], fast)), (xq,)), yq)
        query.backward()
    meta_opt.step()


# 10b. the same inner step in a method whose caller differentiates what it returns
# (GauravIyer's SineMAML: `metaloss = self.inner_loop(task)`, summed, then
# `torch.autograd.grad(metaloss_sum, self.weights)`).
class InnerLoopMAML:
    def __init__(self, net, alpha):
        self.net = net
        self.weights = list(net.parameters())
        self.alpha = alpha

    def inner_loop(self, xs, ys, xq, yq):
        fast = [w.clone() for w in self.weights]
        support = F.mse_loss(self.net.argforward(xs, fast), ys)
        grads = torch.autograd.grad(support, fast)  # error: GL005
        fast = [w - self.alpha * g for w, g in zip(fast, grads)]
        return F.mse_loss(self.net.argforward(xq, fast), yq)

    def outer_loop(self, tasks):
        total = 0
        for task in tasks:
            total += self.inner_loop(*task)
        return torch.autograd.grad(total, self.weights)

    def first_order_loop(self, xs, ys, xq, yq):
        # its caller only reads the query loss as a number: first order is all it needs
        fast = [w.clone() for w in self.weights]
        support = F.mse_loss(self.net.argforward(xs, fast), ys)
        grads = torch.autograd.grad(support, fast)
        fast = [w - self.alpha * g for w, g in zip(fast, grads)]
        return F.mse_loss(self.net.argforward(xq, fast), yq)

    def report(self, tasks):
        return [self.first_order_loop(*task).item() for task in tasks]


# A helper that reads a parameter's `.shape` and calls nothing: asked whether it makes
# numbers of an argument, it has no calls to look at (this crashed the file's lint).
def width(t):
    return t.shape[-1]


def probe(net):
    return width(net(torch.zeros(1, 4)))
