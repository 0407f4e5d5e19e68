"""The errors of checkpoint loading (no torch here: the tools' error reporting names them without importing it)."""


class CheckpointMismatchError(RuntimeError):
    """The checkpoint's keys or shapes do not match the model."""


class UnsafeCheckpointError(RuntimeError):
    """A torch checkpoint holds Python objects whose unpickling could run code, and it is not trusted."""


class CheckpointContentError(ValueError):
    """A checkpoint file is readable but holds something other than a checkpoint (a list, a string, a module...)."""


class NonFiniteWeightsError(ValueError):
    """Weights about to be loaded into a model hold NaN or Inf values."""


class WeightDtypeError(ValueError):
    """A checkpoint holds integer or bool tensors where the model has floating-point weights."""
