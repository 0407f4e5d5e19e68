# Sapiens2-0.4B (24 blocks of 1024-d tokens, the in_channels of a head on it) at 1024x768, pretrained.
_base_ = ['./sapiens2.py']

pretrained_checkpoint = 'pretrain-0.4b'
backbone = dict(arch='sapiens2_0.4b', init_cfg=dict(checkpoint=pretrained_checkpoint))
