# Data-parallel training (the default): MMEngine's Runner wraps the model in DDP when launched with
# tools/dist_train.sh. Sapiens2DistributedDataParallel is MMEngine's wrapper that also accepts CPU modules (gloo).
model_wrapper_cfg = dict(type='Sapiens2DistributedDataParallel', find_unused_parameters=False)
