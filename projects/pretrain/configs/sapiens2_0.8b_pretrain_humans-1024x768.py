# Sapiens2-0.8B pretraining at 1024x768 with the paper's recipe (see _base_/pretrain_1024x768.py).
_base_ = ['./_base_/pretrain_1024x768.py']

model = dict(
    backbone=dict(arch='sapiens2_0.8b'),
    mae_decoder=dict(embed_dims=512, num_layers=8, num_heads=16))
train_dataloader = dict(batch_size=6)
