from .cosine_similarity_loss import NormalCosineSimilarityLoss
from .normal_head import NormalHead

__all__ = ['NormalCosineSimilarityLoss', 'NormalHead']
