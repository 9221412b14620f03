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
