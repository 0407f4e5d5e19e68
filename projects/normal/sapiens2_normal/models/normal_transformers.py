"""The normal model converts to and from transformers' ``Sapiens2ForNormalEstimation`` (``sapiens2.interop``): the
dense trunk with its ``conv_normal`` predictor, whose output is transformers' ``normals``."""
from sapiens2.interop.transformers_config import HeadConverter, dense_trunk_describer, register_head_converter

NORMAL_CONVERTER = HeadConverter(task='normal', hf_class='Sapiens2ForNormalEstimation', head_attr='decode_head',
                                 describe=dense_trunk_describer('conv_normal'), hf_outputs=('normals', ))

register_head_converter('NormalHead', NORMAL_CONVERTER)
