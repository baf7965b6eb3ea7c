# The whole set-up lives here: every target installs what it needs first.
#   make serve   build the site and serve it at http://127.0.0.1:8000
#   make test    lint, type-check, native tests, the core suite inside Pyodide, browser tests (Chromium; Firefox)
#   make site    the static site in site/, ready for GitHub Pages (site_assets/prebuild.py, mkdocs, typeset.mjs,
#                prerender.py)
#   make bench   print benchmark tables (nothing asserted)

PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
PORT   ?= 8000
export NO_MKDOCS_2_WARNING := 1
export PIP_DISABLE_PIP_VERSION_CHECK := 1

WHEEL_SRC := pyproject.toml $(wildcard specdec_core/*.py specdec_core/web/*.py specdec_core/data/*)

.PHONY: serve site prebuild site-zensical test test-native test-pyodide test-firefox firefox browsers test-browser browser-suite browser-sitewide browser-pages browser-pages-built browser-sitewide-built lint bench wheel chromium clean

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[dev]'
	touch $@

# Exact pins from package-lock.json; no package needs an install script, so none is run.
node_modules/.installed: package.json package-lock.json
	npm ci --no-audit --no-fund --ignore-scripts --loglevel=error
	touch $@

# The core wheel the Pyodide test suite installs (the site ships site_assets/prebuild.py's archive instead).
# Pure Python, so `python -m build` is all it takes. setuptools' build/ keeps modules that have since been deleted
# and puts them in the next wheel: it goes too.
dist/.built: $(VENV)/.installed $(WHEEL_SRC)
	rm -rf dist build
	$(PY) -m build --wheel --outdir dist -q . >/dev/null
	touch $@

wheel: dist/.built

# Everything the pages need (scripts, the vendored runtime, the core archive, build-time results, the service
# worker) is written into docs/ and site_assets/initial/ first; the site builder then only renders Markdown, and
# site_assets/typeset.mjs typesets the built pages' math with KaTeX.
prebuild: $(VENV)/.installed node_modules/.installed
	$(PY) site_assets/prebuild.py

# site_assets/prerender.py then draws each page's first widget into its HTML, in headless Chromium. Without a
# Chromium it leaves the pages as built and says so; the test and bench runs install Debian's first (PRERENDER).
PRERENDER := $(if $(filter test test-browser test-firefox bench browser-%,$(MAKECMDGOALS)),chromium)

site: prebuild $(PRERENDER)
	$(VENV)/bin/mkdocs build --strict --quiet
	node site_assets/typeset.mjs site
	$(PY) site_assets/prerender.py site

# The same tree built by Zensical (Material's successor), into site-zensical/; the browser tests run on it too.
site-zensical: prebuild $(PRERENDER)
	SITE_DIR=site-zensical $(VENV)/bin/zensical build --strict --clean
	node site_assets/typeset.mjs site-zensical
	$(PY) site_assets/search_math.py site-zensical/search.json
	$(PY) site_assets/prerender.py site-zensical

serve: site
	@echo "Serving the lab at http://127.0.0.1:$(PORT)/ (Ctrl-C stops)"
	$(PY) -m http.server $(PORT) --bind 127.0.0.1 --directory site

lint: $(VENV)/.installed node_modules/.installed
	$(VENV)/bin/ruff check specdec_core tests benchmarks site_assets
	$(VENV)/bin/ruff format --check specdec_core tests benchmarks site_assets
	$(VENV)/bin/mypy --strict specdec_core site_assets/prebuild.py site_assets/search_math.py site_assets/prerender.py
	node_modules/.bin/eslint site_assets benchmarks tests
	node_modules/.bin/prettier --check --log-level warn .

test-native: $(VENV)/.installed
	$(PY) -m pytest -q tests specdec_core

# The core suite inside Pyodide under Node, with the package installed from the built wheel.
# pytest's wheels are fetched once into .cache/pyodide-wheels; after that the run is offline.
test-pyodide: $(VENV)/.installed node_modules/.installed dist/.built
	$(PY) tests/pyodide/fetch_wheels.py
	node tests/pyodide/run_pytest.mjs

# Debian's chromium (the browser suite) and firefox-esr (the Firefox check), whichever are missing, in one apt run:
# chromium and test-firefox may start side by side under -j2, and two apt runs at once would fight for its lock.
BROWSERS := /usr/bin/chromium:chromium /usr/bin/firefox-esr:firefox-esr

browsers:
	@missing=""; for b in $(BROWSERS); do [ -x "$${b%%:*}" ] || missing="$$missing $${b#*:}"; done; \
	missing="$${missing# }"; \
	if [ -z "$$missing" ]; then :; \
	elif [ "$$(id -u)" = 0 ]; then \
	  echo "Installing Debian's $$missing for the browser tests"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; \
	else \
	  echo "The browser tests need $$missing: run 'sudo apt-get install $$missing' and try again." >&2; exit 1; \
	fi

chromium firefox: browsers

# Three pages of the built site in Firefox (the browser suite below runs in Chromium): see tests/firefox/check.mjs.
test-firefox: site firefox node_modules/.installed
	HOME=$${HOME:-/root} node tests/firefox/check.mjs

test-browser: site site-zensical chromium
	$(MAKE) --no-print-directory browser-suite

# The browser tests alone, on the two sites as they are built: two pytest sessions side by side, each with its own
# Chromium and server, since one session leaves about a fifth of the two cores idle (waiting on the page). The
# site-wide files (every page, failures, offline) are one session; the pages' own files and Zensical's build, which
# took about as long, the other.
BROWSER_SITEWIDE := $(addprefix tests/browser/,test_site.py test_offline.py test_smoke.py test_assets.py)

browser-suite:
	$(MAKE) --no-print-directory -j2 --output-sync=target browser-sitewide browser-pages

browser-sitewide:
	$(PY) -m pytest -q -p no:cacheprovider $(BROWSER_SITEWIDE)

browser-pages:
	$(PY) -m pytest -q -p no:cacheprovider tests/browser $(addprefix --ignore=,$(BROWSER_SITEWIDE))

# Everything shares the machine's two cores, two jobs at a time; output is kept together per target. The Pyodide
# suite, the longest of the rest, starts first, and each browser session starts once the sites are built and a core
# is free: the site-wide session (90 tests, the longer) beside the end of the Pyodide suite, which used to run on
# alone for about 50 s with one core idle, the pages' session (85 tests) when the Pyodide suite ends.
test:
	$(MAKE) --no-print-directory -j2 --output-sync=target test-pyodide lint test-native site site-zensical chromium \
	  test-firefox browser-sitewide-built browser-pages-built

# A browser session on the sites this run builds (the session targets above test what is already built). The
# pages' session waits for the Pyodide suite, so the longer site-wide one takes the first free core.
browser-pages-built browser-sitewide-built: %-built: site site-zensical chromium
	$(MAKE) --no-print-directory $*
browser-pages-built: | test-pyodide

bench: $(VENV)/.installed node_modules/.installed dist/.built site chromium
	$(PY) benchmarks/run.py

clean:
	rm -rf site site-zensical dist build *.egg-info .pytest_cache .mypy_cache .ruff_cache
	rm -rf docs/js docs/css docs/vendor docs/core docs/sw.js site_assets/initial
