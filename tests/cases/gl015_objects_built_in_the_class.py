"""GL015's recurrent shape out of sight (`y, h = f(x, h)` on something the loop cannot
see into) is no evidence of a graph when `f` is a method of an object the class builds
itself from a class out of sight: a sparse adjacency's neighbour sampler
(EdisonLeeeee/GraphGallery's `self.adj_t.sample_adj(n_id, size)`, with `self.adj_t =
SparseTensor(...).t()`), as for a local object (`scheduler.step(...)`). A model the
class holds and calls is still followed."""

import torch
from torch import nn
from torch_sparse import SparseTensor


class NeighborSampler:
    def __init__(self, edge_index, num_nodes):
        self.adj_t = SparseTensor(row=edge_index[0], col=edge_index[1]).t()

    def sample(self, batch, sizes):
        adjs = []
        n_id = torch.as_tensor(batch)
        for size in sizes:
            adj_t, n_id = self.adj_t.sample_adj(n_id, size, replace=False)
            adjs.append(adj_t)
        return n_id, adjs


class Decoder:
    def __init__(self, cell):
        self.cell = cell
        self.head = nn.Linear(8, 8)

    def generate(self, x, h, steps):
        outputs = []
        for _ in range(steps):
            y, h = self.cell(x, h)  # error: GL015
            outputs.append(self.head(y).argmax(-1).tolist())  # error: GL012
        return outputs
