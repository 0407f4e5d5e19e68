"""Repository scripts (tools/, benchmarks/) loaded as modules, for the tests of their functions, or run in a fresh
interpreter."""
import importlib.util
from pathlib import Path
from types import ModuleType
from typing import Optional

REPO = Path(__file__).resolve().parents[1]

# A program for ``python -c RUN_TOOLS CASES HEAVY...``: runs each tool of CASES (JSON {name: [tool, argv]}) in this
# one interpreter and prints JSON {name: {code, output, heavy}}, heavy: the modules of HEAVY imported so far.
RUN_TOOLS = '''
import contextlib, io, json, runpy, sys
cases, heavy, report = json.loads(sys.argv[1]), sys.argv[2:], {}
for name, (tool, argv) in cases.items():
    sys.argv = [tool] + argv
    output = io.StringIO()
    with contextlib.redirect_stdout(output), contextlib.redirect_stderr(output):
        try:
            runpy.run_path(tool, run_name='__main__')
            code = 0
        except SystemExit as exit:
            code = exit.code or 0
    report[name] = dict(code=code, output=output.getvalue(),
                        heavy=[module for module in heavy if module in sys.modules])
print(json.dumps(report))
'''


def load_script(relpath: str, name: Optional[str] = None) -> ModuleType:
    """Execute the script at ``relpath`` (from the repository root) as a module named ``name`` (default its stem)."""
    path = REPO / relpath
    spec = importlib.util.spec_from_file_location(name or path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
