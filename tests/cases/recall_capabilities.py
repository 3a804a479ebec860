"""General capabilities behind the census's development-half misses (issue "Generalise",
section 2): real pitfalls carry their expected code on the flagged line; the traps carry
none."""

import numpy as np
import torch
from torch import nn

critic = nn.Linear(4, 1)
generator = nn.Linear(8, 4)
classifier = nn.Linear(4, 1)
opt_d = torch.optim.Adam(critic.parameters())
opt_g = torch.optim.Adam(generator.parameters())


# 1. requires_grad switches are read in order in the forward's own function: a GAN
# freezes its critic for the generator's step and unfreezes it for its own step, so a
# validation forward after the unfreeze records a graph nobody uses.
def train_gan(loader, val_loader, noise):
    for real in loader:
        for p in critic.parameters():
            p.requires_grad_(False)  # freeze the critic for the generator's step
        frozen_score = critic(real).mean().item()  # records nothing: frozen, plain input
        fake = generator(noise)
        g_loss = -critic(fake).mean()
        opt_g.zero_grad()
        g_loss.backward()
        opt_g.step()
        for p in critic.parameters():
            p.requires_grad_(True)
        d_loss = critic(real).mean() - critic(fake.detach()).mean()
        opt_d.zero_grad()
        d_loss.backward()
        opt_d.step()
        costs = []
        for images in val_loader:
            with torch.no_grad():
                images_v = images  # the block covers only this alias
            score = critic(images_v)  # error: GL012
            costs.append(-score.mean().cpu().data.numpy())
        print(np.mean(costs), frozen_score)


# 2. a model wrapped in nn.DataParallel holds the parameters of the module it wraps.
def validate(net, loader):
    parallel = nn.DataParallel(nn.Linear(4, 2))
    total = 0
    for x, y in loader:
        total += (parallel(x).argmax(1) == y).sum().item()  # error: GL012
    return total


# 3. a forward whose result is only compared: the bool tensor has no history.
def accuracy(inputs, labels):
    return torch.mean(((classifier(inputs) > 0.5) == labels).float())  # error: GL012


# Traps.
# A forward compared inside a loss that is differentiated: its graph is used.
def hinge_step(x):
    out = classifier(x)
    loss = (out * (out > 0).float()).mean()
    loss.backward()


# `x is None` is no comparison of values: nothing here reads the forward as numbers.
def maybe_forward(x):
    if x is None:
        return None
    return classifier(x)


# A forward after a freeze in the same function, with no unfreeze before it.
def frozen_eval(x):
    probe = nn.Linear(4, 1)
    probe.requires_grad_(False)
    value = probe(x).sum().item()
    probe.requires_grad_()
    return value


# 4. a function that returns a forward's output, whose every caller in sight only reads
# it (written out as an image under torchvision's own no_grad, or made numbers): the
# forward's graph is never differentiated.
def sample_grid_for_recall(gen, noise):
    with torch.no_grad():
        noise_v = noise  # the block covers only this alias
    samples = gen(noise_v)  # error: GL012
    return samples.view(-1, 1, 2, 2) * 0.5 + 0.5


def log_samples_for_recall(noise, writer, step):
    import torchvision

    images = sample_grid_for_recall(generator, noise)
    torchvision.utils.save_image(images, f"samples_{step}.png")
    writer.add_image("samples", torchvision.utils.make_grid(images), step)


# Traps: the same shape, but a caller differentiates what is returned; and a helper
# handed on as a callback, whose callers are out of sight.
def sample_for_loss_for_recall(gen, noise):
    samples = gen(noise)
    return samples * 0.5


def generator_step_for_recall(noise):
    images = sample_for_loss_for_recall(generator, noise)
    print(images.shape)
    loss = -critic(images).mean()
    loss.backward()


def sample_callback_for_recall(noise):
    return generator(noise)


def run_callbacks_for_recall(noise, hooks):
    print(sample_callback_for_recall(noise).shape)  # error: GL012
    hooks.append(sample_callback_for_recall)


# Trap: a detached target returned inside a loss the caller differentiates: the target
# network's forward is reported for its own waste, the loss is not followed into the caller.
def td_loss_for_recall(state, next_state, reward):
    current = critic(state)
    target = reward + 0.99 * generator(next_state).max(dim=1, keepdim=True)[0].detach()  # error: GL012
    return ((current - target) ** 2).mean()


def td_update_for_recall(state, next_state, reward):
    loss = td_loss_for_recall(state, next_state, reward)
    loss.backward()


# 5. models bound by one tuple assignment: each name is its own constructor's module.
def show_samples(noise, vis):
    net_g, net_d = nn.Linear(8, 4), nn.Linear(4, 1)
    fake = net_g(noise)  # error: GL012
    vis.images(fake.detach().cpu().numpy())
    return net_d


# Trap: a pair unpacked from something out of sight is not guessed at.
def show_pair(noise, vis, make_pair):
    net_g, net_d = make_pair()
    fake = net_g(noise)
    vis.images(fake.detach().cpu().numpy())
    return net_d


# 6. a model put in eval mode at module level and run by a helper that other functions
# call (a notebook's `predict`, called by `result`): the helper runs after the module's
# code, and nothing in the file switches the model back.
detector = nn.Linear(4, 2)
detector.eval()


def predict_for_recall(img):
    pred = detector(img)  # error: GL004
    return pred.detach().numpy()


def result_for_recall(img):
    return predict_for_recall(img).sum()


# Followed returns: each place of a returned tuple goes where its caller unpacks it
# (both read only as numbers here: the forward is the finding, not the call), and a
# caller that drops what the function returns (`main()`) reads nothing.
def rollout_for_recall(noise):
    state = generator(noise)  # error: GL012
    print(state.detach().numpy())
    return state.sum(), state


def script_main_for_recall(noise):
    out = generator(noise)
    print(out.detach().numpy())
    return out


def consume_for_recall(noise):
    # the caller reads both results only as numbers: the graph is thrown away inside
    total, state = rollout_for_recall(noise)
    print(total.item(), state.shape)
    script_main_for_recall(noise)


# 7. a hand-written net of leaf tensors (d2l), handed to an evaluation helper by name:
# every call of the helper passes the same function of this file.
W_hand = torch.randn(4, 3) * 0.01
b_hand = torch.zeros(3)
W_hand.requires_grad_(True)
b_hand.requires_grad_(True)


def hand_net(X):
    return torch.softmax(X @ W_hand + b_hand, dim=1)


def evaluate_accuracy_for_recall(data_iter, net):
    correct = 0.0
    for X, y in data_iter:
        correct += (net(X).argmax(dim=1) == y).sum().item()  # error: GL012
    return correct


def train_hand_net(data_iter, net):
    for X, y in data_iter:
        loss = -net(X).gather(1, y.view(-1, 1)).log().mean()
        loss.backward()


print(evaluate_accuracy_for_recall([], hand_net))
train_hand_net([], hand_net)


# 8. a network from torchvision's model zoo holds weights, also when cut down to a
# feature extractor with `nn.Sequential(*list(net.children())[:-1])`.
class FeatureExtraction:
    def __init__(self, loader):
        import torchvision.models as models

        self.loader = loader
        self.model = models.resnet152(pretrained=True)
        self.model = nn.Sequential(*list(self.model.children())[:-1])

    def extract(self):
        features = []
        for images, _ in self.loader:
            outputs = self.model(images)  # error: GL012
            features.append(outputs.data.cpu().numpy())
        return features


# Trap: a zoo function that lists weights builds no network.
def weights_for_recall(name, x):
    from torchvision import models

    weights = models.get_model_weights(name)
    print(weights(x).shape)
