"""Inference input and output: sources and frame names, live inputs, read-ahead, the result writer and its table of
output formats, the output guard and the ``--show`` windows. Import the modules themselves (no names here), so that
the console script's light paths load only what they use."""
