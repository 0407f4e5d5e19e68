# Sapiens2-0.8B (32 blocks of 1280-d tokens, the in_channels of a head on it) at 1024x768, pretrained.
_base_ = ['./sapiens2.py']

pretrained_checkpoint = 'pretrain-0.8b'
backbone = dict(arch='sapiens2_0.8b', init_cfg=dict(checkpoint=pretrained_checkpoint))
