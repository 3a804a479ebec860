"""A wrapper handed its model when it is built (an agent, a predictor, an evaluator):
`self.policy = policy` in `__init__`, and every construction in the file passes a
module with weights (`Agent(Net())`, or a name bound to one). What its methods run is
that model's forward; before, `self.policy` was known to hold weights only when the
class itself asked for its parameters or switched its mode. A construction that hands
in a plain function says nothing, and neither does a class built with other things
on other calls."""

import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)

    def forward(self, x):
        return self.fc(x)


class Agent:
    def __init__(self, policy, epsilon=0.1):
        self.policy = policy
        self.epsilon = epsilon

    def act(self, obs):
        obs = torch.as_tensor(obs).float()
        return self.policy(obs).argmax().item()  # error: GL012


class Predictor:
    def __init__(self, model):
        self.model = model

    def predict(self, x):
        return self.model(x).argmax(1).tolist()  # error: GL012


class Scorer:
    def __init__(self, score):
        self.score = score

    def __call__(self, x):
        return self.score(x).mean().item()


agent = Agent(Net())
net = Net()
predictor = Predictor(model=net)
by_layer = Scorer(Net())
by_function = Scorer(torch.sigmoid)
