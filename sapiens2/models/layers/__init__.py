from .attention import Attention
from .block import TransformerBlock
from .layer_scale import LayerScale
from .patch_embed import PatchEmbed
from .rmsnorm import RMSNorm
from .rope import RopePositionEmbedding, apply_rope, rope_dtype_from_name
from .swiglu import SwiGLUFFN
from .window_tokenizer import WindowTokenizer

__all__ = [
    'Attention', 'TransformerBlock', 'LayerScale', 'PatchEmbed', 'RMSNorm', 'RopePositionEmbedding', 'apply_rope',
    'rope_dtype_from_name', 'SwiGLUFFN', 'WindowTokenizer'
]
