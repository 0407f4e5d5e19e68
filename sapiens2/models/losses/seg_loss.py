"""Base of the segmentation losses: the weight and the log key, which must start with ``loss_``."""
import torch.nn as nn


class SegLoss(nn.Module):
    """Holds ``loss_weight`` and ``loss_name``, refusing a name the runner would not back-propagate."""

    def __init__(self, loss_weight: float, loss_name: str) -> None:
        super().__init__()
        if not loss_name.startswith('loss_'):
            raise ValueError(f"loss_name must start with 'loss_' so the runner back-propagates it, got {loss_name!r}")
        self.loss_weight = loss_weight
        self._loss_name = loss_name

    @property
    def loss_name(self) -> str:
        """Key of this loss in the log dict."""
        return self._loss_name
