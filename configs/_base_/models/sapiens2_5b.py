# Sapiens2-5B (56 blocks of 2432-d tokens, the in_channels of a head on it) at 1024x768, pretrained.
_base_ = ['./sapiens2.py']

pretrained_checkpoint = 'pretrain-5b'
backbone = dict(arch='sapiens2_5b', init_cfg=dict(checkpoint=pretrained_checkpoint))
