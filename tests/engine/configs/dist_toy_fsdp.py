# dist_toy.py trained with FSDP (FlexibleRunner + Sapiens2FSDPStrategy); each DistToyBlock is an FSDP unit.
_base_ = ['./dist_toy.py', '../../../configs/_base_/strategies/fsdp.py']
strategy = dict(
    model_wrapper=dict(auto_wrap_policy=dict(class_names=['DistToyBlock'])),
    activation_checkpointing=dict(check_fn=dict(class_names=['DistToyBlock'])))
runner_type = 'FlexibleRunner'
