#!/usr/bin/env bash
# The man pages (doc/*.scd, rendered by scdoc) against the programs, so that
# the documentation cannot drift from the code:
# - each page renders without a warning (groff -ww, man --warnings, where
#   they are installed), and is not empty;
# - vtierctl.1 names every command and every option `vtierctl --help` and
#   `vtierctl COMMAND --help` list, every exit code of its EXIT_* enum and
#   its help text, and VTIER_BUS_ADDRESS;
# - vtierd.8 names every option `vtierd --help` lists, every signal
#   vtierd handles and every method of org.vtier.Manager1.xml;
#   vtier-guest.8 every option of `vtier-guest --help`;
# - vtierd.conf.5 has every group of vt-config.c's option table, and every
#   option of it and of the shipped vtierd.conf as KEY=DEFAULT, with the
#   default vtierd.conf shows.
#   test-man.sh VTIERCTL VTIERD VTIER_GUEST PAGE...   (VT_SOURCE_ROOT set)
set -uo pipefail
vtierctl=$1 vtierd=$2 vtier_guest=$3
shift 3
src=${VT_SOURCE_ROOT:?}
declare -A page
for p in "$@"; do page[$(basename "$p")]=$p; done

n=0 failed=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $1"; }
check() { # check DESCRIPTION COMMAND...
  local what=$1
  shift
  if "$@"; then ok "$what"; else not_ok "$what"; fi
}

# A page as plain text, one paragraph a line (no wrapping, no hyphenation),
# without bold or underlining; without groff, the roff with its escapes
# undone, which is enough to find words in.
declare -A text
render() {
  if command -v groff >/dev/null; then
    groff -man -Tutf8 -rLL=2000n -rHY=0 -P-c -P-b -P-o -P-u "$1" 2>/dev/null
  else
    sed -e 's/\\f[BIRP]//g; s/\\-/-/g; s/\\(em/--/g; s/\\e/\\/g; s/\\&//g' "$1"
  fi
}
# Whether the text of a page has the word (a name, an option, KEY=VALUE):
# not as part of a longer word or option.
has() { # has PAGE WORD
  grep -qE -- "(^|[^[:alnum:]_-])$(sed 's/[][\.*^$+?(){}|]/\\&/g' <<<"$2")([^[:alnum:]_-]|$)" <<<"${text[$1]}"
}
# The lines of a page's text from the heading $2 to the next heading.
section() {
  awk -v h="$2" '/^[A-Z]/ { on = ($0 == h); next } on' <<<"${text[$1]}"
}

for p in vtierctl.1 vtierd.8 vtierd.conf.5 vtier-guest.8; do
  f=${page[$p]:-}
  if [ -z "$f" ] || ! [ -s "$f" ]; then
    not_ok "$p: rendered, not empty"
    text[$p]=
    continue
  fi
  ok "$p: rendered, not empty"
  check "$p: a man page (.TH)" grep -q '^\.TH "\?'"${p%.*}" "$f"
  if command -v groff >/dev/null; then
    warnings=$(groff -man -ww -z "$f" 2>&1)
    check "$p: groff -man -ww: no warning${warnings:+: $warnings}" test -z "$warnings"
  fi
  if command -v man >/dev/null; then
    warnings=$(MANWIDTH=80 man --warnings -l -Tutf8 "$f" 2>&1 >/dev/null)
    check "$p: man --warnings: no warning${warnings:+: $warnings}" test -z "$warnings"
  fi
  text[$p]=$(render "$f")
  check "$p: has a SYNOPSIS" grep -qx 'SYNOPSIS' <<<"${text[$p]}"
  check "$p: in vtier's version" grep -q "vtier [0-9]" <<<"${text[$p]}"
done

# Long and short options of a --help text: "  -o, --output=FILE" and
# "  --json   ..." lines (vtier-guest's too: "  --port PATH").
options_of() {
  grep -E '^ +-' | grep -oE '(^|[ ,])--?[[:alnum:]][[:alnum:]-]*' | tr -d ' ,' | sort -u
}

# ---- vtierctl.1 ----
help=$("$vtierctl" --help)
commands=$(sed -n '/^Commands:/,/^$/p' <<<"$help" | awk 'NR > 1 && NF { print $1 }')
check "vtierctl --help lists commands" test -n "$commands"
for c in $commands help; do
  check "vtierctl.1 documents the command $c" has vtierctl.1 "$c"
  # As an entry of COMMANDS: a line that starts with it.
  check "vtierctl.1 has an entry for $c" grep -qE "^ +$c( |$)" <<<"$(section vtierctl.1 COMMANDS)"
done
for o in $(options_of <<<"$help"); do
  check "vtierctl.1 documents vtierctl $o" has vtierctl.1 "$o"
done
for c in $commands; do
  for o in $("$vtierctl" "$c" --help | options_of); do
    check "vtierctl.1 documents vtierctl $c $o" has vtierctl.1 "$o"
  done
done
check "vtierctl.1 documents --version" has vtierctl.1 --version
check "vtierctl.1 documents list --names" has vtierctl.1 --names
exit_status=$(section vtierctl.1 'EXIT STATUS')
codes=$(sed -n '/^Exit codes:/,$p' <<<"$help" | grep -oE '(^|[:;] *|^)[0-9]+ ' | grep -oE '[0-9]+')
check "vtierctl --help lists exit codes" test -n "$codes"
enum=$(grep -oE 'EXIT_[A-Z_]+ = [0-9]+' "$src/host-agent/ctl/vtierctl.c" | grep -oE '[0-9]+$')
check "vtierctl.c has its EXIT_* enum" test -n "$enum"
for code in $(sort -nu <<<"$codes"$'\n'"$enum"); do
  check "vtierctl.1 EXIT STATUS has $code" grep -qxE " +$code" <<<"$exit_status"
done
check "vtierctl.1 ENVIRONMENT has VTIER_BUS_ADDRESS" \
  grep -qx ' *VTIER_BUS_ADDRESS' <<<"$(section vtierctl.1 ENVIRONMENT)"

# ---- vtierd.8 ----
for o in $("$vtierd" --help | options_of); do
  check "vtierd.8 documents vtierd $o" has vtierd.8 "$o"
done
signals=$(grep -oE 'g_unix_signal_add \(SIG[A-Z]+' "$src/host-agent/daemon/vtierd.c" | grep -oE 'SIG[A-Z]+')
check "vtierd.c handles signals" test -n "$signals"
for s in $signals; do
  check "vtierd.8 SIGNALS has $s" grep -qE "^ +([A-Z, ]*)?$s" <<<"$(section vtierd.8 SIGNALS)"
done
methods=$(grep -oE '<method name="[A-Za-z]+"' "$src/host-agent/dbus/org.vtier.Manager1.xml" |
          grep -oE '"[A-Za-z]+"' | tr -d '"')
check "org.vtier.Manager1.xml has methods" test -n "$methods"
for m in $methods; do
  check "vtierd.8 D-BUS names the method $m" has vtierd.8 "$m"
done
for f in vtierd.service org.vtier.Manager1.conf org.vtier.Manager1.xml damon-slots policies.conf \
         vtierd.conf /run/vtier/guest /run/vtier/qmp G_MESSAGES_DEBUG; do
  check "vtierd.8 names $f" grep -qF -- "$f" <<<"${text[vtierd.8]}"
done

# ---- vtier-guest.8 ----
for o in $("$vtier_guest" --help | options_of); do
  check "vtier-guest.8 documents vtier-guest $o" has vtier-guest.8 "$o"
done
check "vtier-guest.8 names vtier-guest.service" grep -qF vtier-guest.service <<<"${text[vtier-guest.8]}"

# ---- vtierd.conf.5: vt-config.c's table and the shipped file ----
conf=$src/host-agent/data/vtierd.conf
table=$(grep -oE 'OPT \("[a-z]+", "[a-z-]+"' "$src/host-agent/daemon/vt-config.c" |
        sed -E 's/OPT \("([a-z]+)", "([a-z-]+)"/\1 \2/')
check "vt-config.c has its option table" test -n "$table"
shipped=$(grep -E '^#[a-z-]+=' "$conf" | sed 's/^#//')
check "vtierd.conf shows options" test -n "$shipped"
for g in $(awk '{ print $1 }' <<<"$table" | sort -u) "vm NAME"; do
  check "vtierd.conf.5 has the section [$g]" grep -qx "\[$g\]" <<<"${text[vtierd.conf.5]}"
done
while read -r group key; do
  check "vtierd.conf.5 documents [$group] $key" grep -qE "^ *$key=" <<<"${text[vtierd.conf.5]}"
  check "vtierd.conf shows [$group] $key" grep -qE "^#$key=" "$conf"
done <<<"$table"
while IFS= read -r line; do
  # As an entry, KEY=DEFAULT at the start of a line.
  check "vtierd.conf.5 has $line" grep -qxE " *$(sed 's/[][\.*^$+?(){}|]/\\&/g' <<<"$line")" \
    <<<"${text[vtierd.conf.5]}"
done <<<"$shipped"

echo "1..$n"
[ "$failed" = 0 ]
