# The Sapiens2 backbone as the task configs take it: 16-pixel patches at 1024x768 (H x W), the final norm, a feature
# map out, weights from a pretraining checkpoint. The size files (sapiens2_<size>.py) set the arch and the checkpoint;
# a config lists one next to its task base and takes it into its model: model = dict(backbone=_base_.backbone).
backbone = dict(type='Sapiens2', img_size=(1024, 768), patch_size=16, out_type='featmap', final_norm=True,
                init_cfg=dict(type='Pretrained'))
