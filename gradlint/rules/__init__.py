"""The rule registry, in code order."""

from __future__ import annotations

from gradlint.rules.gl001_undetached_loop_state import UndetachedLoopState
from gradlint.rules.gl002_leaf_inplace_outside_no_grad import LeafInplaceOutsideNoGrad
from gradlint.rules.gl003_param_rebind_update import ParamRebindUpdate
from gradlint.rules.gl004_eval_without_no_grad import EvalWithoutNoGrad
from gradlint.rules.gl005_detached_higher_order_grad import DetachedHigherOrderGrad
from gradlint.rules.gl006_loss_history_accumulation import LossHistoryAccumulation
from gradlint.rules.gl007_missing_zero_grad import MissingZeroGrad
from gradlint.rules.gl008_grad_mode_not_entered import GradModeNotEntered
from gradlint.rules.gl009_backward_of_no_grad_result import BackwardOfNoGradResult
from gradlint.rules.gl010_checkpoint_without_grad_inputs import CheckpointWithoutGradInputs
from gradlint.rules.gl011_inplace_on_saved_tensor import InplaceOnSavedTensor
from gradlint.rules.gl012_inference_outside_no_grad import InferenceOutsideNoGrad
from gradlint.rules.gl013_bootstrap_target_not_detached import BootstrapTargetNotDetached
from gradlint.rules.gl014_zero_grad_inside_accumulation import ZeroGradInsideAccumulation
from gradlint.rules.gl015_graph_grows_without_backward import GraphGrowsWithoutBackward
from gradlint.rules.gl016_train_mode_not_restored import TrainModeNotRestored
from gradlint.rules.gl017_unregistered_parameters import UnregisteredParameters
from gradlint.rules.gl100_unused_noqa import UnusedNoqa

ALL_RULES: list = [
    UndetachedLoopState,
    LeafInplaceOutsideNoGrad,
    ParamRebindUpdate,
    EvalWithoutNoGrad,
    DetachedHigherOrderGrad,
    LossHistoryAccumulation,
    MissingZeroGrad,
    GradModeNotEntered,
    BackwardOfNoGradResult,
    CheckpointWithoutGradInputs,
    InplaceOnSavedTensor,
    InferenceOutsideNoGrad,
    BootstrapTargetNotDetached,
    ZeroGradInsideAccumulation,
    GraphGrowsWithoutBackward,
    TrainModeNotRestored,
    UnregisteredParameters,
]

# Rules about the suppressions themselves, not autograd: the engine runs them after the
# autograd rules (they judge those rules' findings), they have no fixtures to run under
# torch, and they are selected only by their full code.
META_RULES: list = [UnusedNoqa]
