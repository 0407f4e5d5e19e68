# Sapiens2-0.4B human alpha matting at 1024x768: the normal-estimation recipe of this size with the matting losses
# (see _base_/matting_1024x768.py). Data: directory datasets (rgb/, alpha/ and optional foreground/, background/,
# trimap/) under data/matting/.
_base_ = ['./_base_/matting_1024x768.py', 'sapiens2::_base_/models/sapiens2_0.4b.py',
          'sapiens2::_base_/schedules/linear_20k.py']

model = dict(backbone=_base_.backbone)
