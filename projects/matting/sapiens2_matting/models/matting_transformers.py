"""The matting model converts to and from transformers' ``Sapiens2ForImageMatting`` (``sapiens2.interop``).

transformers returns the sigmoid of our tensor-mode logits (``foregrounds``, ``alphas``), so no output maps one to one
(``hf_outputs`` is empty); the parity test compares the sigmoid.
"""
from sapiens2.interop.transformers_config import HeadConverter, dense_trunk_describer, register_head_converter

MATTING_CONVERTER = HeadConverter(task='matting', hf_class='Sapiens2ForImageMatting', head_attr='decode_head',
                                  describe=dense_trunk_describer('conv_matting'), hf_outputs=())

register_head_converter('MattingHead', MATTING_CONVERTER)
