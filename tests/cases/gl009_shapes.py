"""GL009: shapes that must be flagged (markers) and the look-alikes that must stay silent,
each silent one a value the analysis must not claim is free of history."""

import torch
import torch.nn.functional as F
from torch import nn
from torch.autograd import grad


class Wrapper(nn.Module):
    """Hands back its input: under no_grad the result is the input itself."""

    def __init__(self):
        super().__init__()
        self.scale = nn.Linear(4, 4)

    def forward(self, x):
        return x


class Adapting(nn.Module):
    """Switches grad back on inside its forward (test-time adaptation)."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        with torch.enable_grad():
            return self.fc(x)


class Plain(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 1)

    def forward(self, x):
        return self.fc(x).relu()


def local_model_under_no_grad():
    model = Plain()
    x = torch.randn(8, 4)
    with torch.no_grad():
        y = model(x)
    y.mean().backward()  # error: GL009


def wrapper_returns_its_input():
    wrapper = Wrapper()
    x = torch.randn(8, 4, requires_grad=True)
    with torch.no_grad():
        y = wrapper(x)
    y.sum().backward()


def forward_enables_grad():
    model = Adapting()
    x = torch.randn(8, 4)
    with torch.no_grad():
        y = model(x)
    y.sum().backward()


def appended_losses_stacked():
    # `losses = []` is filled later: torch.stack of it is not a fresh tensor
    model = nn.Linear(4, 1)
    losses = []
    for _ in range(3):
        losses.append(model(torch.randn(2, 4)).sum())
    torch.stack(losses).sum().backward()


def as_tensor_keeps_the_graph():
    model = nn.Linear(4, 1)
    out = model(torch.randn(2, 4)).sum()
    loss = torch.as_tensor(out)
    loss.backward()


def as_tensor_of_numbers():
    loss = torch.as_tensor([1.0, 2.0]).sum()
    loss.backward()  # error: GL009


def gradient_penalty_through_dot_grad(model):
    x = torch.randn(4, 4, requires_grad=True)
    model(x).sum().backward(create_graph=True)
    penalty = (x.grad**2).sum()
    penalty.backward()


def first_derivative_differentiated_again():
    # GL005's finding (the derivative), not reported twice
    x = torch.randn(4, requires_grad=True)
    (g,) = grad((x**3).sum(), x)  # error: GL005
    g.sum().backward()


def functional_weight_may_require_grad(weight):
    logits = torch.randn(4, 3)
    labels = torch.randint(0, 3, (4,))
    F.cross_entropy(logits, labels, weight=weight).backward()


def functional_of_plain_tensors():
    logits = torch.randn(4, 3)
    labels = torch.randint(0, 3, (4,))
    F.cross_entropy(logits, labels).backward()  # error: GL009


def detached_then_requires_grad():
    model = nn.Linear(4, 1)
    y = model(torch.randn(2, 4)).detach()  # error: GL012
    y.requires_grad_(True)
    (y * 3).sum().backward()


def leaf_made_from_no_grad_value():
    model = nn.Linear(4, 1)
    with torch.no_grad():
        y = model(torch.randn(2, 4))
    y = y.requires_grad_()
    y.sum().backward()


def grad_through_model_in_enable_grad():
    model = nn.Linear(4, 1)
    with torch.no_grad():
        x = torch.randn(2, 4)
        with torch.enable_grad():
            out = model(x)
    out.sum().backward()


def backward_with_explicit_gradient():
    model = nn.Linear(4, 2)
    with torch.no_grad():
        out = model(torch.randn(3, 4))
    out.backward(torch.ones_like(out))  # error: GL009


def autograd_grad_of_detached(x):
    model = nn.Linear(4, 1)
    energy = model(x).sum().detach()
    return torch.autograd.grad(energy, model.weight)  # error: GL009


def loss_of_an_unknown_helper(helper, x):
    with torch.no_grad():
        y = helper(x)
    y.sum().backward()


def accuracy_term_plus_real_loss():
    model = nn.Linear(4, 3)
    x = torch.randn(8, 4)
    labels = torch.randint(0, 3, (8,))
    logits = model(x)
    accuracy = (logits.argmax(1) == labels).float().mean()
    loss = F.cross_entropy(logits, labels) + (1 - accuracy)
    loss.backward()


def inference_teacher_mul():
    teacher = nn.Linear(4, 4)
    student = nn.Linear(4, 4)
    x = torch.randn(2, 4)
    with torch.inference_mode():
        weights = teacher(x).softmax(-1)
    out = student(x) * weights  # error: GL009
    out.sum().backward()


def inference_input_to_trainable_layer():
    frozen = nn.Linear(4, 4)
    head = nn.Linear(4, 2)
    with torch.inference_mode():
        features = frozen(torch.randn(2, 4))
    head(features).sum().backward()  # error: GL009


def inference_input_to_a_frozen_layer():
    # the layer is frozen: nothing requires grad, nothing is saved
    frozen = nn.Linear(4, 4)
    head = nn.Linear(4, 2)
    head.requires_grad_(False)
    with torch.inference_mode():
        features = frozen(torch.randn(2, 4))
    return head(features)


def inference_target_of_a_loss_module():
    teacher = nn.Linear(4, 4)
    student = nn.Linear(4, 4)
    criterion = nn.MSELoss()
    x = torch.randn(2, 4)
    with torch.inference_mode():
        target = teacher(x)
    loss = criterion(student(x), target)  # error: GL009
    loss.backward()


def inference_target_of_cross_entropy():
    # probabilities as the target of cross_entropy are not saved (measured)
    teacher = nn.Linear(4, 4)
    student = nn.Linear(4, 4)
    x = torch.randn(2, 4)
    with torch.inference_mode():
        target = teacher(x).softmax(-1)
    F.cross_entropy(student(x), target).backward()


def inference_target_rebuilt_outside():
    teacher = nn.Linear(4, 4)
    student = nn.Linear(4, 4)
    x = torch.randn(2, 4)
    with torch.inference_mode():
        target = teacher(x)
    target = target * 1.0  # a normal tensor: computed outside inference mode
    F.mse_loss(student(x), target).backward()


def inference_view_stays_inference():
    teacher = nn.Linear(4, 4)
    student = nn.Linear(4, 4)
    x = torch.randn(2, 4)
    with torch.inference_mode():
        target = teacher(x)
    flat = target.detach().view(-1)
    F.mse_loss(student(x).view(-1), flat).backward()  # error: GL009


def student_of_unknown_class(student):
    teacher = nn.Linear(4, 4)
    x = torch.randn(2, 4)
    with torch.inference_mode():
        target = teacher(x)
    F.mse_loss(student(x), target).backward()


@torch.inference_mode()
def everything_in_inference_mode():
    teacher = nn.Linear(4, 4)
    student = nn.Linear(4, 4)
    x = torch.randn(2, 4)
    target = teacher(x)
    return F.mse_loss(student(x), target)


class ReturnsItsParameter(nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = nn.Parameter(torch.ones(4))

    def forward(self):
        return self.scale


def parameter_returned_under_no_grad():
    model = ReturnsItsParameter()
    with torch.no_grad():
        scale = model()
    scale.sum().backward()


def torch_objects_are_not_tensors(mu, sigma):
    # torch classes build objects (an RRef, a distribution), not tensors of their inputs
    torch.distributed.rpc.RRef(torch.rand(10)).backward()
    torch.distributions.Normal(torch.zeros(3), torch.ones(3)).backward()


def torch_tensor_class_of_plain_data():
    torch.FloatTensor([1.0, 2.0]).sum().backward()  # error: GL009


def inference_input_to_a_layer_frozen_in_a_loop():
    head = nn.Linear(4, 2)
    for p in head.parameters():
        p.requires_grad = False
    with torch.inference_mode():
        features = torch.randn(2, 4) * 2
    return head(features)


def actor_critic_loss(memories, nn):
    # the parameter `nn` is the model handed in, not the torch.nn the file imports
    values = nn(torch.tensor([m.obs for m in memories]))
    return F.mse_loss(values, torch.zeros_like(values))


def update_with_a_model_parameter_named_like_a_module(memories, optimizer):
    agent = Plain()
    loss = actor_critic_loss(memories, agent)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()


def input_made_to_require_grad_by_a_statement():
    # d2l's sigmoid-gradient plot: `x.requires_grad_(True)` alone on its line makes x a
    # leaf that requires grad, so what is computed from it has history
    x = torch.arange(-8.0, 8.0, 0.1)
    x.requires_grad_(True)
    y = torch.sigmoid(x)
    y.backward(torch.ones_like(x))
    return x.grad

