"""Imported once by the forkserver, so that every fixture's child starts warm.

- torch's heavy lazy imports happen here, not per child: the first optimizer a child
  builds imports torch._dynamo (sympy and all, ~2 s without .pyc files);
- gc.freeze() moves the ~300k objects of that import out of the collector's reach, so each
  gc.collect() the measurement needs costs microseconds instead of ~0.17 s.

Nothing here touches a device: CUDA initialised in the server would be unusable in every
forked child.
"""

import gc

import torch
import torch._dynamo  # noqa: F401
import torch.func  # noqa: F401
import torch.optim  # noqa: F401

import runtime_check.child  # noqa: F401
import runtime_check.worker  # noqa: F401

gc.freeze()
