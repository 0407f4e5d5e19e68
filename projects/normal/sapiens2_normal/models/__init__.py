from .cosine_similarity_loss import NormalCosineSimilarityLoss
from .normal_head import NormalHead
from .normal_transformers import NORMAL_CONVERTER

__all__ = ['NormalCosineSimilarityLoss', 'NormalHead', 'NORMAL_CONVERTER']
