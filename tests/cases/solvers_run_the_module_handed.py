"""An ODE or SDE solver runs the vector field it is handed at every step:
`odeint(func, y0, t)` is a forward of `func`, and what it returns carries `func`'s
history. The torchdiffeq example's visualisation, solved again every few iterations
with grad on and only plotted, records the whole solve for nothing. Before, the solver
was an imported function that touched no parameters."""

import matplotlib.pyplot as plt
import torch
import torch.nn as nn
from torchdiffeq import odeint, odeint_adjoint


class ODEFunc(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(2, 50), nn.Tanh(), nn.Linear(50, 2))

    def forward(self, t, y):
        return self.net(y)


func = ODEFunc()
optimizer = torch.optim.RMSprop(func.parameters(), lr=1e-3)
true_y0 = torch.tensor([[2.0, 0.0]])
t = torch.linspace(0.0, 25.0, 1000)

for itr in range(1, 2000):
    optimizer.zero_grad()
    pred_y = odeint(func, true_y0, t)  # trained: silent
    loss = torch.mean(torch.abs(pred_y - true_y0))
    loss.backward()
    optimizer.step()
    if itr % 20 == 0:
        pred_y = odeint(func, true_y0, t)  # error: GL012
        plt.plot(t.numpy(), pred_y.detach().numpy()[:, 0, 0])


def final_state(y0):
    return odeint_adjoint(func, y0, t)[-1].norm().item()  # error: GL012


def plotted_under_no_grad(y0):
    with torch.no_grad():
        plt.plot(t.numpy(), odeint(func, y0, t)[:, 0, 0].numpy())


def solved_with_a_plain_function(y0):
    return odeint(lambda s, y: -y, y0, t)[-1].norm().item()
