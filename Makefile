# Switchyard. `make run` and `make test` work on a fresh clone: they install what they need.
SHELL := /bin/bash
# Switchyard runs on Node 22 or 24 (.nvmrc, `engines`). Where the system's Node is older, the one named
# in .nvmrc is brought from the npm registry into .toolchain/ and put first on PATH for every target.
TOOLCHAIN_BIN := $(shell bash tools/ensure-node.sh)
ifneq ($(TOOLCHAIN_BIN),)
export PATH := $(TOOLCHAIN_BIN):$(PATH)
endif
NODE_RUN := node --import tsx
export NODE_OPTIONS ?= --max-old-space-size=4096

.PHONY: all install console generate check-generated typecheck lint lint-openapi build pack test test-unit test-faults run fuzz fuzz-schemathesis bench agents agents-latest screenshots clean

all: test

# Two installs from one package-lock.json, neither running a dependency's install script (.npmrc;
# package.json "allowScripts" records each decision). `make run` needs only the dependencies and the
# build's workspace (tools/build: esbuild, Preact, Chart.js): `npm ci --omit=dev`. Tests, lint and
# generation need the devDependencies too: `npm ci`, which the run's install then reuses. The bench's
# own tools (Portkey, autocannon) are in tools/bench, the agent CLIs in test/agents/clis.
node_modules/.runtime: package.json package-lock.json tools/build/package.json .nvmrc
	@if [ node_modules/.installed -nt package-lock.json ] && [ node_modules/.installed -nt package.json ] && [ node_modules/.installed -nt .nvmrc ]; then :; else npm ci --omit=dev --no-audit --no-fund; fi
	@touch $@

node_modules/.installed: package.json package-lock.json tools/build/package.json .nvmrc
	npm ci --no-audit --no-fund
	@touch $@ node_modules/.runtime

install: node_modules/.installed

## The web console's bundle (console/src -> console/dist), served by the gateway at /console.
console: console/dist/app.js

console/dist/app.js: node_modules/.runtime tools/build-console.mjs console/index.html console/style.css $(shell find console/src -type f 2>/dev/null)
	node tools/build-console.mjs

## Compile spec/ (TypeSpec) into generated/openapi.yaml and generated/types.ts.
generate: install
	bash tools/generate.sh

## Fail when generated/ does not match spec/.
check-generated: install
	bash tools/check-generated.sh

typecheck: install
	npx tsc --noEmit -p .
	npx tsc --noEmit -p console/tsconfig.json

## Layering (imports point down), the ledger's dialects, where tests live, types, and the published document.
lint: install typecheck lint-openapi
	npx depcruise --config .dependency-cruiser.cjs src
	node tools/check-ledger-dialect.mjs src
	node tools/check-test-layout.mjs
	node tools/check-provider-fields.mjs src
	node tools/check-bags.mjs src

## Redocly's recommended rules (redocly.yaml) and Spectral's oas rules (.spectral.yaml): errors fail,
## the warnings left are listed in spec/DECISIONS.md.
lint-openapi: install
	REDOCLY_TELEMETRY=off REDOCLY_SUPPRESS_UPDATE_NOTICE=true npx redocly lint generated/openapi.yaml --format=summary
	npx spectral lint generated/openapi.yaml --fail-severity error

## Compile src/ to JavaScript in dist/ (what a deployment, the npm package and `make run` run: node dist/src/main.js serve).
## Types are checked by lint; tools/build.mjs only strips them (esbuild) and bundles the console.
build: node_modules/.runtime
	node tools/build.mjs

## The README's test command: staleness check, types, layering, then every test.
test: install console check-generated lint
	npx vitest run

## The fault suite alone (drain, database outages, settlement, bodies, credentials; part of `make test`).
## PostgreSQL cases run when TEST_DATABASE_URL is set.
test-faults: install
	npx vitest run test/faults test/ledger/late-capture.test.ts

run: build
	node dist/src/main.js serve --demo

## Contract fuzzing with a bigger budget (FUZZ_RUNS cases per operation).
fuzz: install
	FUZZ_RUNS=$${FUZZ_RUNS:-2000} npx vitest run test/contract

## Coding-agent conformance: the real Claude Code and Codex CLIs (pinned in test/agents/clis) drive
## the gateway non-interactively, the fake upstream playing the model (about a minute; in .ci/run).
agents: install test/agents/clis/node_modules/.installed
	npx vitest run --config vitest.agents.config.ts

## The same suite against the newest Claude Code and Codex on npm, installed into .agents-latest/ (a
## scratch folder: the pinned versions in test/agents/clis stay what CI runs); prints their versions.
agents-latest: install
	rm -rf .agents-latest && mkdir -p .agents-latest
	cd .agents-latest && echo '{"name":"switchyard-agent-clis-latest","private":true}' > package.json && \
		npm install --no-audit --no-fund --save-exact --ignore-scripts @anthropic-ai/claude-code@latest @openai/codex@latest && \
		npm rebuild @anthropic-ai/claude-code --ignore-scripts=false
	@echo "agents-latest: Claude Code $$(.agents-latest/node_modules/.bin/claude --version), $$(.agents-latest/node_modules/.bin/codex --version)"
	SWITCHYARD_AGENT_CLIS=$(CURDIR)/.agents-latest/node_modules/.bin npx vitest run --config vitest.agents.config.ts

test/agents/clis/node_modules/.installed: test/agents/clis/package.json test/agents/clis/package-lock.json
	@# Claude Code's postinstall (copying its native binary from the platform package) is the one script chosen.
	cd test/agents/clis && npm ci --no-audit --no-fund && npm rebuild @anthropic-ai/claude-code --ignore-scripts=false
	@touch $@

## Schemathesis needs a Docker engine (not available on the CI machines).
fuzz-schemathesis:
	@command -v docker >/dev/null || { echo "needs a Docker engine (not on the CI machines); use make fuzz"; exit 1; }
	docker run --rm --network host -v "$(CURDIR)/generated:/spec:ro" schemathesis/schemathesis:stable run /spec/openapi.yaml --url http://127.0.0.1:8080 --checks all -H "Authorization: Bearer $$SWITCHYARD_KEY"

## The installable package (switchyard-<version>.tgz): npm install it anywhere and run `switchyard serve`.
## Built first: with install scripts off (.npmrc) npm pack runs no prepack.
pack: build
	npm pack

## The gateway runs as deployed: compiled by `make build`.
bench: install build tools/bench/node_modules/.installed
	$(NODE_RUN) tools/bench/main.ts

tools/bench/node_modules/.installed: tools/bench/package.json tools/bench/package-lock.json
	cd tools/bench && npm ci --no-audit --no-fund
	@touch $@

## The console's pictures in README (docs/console/*.png), taken in the system's Chromium (CHROMIUM_PATH).
screenshots: install console
	$(NODE_RUN) tools/console-screenshots.ts

clean:
	rm -rf node_modules tools/bench/node_modules data .bench dist console/dist .toolchain .agents-latest
