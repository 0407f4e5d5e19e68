# Settings shared by the nano configs (tests on SynthHumans at 128x96 on a CPU): fp32 AdamW at lr 3e-3 with layer
# decay 0.9, and data loading in the training process. List it in `_base_` and use its variables through `_base_`:
#   optim_wrapper = dict(_delete_=True, **_base_.nano_optimiser)
# (their names are far from the Runner's keys, which the config check would take for misspellings).
nano_optimiser = dict(type='OptimWrapper', constructor='Sapiens2LayerDecayOptimWrapperConstructor',
                      optimizer=dict(type='AdamW', lr=3e-3, betas=(0.9, 0.999), weight_decay=0.01),
                      paramwise_cfg=dict(layer_decay_rate=0.9), clip_grad=dict(max_norm=2.0, norm_type=2))
nano_train_loader = dict(num_workers=0, persistent_workers=False, pin_memory=False)
nano_val_loader = dict(num_workers=0, persistent_workers=False)
