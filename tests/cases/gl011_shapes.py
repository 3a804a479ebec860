"""GL011 on shapes beyond the runnable fixtures: what must be found (markers) and the
look-alikes that must stay silent (no marker)."""

import torch
import torch.nn.functional as F
from torch import nn
from torch.autograd import grad as G


# A backward whose receiver is itself a call (`y.sum().backward()`), at module level.
x0 = torch.randn(3, requires_grad=True)
y0 = torch.exp(x0)
y0 += 1  # error: GL011
y0.sum().backward()


def grad_alias():
    x = torch.randn(3, requires_grad=True)
    y = torch.tanh(x)
    y[0] = 0  # error: GL011
    (g,) = G(y.sum(), x)
    return g


def parameter_and_argument(x):
    """`x` is an argument: it may be anything, but F.linear only accepts a tensor, and
    with a parameter as weight the input is saved whether x requires grad or not."""
    weight = nn.Parameter(torch.randn(4, 3))
    h = F.linear(x, weight)
    x.clamp_(0, 1)  # error: GL011
    h.sum().backward()


def view_of_saved():
    x = torch.randn(3, 3, requires_grad=True)
    y = x.softmax(-1)
    y.view(-1).zero_()  # error: GL011
    y.sum().backward()


def torch_function_inplace():
    w = torch.randn(3, requires_grad=True)
    x = torch.randn(3)
    h = w * x
    torch.relu_(x)  # error: GL011
    h.sum().backward()


def out_argument():
    w = torch.randn(3, requires_grad=True)
    x = torch.randn(3)
    h = x / w
    torch.add(w, 1, out=x)  # error: GL011
    h.sum().backward()


# -- traps ---------------------------------------------------------------------------


def unknown_operands(a, b):
    """Nothing proves that a or b requires grad: the product may not be recorded."""
    h = a * b
    a += 1
    h.sum().backward()


def number_operand():
    x = torch.randn(3, requires_grad=True)
    z = x + 0
    y = z * 2.0
    z.mul_(3)
    y.sum().backward()


def under_no_grad_forward():
    w = torch.randn(3, requires_grad=True)
    x = torch.randn(3)
    with torch.no_grad():
        h = w * x
    x += 1
    (h.sum() + w.sum()).backward()


def leaf_changed_outside_no_grad():
    """GL002's error comes first; GL011 leaves it to GL002."""
    w = torch.randn(3, requires_grad=True)
    y = w**2
    w += 1  # error: GL002
    y.sum().backward()


def backward_in_between():
    x = torch.randn(3, requires_grad=True)
    y = x.sigmoid()
    y.sum().backward()
    y.mul_(2)
    y.sum().backward()


def detached_result():
    w = torch.randn(3, requires_grad=True)
    x = torch.randn(3)
    h = (w * x).detach()
    x += 1
    (h.sum() + w.sum()).backward()


def change_through_data():
    """`.data` has its own version counter: no error (a wrong gradient instead)."""
    x = torch.randn(3, requires_grad=True)
    y = x.sigmoid()
    y.data.mul_(2)
    y.sum().backward()


def advanced_index_copy():
    """`y[mask]` is a copy: changing it leaves y alone."""
    x = torch.randn(3, requires_grad=True)
    y = x.sigmoid()
    y[y > 0.5].mul_(2)
    y.sum().backward()


def matmul_output():
    w = torch.randn(3, 3, requires_grad=True)
    x = torch.randn(2, 3)
    out = x @ w
    out.add_(1)
    out.sum().backward()


def saved_tensor_hooks():
    x = torch.randn(3, requires_grad=True)
    with torch.autograd.graph.save_on_cpu():
        y = x.sigmoid()
    y.mul_(2)
    y.sum().backward()


def different_branches(flag):
    x = torch.randn(3, requires_grad=True)
    y = x.sigmoid()
    if flag:
        y.mul_(2)
    else:
        y.sum().backward()


def rebound_in_a_loop():
    x = torch.randn(3, requires_grad=True)
    y = x.sigmoid()
    for _ in range(3):
        y = y.clone()
        y.mul_(2)
    y.sum().backward()


def only_optimizer_step(model, opt):
    x = torch.randn(3, requires_grad=True)
    y = x.sigmoid()
    y.mul_(2)
    opt.step()
