"""One file's facts, each computed at most once and only when a rule asks for it."""

from __future__ import annotations

import weakref
from collections.abc import Callable
from functools import cached_property

import libcst as cst

from gradlint.analysis.accumulation import GradAccumulation
from gradlint.analysis.accumulators import Accumulators
from gradlint.analysis.autograd_calls import AutogradCalls
from gradlint.analysis.bindings import ScopeBindings
from gradlint.analysis.caller_arguments import CallerArguments
from gradlint.analysis.carried_graph import CarriedGraph
from gradlint.analysis.dataflow import DataFlow
from gradlint.analysis.differentiation import DifferentiationReach
from gradlint.analysis.forwards import ForwardAnalysis
from gradlint.analysis.frameworks import FrameworkAnalysis
from gradlint.analysis.grad_clears import GradClearing
from gradlint.analysis.grad_mode import GradMode, GradModeAnalysis
from gradlint.analysis.grad_sharing import GradSharing
from gradlint.analysis.index import FileIndex
from gradlint.analysis.loops import LoopAnalysis
from gradlint.analysis.method_sequence import MethodSequences
from gradlint.analysis.mode_dependence import ModeDependence
from gradlint.analysis.mode_flow import ModeFlow
from gradlint.analysis.module_state import ModuleState
from gradlint.analysis.optimizers import OptimizerHoldings
from gradlint.analysis.parameter_roles import ParameterRoles
from gradlint.analysis.path_conditions import FlagPaths, PathConditions
from gradlint.analysis.project import ProjectIndex
from gradlint.analysis.registration import ParameterRegistration
from gradlint.analysis.result_uses import ResultUses
from gradlint.analysis.saved import ParametersSteppedAfterSaving, SavedForBackward
from gradlint.analysis.summaries import FunctionSummaries
from gradlint.analysis.targets import LossTargets
from gradlint.analysis.tensors import TensorFacts
from gradlint.analysis.train_mode import TrainModeAnalysis
from gradlint.analysis.trained_forward import TrainedForwards
from gradlint.analysis.values import ValueAnalysis


class FileFacts:
    def __init__(
        self,
        module: cst.Module,
        index: FileIndex | None = None,
        project: ProjectIndex | None = None,
    ) -> None:
        self.module = module
        self.project = project
        if index is not None:
            self.index = index

    @cached_property
    def index(self) -> FileIndex:
        return FileIndex(self.module, self.project)

    @cached_property
    def bindings(self) -> ScopeBindings:
        return ScopeBindings(self.index)

    @cached_property
    def flow(self) -> DataFlow:
        return DataFlow(self.index, self.grad_mode)

    @cached_property
    def grad_mode(self) -> GradModeAnalysis:
        # path_conditions is built after grad_mode (it reads it), so grad_mode asks it
        # late, through a weak reference: a closure over self would make these facts and
        # the file's whole tree a reference cycle, freed only by the cyclic collector
        # (engine._collector_paused counts on reference counting freeing them)
        facts = weakref.ref(self)

        def lambda_paths(lam: cst.Lambda) -> list[tuple[cst.Call, ...]]:
            alive = facts()
            if alive is None:  # the facts were let go while one of their analyses is read
                raise RuntimeError("a file's grad-mode facts were read after its facts")
            return alive.path_conditions.lambda_paths(lam)

        return GradModeAnalysis(self.index, self.project, self.bindings, lambda_paths=lambda_paths)

    @cached_property
    def autograd(self) -> AutogradCalls:
        return AutogradCalls(self.index, self.flow)

    @cached_property
    def loops(self) -> LoopAnalysis:
        # what the flags of a call let run in its helper: through a weak reference, as
        # grad_mode's lambda paths are (no reference cycle through these facts)
        facts = weakref.ref(self)

        def flag_runs(helper: cst.FunctionDef) -> Callable[[cst.CSTNode, cst.Call], bool] | None:
            alive = facts()
            if alive is None:
                raise RuntimeError("a file's loop facts were read after its facts")
            conditions = alive.path_conditions
            return conditions.runs_at if conditions.tests_a_flag(helper) else None

        return LoopAnalysis(
            self.index,
            self.flow,
            self.autograd,
            self.summaries,
            bindings=self.bindings,
            flag_runs=flag_runs,
        )

    @cached_property
    def carried_graph(self) -> CarriedGraph:
        return CarriedGraph(
            self.index,
            self.flow,
            self.loops,
            self.values,
            self.forwards,
            self.grad_mode,
            self.summaries,
            self.frameworks,
        )

    @cached_property
    def tensors(self) -> TensorFacts:
        return TensorFacts(
            self.index,
            bindings=self.bindings,
            roles=self.parameter_roles,
            lineage=self.grad_mode.callees.lineage,
            subclasses=self.grad_mode.callees.subclasses,
        )

    @cached_property
    def parameter_roles(self) -> ParameterRoles:
        return ParameterRoles(
            self.index, self.bindings, self.grad_mode.callees, self.caller_arguments
        )

    @cached_property
    def registration(self) -> ParameterRegistration:
        return ParameterRegistration(self.index, self.tensors)

    @cached_property
    def values(self) -> ValueAnalysis:
        return ValueAnalysis(
            self.index,
            self.tensors,
            self.grad_mode,
            self.summaries,
            bindings=self.bindings,
            autograd=self.autograd,
        )

    @cached_property
    def saved(self) -> SavedForBackward:
        return SavedForBackward(
            self.index, self.values, self.tensors, self.grad_mode, self.forwards
        )

    @cached_property
    def optimizers(self) -> OptimizerHoldings:
        return OptimizerHoldings(
            self.index, self.autograd, self.values, self.tensors, self.summaries
        )

    @cached_property
    def stepped_after_saving(self) -> ParametersSteppedAfterSaving:
        return ParametersSteppedAfterSaving(
            self.index,
            self.autograd,
            self.loops,
            self.values,
            self.tensors,
            self.grad_mode,
            self.forwards,
            self.differentiation,
            self.optimizers,
            self.method_sequences,
        )

    @cached_property
    def module_state(self) -> ModuleState:
        return ModuleState(
            self.index,
            self.grad_mode.callees,
            self.tensors,
            self.grad_mode,
            self.carried_graph.detaches,
            self.project,
            self.values,
            self.flow,
        )

    @cached_property
    def method_sequences(self) -> MethodSequences:
        return MethodSequences(self.index, self.bindings, self.summaries, self.differentiation)

    @cached_property
    def train_mode(self) -> TrainModeAnalysis:
        return TrainModeAnalysis(self.index, self.summaries, self.bindings)

    @cached_property
    def caller_arguments(self) -> CallerArguments:
        return CallerArguments(self.index, self.grad_mode.callees, self.project)

    @cached_property
    def path_conditions(self) -> PathConditions:
        return PathConditions(
            self.index, self.bindings, self.grad_mode.callees, self.caller_arguments
        )

    @cached_property
    def flag_paths(self) -> FlagPaths:
        return FlagPaths(
            self.path_conditions,
            self.grad_mode,
            self.train_mode,
            self.differentiation,
            self.summaries,
        )

    @cached_property
    def mode_flow(self) -> ModeFlow:
        return ModeFlow(
            self.index,
            self.summaries,
            self.differentiation,
            self.grad_mode,
            self.optimizers,
            self.forwards,
        )

    @cached_property
    def mode_dependence(self) -> ModeDependence:
        return ModeDependence(
            self.index, self.tensors, self.values, self.summaries, self.grad_mode, self.project
        )

    @cached_property
    def frameworks(self) -> FrameworkAnalysis:
        return FrameworkAnalysis(self.index)

    @cached_property
    def forwards(self) -> ForwardAnalysis:
        return ForwardAnalysis(
            self.index,
            self.flow,
            self.autograd,
            self.loops,
            self.values,
            self.tensors,
            self.grad_mode,
            self.summaries,
            self.differentiation,
            self.result_uses,
            self.caller_arguments,
        )

    @cached_property
    def differentiation(self) -> DifferentiationReach:
        return DifferentiationReach(self.index, self.flow, self.loops, self.values)

    @cached_property
    def trained_forwards(self) -> TrainedForwards:
        return TrainedForwards(
            self.index, self.values, self.tensors, self.grad_mode, self.differentiation
        )

    @cached_property
    def loss_targets(self) -> LossTargets:
        return LossTargets(
            self.index,
            self.flow,
            self.values,
            self.tensors,
            self.forwards,
            self.grad_mode,
            self.summaries,
            self.differentiation,
        )

    @cached_property
    def result_uses(self) -> ResultUses:
        return ResultUses(self.index, self.values, self.tensors, self.summaries)

    @cached_property
    def grad_clears(self) -> GradClearing:
        return GradClearing(self.index)

    @cached_property
    def grad_sharing(self) -> GradSharing:
        return GradSharing(
            self.index,
            self.autograd,
            self.values,
            self.grad_mode,
            self.summaries,
            self.optimizers,
            self.loss_targets,
            self.differentiation,
        )

    @cached_property
    def accumulation(self) -> GradAccumulation:
        return GradAccumulation(self.index, self.autograd, self.grad_clears, self.summaries)

    @cached_property
    def accumulators(self) -> Accumulators:
        return Accumulators(self.index, self.summaries, self.values)

    @cached_property
    def summaries(self) -> FunctionSummaries:
        return FunctionSummaries(
            self.index,
            self.autograd,
            self.grad_mode.callees,
            self.project,
            self.grad_clears,
            bindings=self.bindings,
            caller_arguments=self.caller_arguments,
        )

    # shortcuts used by most rules
    def mode_at(self, node: cst.CSTNode) -> GradMode:
        return self.grad_mode.mode_at(node)

    def is_recording(self, node: cst.CSTNode) -> bool:
        return self.mode_at(node) is GradMode.RECORDING

    def qualified_name(self, node: cst.CSTNode | None) -> str | None:
        return self.index.qualified_name(node)
