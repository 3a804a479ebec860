"""A value handed to a helper of this file that differentiates the parameter it fills
has its graph used, even when the helper's result is cut at once (census, dev half:
GMvandeVen/continual-learning fromp_optimizer.py). FROMP puts the model in eval mode,
runs it on memorable points and differentiates each class's summed output through
`cac_grad(loss, lc)`, itself or through `cac_jacobian(preds, lc)`, which calls
`cac_grad` per class. None may be flagged, except where marked."""
import torch
import torch.nn as nn


class Fromp:
    def __init__(self, model: nn.Module, params):
        self.model = model
        self.params = list(params)

    def cac_grad(self, loss, lc, retain_graph=None):
        grads = torch.autograd.grad(loss, lc, retain_graph=retain_graph)
        return torch.cat([g.flatten() for g in grads]).detach()

    def cac_jacobian(self, output, lc):
        rows = []
        for i in range(output.shape[1]):
            loss = output[:, i].sum()
            rows.append(self.cac_grad(loss, lc, retain_graph=True))
        return torch.stack(rows)

    def summary_of(self, loss):
        return float(loss)  # reads the value, differentiates nothing

    def init_context(self, points):
        self.model.eval()
        logits = self.model.forward(points)
        preds = torch.softmax(logits, dim=-1)
        for class_id in range(preds.shape[-1]):
            loss = preds[:, class_id].sum()
            self.cac_grad(loss, self.params, retain_graph=True)

    def update_fisher(self, loader):
        self.model.eval()
        for data in loader:
            preds = self.model.forward(data)
            jac = self.cac_jacobian(preds, self.params).detach()
            print(jac.shape)

    def log_only(self, points):
        # the helper it is handed to reads a number: the graph is thrown away
        self.model.eval()
        logits = self.model(points)  # error: GL004
        print(self.summary_of(logits.sum()))
