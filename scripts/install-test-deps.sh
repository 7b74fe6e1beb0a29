#!/usr/bin/env bash
# Installs the database servers and the reference sysbench that the tests run against, the
# headless browser that opens the HTML reports (tests/report) and the client libraries' headers
# of the floor client (bench/floor), from Debian's packages, when their programs are missing.
# Idempotent: with everything present it changes nothing and needs neither root nor the network.
#
# The tests start private servers of their own (oltplab.servers); the distribution's
# services are never started, and the install does not start them either.
set -euo pipefail

# program that proves a package is installed -> the package
declare -A NEEDED=(
  [mariadbd]=mariadb-server
  [mariadb-install-db]=mariadb-server
  [mariadb]=mariadb-client
  [sysbench]=sysbench
  [chromium]=chromium
  # the client libraries' headers that bench/floor/floor_client.c compiles against
  [mariadb_config]=libmariadb-dev
  [pg_config]=libpq-dev
)

# Daemons live in sbin, which is not on a normal user's PATH.
SEARCH_PATH="$PATH:/usr/local/sbin:/usr/sbin:/sbin"

# Sets `missing` to the packages whose programs are not found.
find_missing() {
  missing=()
  local program
  for program in "${!NEEDED[@]}"; do
    if ! PATH="$SEARCH_PATH" command -v "$program" >/dev/null; then
      missing+=("${NEEDED[$program]}")
    fi
  done
  # PostgreSQL's server programs are not on PATH on Debian: /usr/lib/postgresql/N/bin.
  if ! compgen -G '/usr/lib/postgresql/*/bin/initdb' >/dev/null &&
    ! PATH="$SEARCH_PATH" command -v initdb >/dev/null; then
    missing+=(postgresql)
  fi
}

find_missing
if ((${#missing[@]} == 0)); then
  echo "install-test-deps: MariaDB, PostgreSQL, sysbench, Chromium and the client headers are installed"
  exit 0
fi
mapfile -t packages < <(printf '%s\n' "${missing[@]}" | sort -u)

if [[ $(id -u) -eq 0 ]]; then
  sudo=()
elif command -v sudo >/dev/null; then
  sudo=(sudo)
else
  echo "install-test-deps: missing ${packages[*]}; run as root: apt-get install ${packages[*]}" >&2
  exit 1
fi
if ! command -v apt-get >/dev/null; then
  echo "install-test-deps: missing ${packages[*]}, and there is no apt-get here;" \
    "install them with the system's package manager" >&2
  exit 1
fi

# policy-rc.d exit code 101 tells the packages' maintainer scripts not to start their
# services. A policy already in place (Docker images ship one) is left as it is.
policy=/usr/sbin/policy-rc.d
if [[ ! -e $policy ]]; then
  printf '#!/bin/sh\n# written by oltplab install-test-deps.sh during apt-get install\nexit 101\n' |
    "${sudo[@]}" tee "$policy" >/dev/null
  "${sudo[@]}" chmod 755 "$policy"
  trap '"${sudo[@]}" rm -f "$policy"' EXIT
fi

echo "install-test-deps: installing ${packages[*]}"
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" apt-get install -y -qq --no-install-recommends "${packages[@]}" >/dev/null
find_missing
if ((${#missing[@]} > 0)); then
  echo "install-test-deps: still missing after apt-get install: ${missing[*]}" >&2
  exit 1
fi
echo "install-test-deps: done"
