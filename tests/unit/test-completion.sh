#!/usr/bin/env bash
# vtierctl's bash completion, sourced into this bash and asked as bash asks
# (COMP_WORDS, COMP_CWORD): it offers every command `vtierctl --help` lists
# and every option each command's --help lists, option values, and the
# names of vtierd's VMs (their UUIDs too for what may begin one); with
# vtierd not running it offers no name and prints nothing on standard
# error.
#   test-completion.sh COMPLETION VTIERCTL
set -uo pipefail
completion=$1 vtierctl=$2
n=0 failed=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $1"; }

# shellcheck source=/dev/null
source "$completion"
complete -p vtierctl >/dev/null 2>&1 && ok "registers for vtierctl" || not_ok "registers for vtierctl"

# Completes a command line as bash would at its end (a trailing space
# starts a new, empty word; '=' is a word of its own); the offers, one a
# line, in $offers, and what went to stderr in $stderr.
complete_line() { # complete_line PROGRAM LINE
  local words
  read -ra words <<<"$(sed 's/=/ = /g' <<<"$2")"
  [[ $2 == *' ' || $2 == *= ]] && words+=("")
  words[0]=$1
  COMP_WORDS=("${words[@]}")
  COMP_CWORD=$((${#words[@]} - 1))
  COMPREPLY=()
  local err
  err=$(mktemp)
  _vtierctl 2>"$err"
  stderr=$(cat "$err")
  rm -f "$err"
  offers=$(printf '%s\n' "${COMPREPLY[@]}")
}
offers_all() { # offers_all LINE WORD...: each WORD is offered for LINE
  local line=$1 w missing=
  shift
  complete_line "$vtierctl" "$line"
  for w in "$@"; do grep -qxF -- "$w" <<<"$offers" || missing+=" $w"; done
  if [ -z "$missing" ]; then ok "'$line' offers $*"; else not_ok "'$line' misses$missing (offers: $offers)"; fi
}
offers_none() { # offers_none LINE WORD...
  local line=$1 w found=
  shift
  complete_line "$vtierctl" "$line"
  for w in "$@"; do grep -qxF -- "$w" <<<"$offers" && found+=" $w"; done
  if [ -z "$found" ]; then ok "'$line' does not offer $*"; else not_ok "'$line' offers$found"; fi
}

help=$("$vtierctl" --help)
commands=$(sed -n '/^Commands:/,/^$/p' <<<"$help" | awk 'NR > 1 && NF { print $1 }')
[ -n "$commands" ] && ok "vtierctl --help lists commands" || not_ok "vtierctl --help lists commands"
# shellcheck disable=SC2086
offers_all "vtierctl " $commands help
offers_all "vtierctl --json " $commands
offers_all "vtierctl -" --json --version --help
offers_all "vtierctl he" heat heatmap help
offers_none "vtierctl he" list show set xml

options_of() {
  grep -E '^ +-' | grep -oE '(^|[ ,])--?[[:alnum:]][[:alnum:]-]*' | tr -d ' ,' | sort -u
}
for c in $commands; do
  # -h is --help's; xml refuses --json.
  wanted=$("$vtierctl" "$c" --help | options_of | grep -vx -- -h)
  [ "$c" = xml ] && wanted=$(grep -vx -- --json <<<"$wanted")
  # shellcheck disable=SC2086
  offers_all "vtierctl $c -" $wanted
done
offers_none "vtierctl xml -" --json --weight
offers_none "vtierctl list -" --names --uuids
offers_all "vtierctl set web --weight 3 " --min --max --mode
offers_all "vtierctl set web --mode " auto fast-only slow-only off
offers_all "vtierctl set web --mode=" auto fast-only slow-only off
offers_all "vtierctl set web --mode=fa" fast-only
offers_all "vtierctl set web --max " none
complete_line "$vtierctl" "vtierctl set web --weight "
[ -z "$offers" ] && ok "--weight takes a number: nothing offered" || not_ok "--weight offers: $offers"

# VM names, from `PROGRAM list --names`: a stand-in for vtierctl, named as
# the command line names it.
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cat >"$dir/vtierctl" <<'STUB'
#!/bin/sh
[ "$1 $2" = "list --names" ] && printf 'web\nweb2\ndb two\n'
[ "$1 $2" = "list --uuids" ] && printf '4e1f5a3c-0000-4000-8000-00000000000a\nd2c0ffee-0000-4000-8000-000000000001\n'
STUB
chmod +x "$dir/vtierctl"
names() { # names LINE EXPECTED...
  local line=$1
  shift
  complete_line "$dir/vtierctl" "$line"
  local expected
  expected=$(printf '%s\n' "$@")
  if [ "$offers" = "$expected" ]; then ok "'$line' offers the VMs $*"; else not_ok "'$line' offers '$offers', not '$expected'"; fi
}
names "vtierctl show " web web2 'db\ two'
names "vtierctl heat we" web web2
names "vtierctl heatmap db" 'db\ two'
names "vtierctl set --json w" web web2
names "vtierctl show 4e" 4e1f5a3c-0000-4000-8000-00000000000a
names "vtierctl heat d" 'db\ two' d2c0ffee-0000-4000-8000-000000000001
complete_line "$dir/vtierctl" "vtierctl show web "
if grep -qx -- --json <<<"$offers" && ! grep -qx web <<<"$offers"; then
  ok "after the VM: its options"
else
  not_ok "after the VM: $offers"
fi
complete_line "$dir/vtierctl" "vtierctl list "
grep -qx web <<<"$offers" && not_ok "list takes no VM: $offers" || ok "list takes no VM"

# vtierd not running (no such bus): no names, and nothing on stderr.
unset VTIER_BUS_ADDRESS DBUS_SYSTEM_BUS_ADDRESS
for bus in VTIER_BUS_ADDRESS DBUS_SYSTEM_BUS_ADDRESS; do
  export "$bus=unix:path=$dir/no-such-bus"
  complete_line "$vtierctl" "vtierctl show "
  if [ -z "$offers" ] && [ -z "$stderr" ]; then
    ok "no bus ($bus): no names, no stderr"
  else
    not_ok "no bus ($bus): offers '$offers', stderr '$stderr'"
  fi
  unset "$bus"
done

echo "1..$n"
[ "$failed" = 0 ]
