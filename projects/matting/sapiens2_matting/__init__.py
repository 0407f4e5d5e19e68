"""Human alpha matting with Sapiens2, loaded by ``custom_imports``."""
from .datasets import *  # noqa: F401,F403
from .engine import *  # noqa: F401,F403
from .evaluation import *  # noqa: F401,F403
from .matting_inference_task import MattingInferenceTask  # noqa: F401
from .models import *  # noqa: F401,F403
