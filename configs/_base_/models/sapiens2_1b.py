# Sapiens2-1B (40 blocks of 1536-d tokens, the in_channels of a head on it) at 1024x768, pretrained.
_base_ = ['./sapiens2.py']

pretrained_checkpoint = 'pretrain-1b'
backbone = dict(arch='sapiens2_1b', init_cfg=dict(checkpoint=pretrained_checkpoint))
