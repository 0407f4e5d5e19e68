# The official 1b pose head widths and optimiser changes (layer decay 0.9, clip 4), shared by the 1b configs
# (goliath, and COCO / COCO-WholeBody on their 0.4b recipe). List it in `_base_` and use its variables through
# `_base_`: model = dict(head=_base_.pose_1b_head), optim_wrapper = _base_.pose_1b_optim.
pose_1b_head = dict(in_channels=1536, deconv_out_channels=(1536, 1024), conv_out_channels=(768, 512, 256))
pose_1b_optim = dict(paramwise_cfg=dict(layer_decay_rate=0.9), clip_grad=dict(max_norm=4.0))
