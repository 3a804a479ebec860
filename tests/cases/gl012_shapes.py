"""GL012 on the shapes real code has (bench/real-code), reduced: the findings that must
stay (markers) and the look-alikes that must stay silent."""

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn
from torch.distributions import Categorical

net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
# put in eval mode below: none of its forwards is GL012's (its switch is seen file-wide)
evaluated = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
relu = nn.ReLU()
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(net.parameters(), lr=0.1)


# -- findings ---------------------------------------------------------------------------


class Agent:
    """DeepRL's DQN agent: a network built by a factory, trained by an optimizer."""

    def __init__(self, network_fn, optimizer_fn):
        self.network = network_fn()
        self.optimizer = optimizer_fn(self.network.parameters())

    def eval_step(self, state):
        q = self.network(state)["q"]  # error: GL012
        return q.argmax(-1).cpu().numpy()


def classic_accuracy(loader):
    correct = 0
    for images, labels in loader:
        outputs = net(images)  # error: GL012
        _, predicted = torch.max(outputs.data, 1)
        correct += (predicted == labels).sum().item()
    return correct


def validation_loss(loader):
    total = 0.0
    for x, y in loader:
        total += criterion(net(x), y).item()  # error: GL012
    return total


def running_mean_loss(loader):
    total = 0
    for x, y in loader:
        loss = F.cross_entropy(net(x), y)  # error: GL012
        loss /= 2
        total += loss  # error: GL015
    return total.item()


def dragan_like(real, valid, fake, penalty):
    # d_loss is only logged: only the penalty is backpropagated
    real_loss = F.mse_loss(net(real), valid)  # error: GL012
    d_loss = real_loss / 2
    penalty.backward()
    print(d_loss.item())


def classifier_in_the_training_loop(images):
    predictions = net(images)  # error: GL012
    return np.mean(np.argmax(predictions.data.cpu().numpy(), axis=1) == 0)


def critic_of_actor(state):
    # two forwards in one statement: one finding, one fix
    return float(net(net(state)).sum())  # error: GL012


def to_np(t):
    return t.cpu().detach().numpy()


def keep(t):
    return t * 2


class DeterministicActor:
    """DeepRL's DDPG agent: the network is known to hold parameters only from its
    gradients being cleared; the rollout's action is converted by a helper, then the
    name is reused for the array."""

    def __init__(self, network_fn, replay):
        self.network = network_fn()
        self.replay = replay

    def step(self, state, noise):
        action = self.network(state)  # error: GL012
        action = to_np(action)
        action += noise
        self.replay.feed(dict(state=state, action=action))

    def learn(self, states, target):
        loss = ((self.network(states) - target) ** 2).mean()
        self.network.zero_grad()
        loss.backward()


def hidden_sizes(x):
    # dilated-rnn's test: each element of the result iterated, and only its size read
    hidden = net(x)[1]  # error: GL012
    for hid in hidden:
        print(hid.size())


def double_dqn_step(states, actions, rewards, next_states, target_q):
    # gdrl's DDQN: the online network picks the next actions by index only; an index
    # carries no gradient into what it indexes, so that forward's graph is thrown away
    next_actions = net(next_states).max(1)[1]  # error: GL012
    q_next = target_q[torch.arange(len(rewards)), next_actions]
    q = net(states)[torch.arange(len(rewards)), actions]
    loss = F.mse_loss(q, rewards + 0.99 * q_next)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()


# -- traps --------------------------------------------------------------------------------


def through_a_helper_that_keeps_the_graph(x):
    # the helper hands the tensor back: its history may be used
    out = keep(net(x))
    return out.argmax().item(), out


def same_name_then_differentiated(x, y, opt):
    # `out` from the forward reaches a call that also gets the input: it may be
    # differentiated by it
    out = net(x)
    penalty(x, out)
    out = to_np(out)
    return out


def penalty(a, b):
    return torch.autograd.grad(b.sum(), a)


def returned_logits(x):
    out = net(x)
    print(out.argmax().item())
    return out  # may be differentiated by the caller


def stored_on_self(agent, x):
    out = net(x)
    agent.last = out
    return out.argmax().item()


def appended(x, history):
    out = net(x)
    history.append(out)
    return out.max(1)[1]


def handed_to_an_unknown_function(x, log):
    out = net(x)
    log(out)
    return out.argmax().item()


def read_by_a_closure(x):
    out = net(x)

    def later():
        return out.sum()

    return out.argmax().item(), later


def reinforce(obs, saved_log_probs):
    probs = net(obs).softmax(-1)
    m = Categorical(probs)
    action = m.sample()
    saved_log_probs.append(m.log_prob(action))
    return action.item()


def used_in_a_loss(x, y):
    logits = net(x)
    accuracy = (logits.argmax(1) == y).float().mean().item()
    loss = F.cross_entropy(logits, y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return accuracy


def input_gradients(x):
    # saliency: the top class's score differentiated for the input's gradient
    x.requires_grad_()
    score = net(x)
    top = score.argmax().item()
    score[0, top].backward()
    return x.grad


def plotted_on_points_made_to_require_grad(x):
    # a PINN's plot on its collocation points: they require grad, but a result that
    # only ends as numbers can take no gradient to them
    x.requires_grad_()
    u = net(x)  # error: GL012
    return u.detach().cpu().numpy()


def parameterless_modules(x, y):
    # ReLU and a loss module hold no parameters: nothing records on plain inputs
    return relu(x).sum().item() + criterion(x, y).item()


def frozen_backbone(x):
    backbone = nn.Linear(4, 4)
    for p in backbone.parameters():
        p.requires_grad = False
    return backbone(x).norm().item()


def evaluate(x, y):
    # eval mode is GL004's finding, never GL012's; the loss module in the same
    # evaluation block is covered by the same fix
    evaluated.eval()
    out = evaluated(x)  # error: GL004
    return criterion(out, y).item()


def under_no_grad(x):
    with torch.no_grad():
        return net(x).argmax().item()


@torch.inference_mode()
def decorated(x):
    return net(x).argmax().item()


def helper(x):
    return net(x).argmax().item()


def every_caller_disables_grad(x):
    with torch.no_grad():
        a = helper(x)
    with torch.inference_mode():
        b = helper(x)
    return a + b


def eval_in_the_caller(model, x):
    return model(x).argmax().item()


def caller_evaluates(x):
    # the model is switched to eval mode where the helper is called: GL004 reports the
    # call, GL012 stays silent in the helper
    evaluated.eval()
    return eval_in_the_caller(evaluated, x)  # error: GL004


def train_then_measure(loader):
    for x, y in loader:
        evaluated.train()
        loss = criterion(evaluated(x), y)
        loss.backward()
        hits = (evaluated(x).argmax(1) == y).sum().item()  # error: GL012
        print(hits)


class Density(nn.Module):
    def __init__(self):
        super().__init__()
        self.mean = nn.Parameter(torch.zeros(()))

    def forward(self, x):
        return torch.exp(-((x - self.mean) ** 2))

    def train_step(self, x):
        loss = -self(x).log().mean()
        loss.backward()
        return loss.item()


class ActorCritic(nn.Module):
    """spinningup's MLPActorCritic: act() runs the policy under no_grad itself."""

    def __init__(self):
        super().__init__()
        self.pi = nn.Linear(4, 2)

    def forward(self, obs):
        return self.pi(obs)

    def act(self, obs):
        with torch.no_grad():
            return self.pi(obs).numpy()


class Teacher(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(4, 2)

    @torch.no_grad()
    def forward(self, x):
        return self.body(x)


def rollout(obs):
    ac = ActorCritic()
    teacher = Teacher()
    return ac.act(obs).argmax() + teacher(obs).argmax().item()


class Detector(nn.Module):
    """longcw/yolo2-pytorch's Darknet19: the training forward computes its losses and
    keeps them on the module, and the loop backpropagates `net.loss`; the predictions it
    returns are only read as numbers, but the forward's graph is used."""

    def __init__(self):
        super().__init__()
        self.head = nn.Linear(4, 2)

    def forward(self, x, target):
        out = self.head(x)
        self.loss = ((out - target) ** 2).mean()
        return out


def train_detector(loader, optimizer):
    net = Detector()
    for x, target in loader:
        pred = net(x, target)
        print(pred.argmax(-1).tolist())
        loss = net.loss
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def show_detector(loader):
    net = Detector()
    for x, target in loader:
        pred = net(x, target)  # error: GL012
        print(pred.argmax(-1).tolist())
        print(net.head.weight.shape)


def hidden_states_kept(x, store):
    # the iterated elements are stored: their graph may be differentiated later
    hidden = net(x)[1]
    for hid in hidden:
        store.append(hid)


def each_output_backpropagated(x):
    outs = net(x)
    for out in outs:
        out.sum().backward()


def indexed_output_backpropagated(states, actions, rewards):
    # the forward is what is indexed, not the index: its graph reaches the backward
    q = net(states)[torch.arange(len(rewards)), actions]
    F.mse_loss(q, rewards).backward()
