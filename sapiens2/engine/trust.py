"""What ``--trust-checkpoint`` means, in the words of the tools' help (no torch here: ``--help`` imports it)."""

TRUST_CHECKPOINT_HELP = ('load torch checkpoints that hold more than weights (weights_only=False, with a warning): '
                         'this runs any code the file contains, so only for files you made or trust')
