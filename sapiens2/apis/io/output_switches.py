"""The switches of a run's outputs: each turns off the output formats that name it
(:data:`~sapiens2.apis.io.output_formats.OUTPUT_FORMATS`). ``sapiens2-infer`` builds its flags from this table, so
it stays light for ``--help``."""
from dataclasses import dataclass
from typing import Tuple


@dataclass(frozen=True)
class OutputSwitch:
    """A keyword of ``Sapiens2Inferencer.__call__`` and ``ResultWriter`` (on by default) and the flag that turns it
    off."""
    keyword: str
    flag: str
    help: str
    #: What its files are, in words (``'pictures'``).
    contents: str

    @property
    def dest(self) -> str:
        """The flag's attribute in the parsed arguments (``no_vis``)."""
        return self.flag.lstrip('-').replace('-', '_')


#: In the order of ``sapiens2-infer --help``.
OUTPUT_SWITCHES: Tuple[OutputSwitch, ...] = (
    OutputSwitch('save_vis', '--no-vis', 'do not write pictures', 'pictures'),
    OutputSwitch('save_pred', '--no-pred', 'do not write raw results', 'predictions'),
)
