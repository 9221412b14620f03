# Shared by the scripts in this directory: install what Hudson needs from Debian's
# packages when it is missing. Swift 6 itself must already be installed (swift.org).
set -euo pipefail

hudson_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

# Installs the given Debian packages that are not installed yet.
ensure_packages() {
    local missing=()
    for package in "$@"; do
        dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "ok installed" || missing+=("$package")
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    echo "installing ${missing[*]}" >&2
    local sudo=()
    [ "$(id -u)" -ne 0 ] && sudo=(sudo)
    DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -q "${missing[@]}" >&2 || {
        DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get update -q >&2
        DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -q "${missing[@]}" >&2
    }
}

ensure_swift() {
    # Toolchains unpacked from swift.org's tarballs often live in /opt/swift.
    if ! command -v swift >/dev/null 2>&1 && [ -x /opt/swift/usr/bin/swift ]; then
        export PATH="/opt/swift/usr/bin:$PATH"
    fi
    command -v swift >/dev/null 2>&1 || {
        echo "Swift 6 is not on PATH: install it from https://swift.org/install/linux/ first" >&2
        exit 69
    }
}

# What building and testing Hudson needs from Debian. mandoc is for the tests that
# lint the man pages (Tests/CLITests/ManPageTests.swift), which skip without it.
ensure_build_dependencies() {
    ensure_swift
    ensure_packages libsqlite3-dev sqlite3 python3 mandoc
}

# The real mail programs hd-send is tested with as a sendmail program
# (Tests/CLITests/SendmailTests.swift): git send-email and mutt; mutt also runs hd-address as
# its query_command (Tests/CLITests/AddressCommandTests.swift).
ensure_mail_clients() {
    ensure_packages git git-email mutt
}

# hd-export's Maildir is proven with the real notmuch and mu (Tests/CLITests/ExportCommandTests.swift),
# and its two-way mode with neomutt driven in tmux (Tests/CLITests/ExportNotmuchTests.swift).
ensure_mail_indexers() {
    ensure_packages notmuch maildir-utils neomutt tmux
}

# hd-mcp is proven with the official MCP Python SDK as a real client
# (Tests/CLITests/MCPClientTests.swift, tools/mcp-check): `mcp` from PyPI, for the python3 on PATH.
ensure_mcp_sdk() {
    python3 -c 'import mcp' 2>/dev/null && return 0
    python3 -m pip --version >/dev/null 2>&1 || ensure_packages python3-pip
    echo "installing the MCP Python SDK (pip install mcp)" >&2
    python3 -m pip install -q mcp >&2 || python3 -m pip install -q --break-system-packages mcp >&2
}

# Release binaries link the Swift runtime and Foundation statically: a process then maps
# a handful of shared libraries instead of some forty, and `hd-ls` starts in about 2.7 ms
# instead of 4.5 (docs/performance.md). The static FoundationNetworking
# links the system's libcurl, so its development files are needed to build.
release_flags=(-c release --static-swift-stdlib)

ensure_release_dependencies() {
    ensure_build_dependencies
    ensure_packages libcurl4-openssl-dev
}

# Builds the release binaries (progress on stderr) and prints their directory.
build_release() {
    (cd "$hudson_root" && swift_build_quietly "${release_flags[@]}" && swift build "${release_flags[@]}" --show-bin-path)
}

# `swift build ARGS...`, its output on standard error, less one understood line: linking
# the Swift runtime statically pulls in Foundation's use of glibc's mktemp(3), and glibc
# has the linker warn about it at every link of every executable ("the use of `mktemp' is
# dangerous"). Hudson does not call it (its files are made with mkstemp, mkdtemp and
# O_EXCL). Every other line, warnings included, is kept. The first build of a checkout
# takes several minutes on two cores; later ones only rebuild what changed.
swift_build_quietly() {
    swift build "$@" 2>&1 | { grep -v "warning: the use of \`mktemp' is dangerous" || true; } >&2
    return "${PIPESTATUS[0]}"
}

# Runs a command under a watchdog (scripts/watchdog): after LIMIT (seconds, or with s, m
# or h) it and everything it started are stopped, and the status is 124.
with_watchdog() {
    python3 "$hudson_root/scripts/watchdog" "$@"
}

# Runs `swift test ARGS...` with its whole output in LOG, then prints scripts/test-report's
# summary of it (failures, crashes, the closing line) and returns swift test's status.
# The watchdog allows HUDSON_TEST_TIMEOUT (default 50m; the suites run one at a time take
# about 30 minutes on CI's two cores, and longer beside other builds: the limit is there
# to end a hang, not to time the suite); the report then names the tests that never ended.
run_swift_tests() {
    local log="$1"
    shift
    local status=0
    # Line-buffered (stdbuf, inherited by the test process): a run that is stopped still
    # shows its last line in the log.
    with_watchdog "${HUDSON_TEST_TIMEOUT:-50m}" stdbuf -oL -eL swift test "$@" >"$log" 2>&1 || status=$?
    python3 "$hudson_root/scripts/test-report" "$log" "$status"
}
