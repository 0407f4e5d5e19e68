# Fully sharded data parallel (for the 1b/5b configs): MMEngine's FlexibleRunner with Sapiens2FSDPStrategy.
# Every transformer block is its own FSDP unit and recomputes its activations in the backward pass; parameters,
# gradient reduction and buffers are bf16 on GPUs (fp32 master weights; ignored on CPU-only machines).
# The optimizer is built on the wrapped model (use_orig_params=True keeps the original parameter names, so
# Sapiens2LayerDecayOptimWrapperConstructor groups are the same as without FSDP). Checkpoints hold the full state dict.
# Strategies need MMEngine's FlexibleRunner; MMEngine rejects a key defined by two bases, so the config that
# inherits this file sets it itself:
#   _base_ = ['../_base_/<task runtime>.py', '../_base_/strategies/fsdp.py']
#   runner_type = 'FlexibleRunner'
_fsdp_units = ['TransformerBlock']
strategy = dict(
    type='Sapiens2FSDPStrategy',
    model_wrapper=dict(
        auto_wrap_policy=dict(type='wrap_modules_by_class_name', class_names=_fsdp_units),
        mixed_precision=dict(param_dtype='bfloat16', reduce_dtype='bfloat16', buffer_dtype='bfloat16'),
        sharding_strategy='FULL_SHARD',
        use_orig_params=True),
    activation_checkpointing=dict(check_fn=dict(type='checkpoint_modules_by_class_name', class_names=_fsdp_units)),
    state_dict_cfg='full')
