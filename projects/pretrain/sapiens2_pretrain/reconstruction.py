"""MAE reconstruction of images by a pretraining model, for pictures of what the masked student predicts."""
import torch
from torch import Tensor

from .models.mae_loss import patchify, unpatchify


@torch.no_grad()
def mae_reconstruction(model, images: Tensor, generator: torch.Generator | None = None) -> tuple[Tensor, Tensor]:
    """Masks ``images`` (B, 3, H, W, normalised as in training) with the model's mask generator, encodes the visible
    patches sparsely and decodes every patch.

    Returns ``mask`` (B, 3, H, W) bool (True on masked pixels) and the reconstruction (B, 3, H, W): visible patches
    are the input, masked patches the prediction. With ``norm_pix`` targets a predicted patch is mapped back to
    pixels with the mean and standard deviation of the true patch, as MAE pictures usually are (the prediction
    itself only fixes the patch's normalised content).
    """
    p = model.backbone.patch_size
    grid = (images.shape[2] // p, images.shape[3] // p)
    mask, keep = model.mask_generator(images.shape[0], grid, generator)
    mask, keep = mask.to(images.device), keep.to(images.device)
    tokens = model.backbone(images, keep_indices=keep)[0]
    pred = model.mae_decoder(tokens, keep, grid).float()
    target = patchify(images.float(), p)
    if model.mae_loss.norm_pix:
        mean = target.mean(dim=-1, keepdim=True)
        std = torch.sqrt(target.var(dim=-1, keepdim=True) + model.mae_loss.eps)
        pred = pred * std + mean
    recon = torch.where(mask[..., None], pred, target)
    pixel_mask = unpatchify(mask[..., None].expand_as(target).float(), p, grid) > 0.5
    return pixel_mask, unpatchify(recon, p, grid)
