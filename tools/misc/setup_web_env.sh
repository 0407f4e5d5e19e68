#!/usr/bin/env bash
# Creates .venv-web for the web demo (`sapiens2 web`) and its browser test; docs/install.md says why.
# gradio (requirements/web.txt) pins pillow below 13, which would move the stack's pillow, so it lives in a venv of
# its own whose site-packages come first and the stack's (.venv) after them (a .pth file): the stack's versions are
# kept (pip constraints), except pillow. Also Debian's chromium and chromium-driver for the Selenium test.
# Idempotent: every step is skipped when its result is already there.
#
# Environment: VENV (the stack, default .venv), WEB_VENV (default .venv-web)
set -euo pipefail
cd "$(dirname "$0")/../.."

VENV=${VENV:-.venv}
WEB_VENV=${WEB_VENV:-.venv-web}
step() { echo "==> $*"; }

if ! command -v chromium >/dev/null || ! command -v chromedriver >/dev/null; then
  step "chromium and chromium-driver (Debian's packages)"
  SUDO=$([ "$(id -u)" = 0 ] || echo sudo)
  $SUDO apt-get update -q >/dev/null
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q chromium chromium-driver >/dev/null
fi

if [ ! -x "$WEB_VENV/bin/python" ]; then
  step "creating $WEB_VENV"
  # No pip or setuptools of its own: the stack's come through the .pth file (mmengine needs its setuptools < 81).
  "$("$VENV/bin/python" -c 'import sys; print(sys._base_executable)')" -m venv --without-pip "$WEB_VENV"
fi
site_packages() { "$1/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])'; }
STACK_SITE=$(cd "$(site_packages "$VENV")" && pwd -P)
echo "import site; site.addsitedir('$STACK_SITE')" > "$(site_packages "$WEB_VENV")/sapiens2-stack.pth"

if ! "$WEB_VENV/bin/python" -c "import importlib.util as u, sys; sys.exit(not (u.find_spec('gradio') and u.find_spec('selenium')))"; then
  step "gradio and selenium (the stack's versions pinned, except pillow)"
  "$VENV/bin/python" -m pip freeze --exclude-editable | grep -E '^[A-Za-z0-9_.-]+==' | grep -iv '^pillow==' \
    > "$WEB_VENV/stack-constraints.txt"
  "$VENV/bin/python" -m pip --python "$WEB_VENV/bin/python" install -q -c "$WEB_VENV/stack-constraints.txt" \
    -r requirements/web.txt -r requirements/web-tests.txt
fi

# .venv-web's own `sapiens2` command (sapiens2 itself is found through the stack's editable install).
cat > "$WEB_VENV/bin/sapiens2" <<EOF
#!$(cd "$WEB_VENV" && pwd -P)/bin/python
import sys

from sapiens2_entry import main

sys.exit(main())
EOF
chmod +x "$WEB_VENV/bin/sapiens2"
step "done: $WEB_VENV/bin/sapiens2 web"
