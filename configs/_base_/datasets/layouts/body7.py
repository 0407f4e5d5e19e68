# An own body-part layout of 7 classes with left/right pairs (docs/custom_data.md). A horizontal flip (training
# RandomFlip, --tta) swaps the classes of each pair; names or ids. class_weight (optional, one per class) weights
# the cross-entropy.
dataset_info = dict(
    dataset_name='body7',
    classes=('background', 'head', 'torso', 'left_arm', 'right_arm', 'left_leg', 'right_leg'),
    palette=[[0, 0, 0], [250, 200, 120], [60, 120, 230], [40, 200, 90], [230, 60, 60], [130, 230, 230],
             [230, 120, 230]],
    flip_pairs=[('left_arm', 'right_arm'), ('left_leg', 'right_leg')],
    class_weight=[0.2, 1.0, 1.0, 2.0, 2.0, 1.5, 1.5],
)
