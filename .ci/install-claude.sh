#!/usr/bin/env bash
# Installs the pinned Claude Code CLI into a cache for the end-to-end suite (internal/e2e) and
# prints the path of its `claude` executable on the last line of stdout.
#
# Idempotent: when the cache already holds the pinned version it installs nothing.
# Works as root, with no TTY and CI=true. Needs node and npm on PATH.
#
#   CLAUDE_CODE_VERSION  version to install (default: the pinned one below)
#   CAIRN_E2E_CACHE      install directory (default: $XDG_CACHE_HOME/cairn-e2e/claude-<version>)
set -euo pipefail

version="${CLAUDE_CODE_VERSION:-2.1.330}"
cache="${CAIRN_E2E_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/cairn-e2e/claude-$version}"
pkg="@anthropic-ai/claude-code"
bin="$cache/node_modules/.bin/claude"
manifest="$cache/node_modules/$pkg/package.json"

for tool in node npm; do
	if ! command -v "$tool" >/dev/null 2>&1; then
		echo "install-claude: $tool is not on PATH; install Node.js (20 or newer) to run the end-to-end suite" >&2
		exit 3
	fi
done

installed_version() {
	[ -f "$manifest" ] || return 1
	node -e 'process.stdout.write(require(process.argv[1]).version)' "$manifest" 2>/dev/null
}

if [ "$(installed_version || true)" = "$version" ] && [ -x "$bin" ]; then
	echo "install-claude: $pkg@$version already in $cache" >&2
else
	mkdir -p "$cache"
	# A lock keeps two concurrent runs (parallel test binaries) from installing over each other.
	exec 9>"$cache/.install.lock"
	if command -v flock >/dev/null 2>&1; then flock 9; fi
	if [ "$(installed_version || true)" != "$version" ] || [ ! -x "$bin" ]; then
		echo "install-claude: installing $pkg@$version into $cache" >&2
		# A package.json of our own keeps npm from walking up to some parent project.
		[ -f "$cache/package.json" ] || echo '{"name":"cairn-e2e-claude","private":true}' >"$cache/package.json"
		if ! CI=true npm install --prefix "$cache" --no-audit --no-fund --loglevel=error \
			"$pkg@$version" >&2; then
			echo "install-claude: npm could not install $pkg@$version into $cache (see npm's error above); the registry must be reachable and the version must exist" >&2
			exit 1
		fi
	fi
	if [ "$(installed_version || true)" != "$version" ]; then
		echo "install-claude: $pkg@$version is not in $cache after npm install; check the npm output above" >&2
		exit 1
	fi
fi

if [ ! -x "$bin" ]; then
	echo "install-claude: $bin is missing or not executable after install" >&2
	exit 1
fi
echo "$bin"
