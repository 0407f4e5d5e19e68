# Sapiens2-5B pretraining at 1024x768 with the paper's recipe (see _base_/pretrain_1024x768.py).
_base_ = ['./_base_/pretrain_1024x768.py']

model = dict(
    backbone=dict(arch='sapiens2_5b', with_cp=True),
    mae_decoder=dict(embed_dims=768, num_layers=8, num_heads=16))
train_dataloader = dict(batch_size=2)
