# Runtime shared by every sapiens2 config. Task bases add `default_scope`, the visualizer and data settings.
# A config inheriting this via `sapiens2::...` needs `import sapiens2` before mmpose/mmseg read it (docs/inference.md).
custom_imports = dict(imports=['sapiens2'], allow_failed_imports=False)
runner_type = 'Sapiens2Runner'

default_hooks = dict(
    timer=dict(type='IterTimerHook'),
    logger=dict(type='LoggerHook', interval=10),
    param_scheduler=dict(type='ParamSchedulerHook'),
    checkpoint=dict(type='CheckpointHook', by_epoch=False, interval=1000, max_keep_ckpts=3),
    sampler_seed=dict(type='DistSamplerSeedHook'),
    non_finite=dict(type='NonFiniteLossHook', action='stop'),
    # The datasets against their layouts before the first iteration (keypoint counts, label ids, image/mask pairs).
    data_check=dict(type='DataCheckHook'),
)
# CPU-safe DDP (MMEngine's wrapper always passes device_ids, which torch rejects for CPU modules).
model_wrapper_cfg = dict(type='Sapiens2DistributedDataParallel', find_unused_parameters=False)
env_cfg = dict(
    cudnn_benchmark=False,
    mp_cfg=dict(mp_start_method='fork', opencv_num_threads=0),
    dist_cfg=dict(backend='nccl'),
)
log_processor = dict(type='LogProcessor', window_size=10, by_epoch=False)
vis_backends = [dict(type='LocalVisBackend')]
log_level = 'INFO'
load_from = None
# Checkpoints given by `load_from` must match the model exactly; set False to fine-tune from a partial match.
load_strict = True
# Also read from a config (docs/checkpoints.md): `trust_checkpoint` (torch files that would run code) and
# `allow_non_finite_weights` (NaN/Inf weights); both default to False.
resume = False
randomness = dict(seed=0)
