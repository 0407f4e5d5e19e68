from .student_optim_constructor import StudentOptimWrapperConstructor
from .teacher_ema_hook import TeacherEMAHook

__all__ = ['StudentOptimWrapperConstructor', 'TeacherEMAHook']
