"""Configs: the packaged ones (:mod:`.packaged`), own layouts (:mod:`.layout_file`, :mod:`.custom_layout`), the
checks run when one is loaded (:mod:`.checks`, :mod:`.argument_checks`, :mod:`.layout_checks`, :mod:`.option_checks`,
sharing :mod:`.known_names`), config text read as data (:mod:`.literals`) and model names that stand for a config
(:mod:`.model_names`).

Nothing is imported here, so that ``sapiens2 configs`` lists the packaged configs without importing torch.
"""
