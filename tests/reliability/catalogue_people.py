"""Bad-input cases of the people's outputs (issue 39): per-person crops and the web demo's people option without the
tasks they need. The cases register into :data:`tests.reliability.catalogue.CASES` (this module is imported at its
end)."""
from tests.reliability.catalogue import CommandError, _infer_cli, case


@case('infer-per-person-no-dense-task', 'inference', 'sapiens2-infer --task pose --per-person (no dense map to '
      'crop)',
      'one error line that names the tasks and the dense tasks to add (instead of a people folder without crops)',
      error=CommandError,
      match=r'exit 1: .*--per-person crops the dense maps, but no dense task runs .*add one or more of --task normal '
      r'pointmap albedo matting seg')
def _(tmp):
    return _infer_cli(tmp, '--per-person')


@case('web-people-without-dense-model', 'inference', "WebDemo.run(photo, ['pose-tiny'], people=True) (the page hides "
      'the option, a caller may not)', 'ValueError before any model runs: people needs a pose model and a seg, '
      'matting or pointmap model', error=ValueError, match=r'people needs a pose model and a seg, matting or pointmap '
      r'model, got pose-tiny; add one of them')
def _(tmp):
    from sapiens2.apis.web_demo import WebDemo
    return lambda: WebDemo(str(tmp), device='cpu').run(str(tmp / 'a.png'), ['pose-tiny'], people=True)
