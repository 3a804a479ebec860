"""Which deep-learning framework a piece of code is written for.

Multi-backend libraries (DeepXDE, Keras 3, einops-style code) keep a PaddlePaddle,
TensorFlow or JAX branch next to the PyTorch one, with the same `net.eval()` and
`net(x)` spelling. gradlint's rules are about torch's autograd; on another framework's
code they would only cry wolf.
"""

from __future__ import annotations

import libcst as cst

from gradlint.analysis.index import FileIndex

FOREIGN_FRAMEWORKS = frozenset(
    {"paddle", "tensorflow", "tf", "jax", "flax", "mindspore", "oneflow", "mxnet", "keras"}
)


class FrameworkAnalysis:
    def __init__(self, index: FileIndex) -> None:
        self.index = index
        self._region_cache: dict[cst.CSTNode, str | None] = {}
        self._names_torch: bool | None = None

    def _roots(self, name: cst.CSTNode) -> str | None:
        qualified = self.index.qualified_name(name)
        if qualified is None:
            return None
        return qualified.split(".")[0]

    def _region_framework(self, region: cst.CSTNode) -> str | None:
        """ "torch", a foreign framework's name, or None when the region names neither
        (a region naming both is torch's)."""
        cached = self._region_cache.get(region, "")
        if cached != "":
            return cached
        seen: set[str] = set()
        parents = self.index.parent.by_id
        for node in self.index.walk(region):
            # exact types (neither has a subclass): isinstance on LibCST's ABCs is slow
            # when it fails, and this tests every node of the region
            if type(node) is cst.Name or type(node) is cst.Attribute:
                parent = parents.get(id(node))
                if type(parent) is cst.Attribute and parent.value is node:
                    continue  # the whole chain is looked at once
                root = self._roots(node)
                if root == "torch" or root in FOREIGN_FRAMEWORKS:
                    seen.add(root)
        if "torch" in seen:
            result: str | None = "torch"
        elif seen:
            result = sorted(seen)[0]
        else:
            result = None
        self._region_cache[region] = result
        return result

    def names_torch(self) -> bool:
        """Does the file import torch or a library built on it (`torchvision`,
        `torch_geometric`), or read `import *` names that may be one, or name `torch`
        at all? A file that does none of these builds autograd graphs only through the
        objects it is handed: nothing in it is evidence that an unseen callee computes
        with trainable weights (a numpy simulation's `vec_fn.postprocess(theta, psi)`)."""
        if self._names_torch is None:
            index = self.index
            self._names_torch = (
                bool(index.star_imports)
                or any(q.startswith("torch") for q in index.aliases.values())
                or any(type(n) is cst.Name and n.value == "torch" for n in index.nodes)
            )
        return self._names_torch

    def imports_foreign(self) -> bool:
        """Does the file import another framework (`import jax`, `from flax import
        ...`), whatever else it imports? A Flax training script that loads its data with
        torch's DataLoader names torch too, but its train steps are JAX's."""
        return any(q.split(".")[0] in FOREIGN_FRAMEWORKS for q in self.index.aliases.values())

    def is_foreign(self, node: cst.CSTNode) -> bool:
        """Is node in code written for another framework: the innermost `if` branch or
        function around it that names a framework names only a foreign one?"""
        child = node
        for anc in self.index.ancestors(node):
            region = None
            if type(anc) is cst.If and child in (anc.body, anc.orelse):
                region = child
            elif type(anc) is cst.Else:
                region = anc.body
            elif type(anc) in (cst.FunctionDef, cst.Module):
                region = anc.body if type(anc) is cst.FunctionDef else anc
            if region is not None:
                framework = self._region_framework(region)
                if framework is not None:
                    return framework != "torch"
            child = anc
        return False
