"""The shapes real training code takes (the semantic-model issue's list) that are real
pitfalls: each flagged line carries its expected code."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.autograd import grad


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)
        self.input = nn.Linear(4, 4)
        self.layers = nn.ModuleList([nn.Linear(4, 4) for _ in range(3)])

    def forward(self, x):
        return self.fc(x)

    def encode(self, x):
        return self.input(x)

    def zero_slice(self, a, b):
        # alias of a parameter: in-place on it is in-place on the leaf
        w = self.input.weight
        w[:, a:b] = 0  # error: GL002

    def bump_layer(self, i):
        self.layers[i].weight[0] = 0  # error: GL002


# An eval-mode `pred`, then a training `pred` with the same name that is backpropagated:
# the first forward is still wasted.
def reused_name(model, x, y, opt):
    model.eval()
    pred = model(x)  # error: GL004
    accuracy = (pred.argmax(1) == y).float().mean().item()
    model.train()
    pred = model(x)
    loss = F.cross_entropy(pred, y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return accuracy


# A view of a parameter, modified in place.
def bias_view(v, n):
    conv = nn.Conv2d(3, 8 * n, 3)
    b = conv.bias.view(n, -1)
    b[:, 4] += v  # error: GL002


# Mode switched on every model of a list: the forwards still record a graph that is only
# read as numbers (GL012's, as no one model's switch reaches them).
def ensemble(nets, x):
    [net.eval() for net in nets]
    outs = [net(x) for net in nets]  # error: GL012
    return torch.stack(outs).mean(0).argmax(-1).tolist()


# A module method that computes with the parameters is a forward.
def encode_only(model: Net, x):
    model.eval()
    z = model.encode(x)  # error: GL004
    return z.norm().item()


# A first derivative without create_graph, differentiated again later.
def penalty(critic, x, opt):
    x = x.requires_grad_()
    out = critic(x).sum()
    g = grad(out, x)[0]  # error: GL005
    gp = (g.norm(2, dim=1) - 1).pow(2).mean()
    opt.zero_grad()
    gp.backward()
    opt.step()


# A web route handler: the model is put in eval mode at module level, the forward runs
# in a function the framework calls.
class App:
    def route(self, path):
        return lambda f: f


app = App()
served = Net()
served.eval()


@app.route("/predict")
def predict(x):
    out = served(x)  # error: GL004
    return out.argmax(-1).tolist()


# An init function that returns the model in eval mode.
def init_model():
    model = Net()
    model.eval()
    return model


def classify(x):
    model = init_model()
    logits = model(x)  # error: GL004
    return logits.argmax(-1).tolist()


# A loss handed to a tracker whose update method keeps it as it is.
class AverageMeter:
    def __init__(self):
        self.sum = 0
        self.count = 0

    def update(self, val, n=1):
        self.sum += val
        self.count += n


def tracked(model, batches, opt):
    meter = AverageMeter()
    for x, y in batches:
        loss = F.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        meter.update(loss)  # error: GL006
    return meter.sum / meter.count


# Gradients collected in a list, then differentiated again through a loop over it.
def container_penalty(critic, xs, opt):
    grads = []
    for x in xs:
        x = x.requires_grad_()
        grads.append(grad(critic(x).sum(), x)[0])  # error: GL005
    gp = 0
    for g in grads:
        gp = gp + (g.norm() - 1) ** 2
    opt.zero_grad()
    gp.backward()
    opt.step()


# Backward and step inside a method the loop calls: the hidden state it hands back still
# carries this step's graph, and the next call backpropagates through it again.
class RecurrentLearner(nn.Module):
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
        return h


def train_recurrent(xs):
    learner = RecurrentLearner()
    h = torch.zeros(1, 4)
    for x in xs:
        h = learner.train_step(x, h)  # error: GL001
    return h
