# An own body-part layout of 3 classes (docs/custom_data.md): the metainfo file of
# configs/_base_/datasets/custom_parts.py. Label maps hold 0, 1, 2 (255 = ignore).
dataset_info = dict(
    dataset_name='person_hair',
    classes=('background', 'person', 'hair'),
    palette=[[0, 0, 0], [255, 140, 60], [120, 40, 200]],  # RGB, one per class: the colours of every picture
)
