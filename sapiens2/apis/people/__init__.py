"""People, not pixels: one record per person from all tasks at once (docs/inference.md, "People")."""
from .composer import PeopleComposer

__all__ = ['PeopleComposer']
