# bash completion for vtierctl(1): its commands, their options, and the
# names (or UUIDs) of the VMs vtierd tracks. Plain bash (no bash-completion
# helpers needed). The names come from `vtierctl list --names`, and for a
# word that may begin a UUID the UUIDs too (`list --uuids`), run as the
# command line names vtierctl (at most 2 s each); when vtierd is not running
# it completes no name and prints nothing.

# The names of vtierd's VMs that start with $2 (and UUIDs, when $2 is hex
# digits and dashes), into COMPREPLY; $1 is the vtierctl to ask.
_vtierctl_vms() {
    local ctl=$1 cur=$2 name list lists=--names
    command -v -- "$ctl" >/dev/null 2>&1 || ctl=vtierctl
    [[ $cur =~ ^[0-9a-fA-F][0-9a-fA-F-]*$ ]] && lists+=' --uuids'
    for list in $lists; do
        while IFS= read -r name; do
            [[ -n $name && $name == "$cur"* ]] && COMPREPLY+=("$(printf '%q' "$name")")
        done < <(if command -v timeout >/dev/null; then
                     timeout 2 "$ctl" list "$list"
                 else
                     "$ctl" list "$list"
                 fi 2>/dev/null)
    done
}

_vtierctl() {
    local cur=${COMP_WORDS[COMP_CWORD]} prev= opt=
    ((COMP_CWORD > 0)) && prev=${COMP_WORDS[COMP_CWORD - 1]}
    COMPREPLY=()

    local commands='list heat heatmap show rates set monitor xml help'
    # Options that take a value (the next word, or after '=').
    local with_value='-o --output -i --input --width --height --weight --min --max --mode
                      --interleave --timeout --fast --slow --fast-nodes --slow-nodes'

    # --opt=value: bash splits it at '=' (COMP_WORDBREAKS).
    if [[ $cur == = ]]; then
        opt=$prev cur=
    elif [[ $prev == = ]] && ((COMP_CWORD > 1)); then
        opt=${COMP_WORDS[COMP_CWORD - 2]}
    else
        opt=$prev
    fi

    # The command, and how many arguments follow it (option values apart).
    local i word cmd= n_args=0 skip=0
    for ((i = 1; i < COMP_CWORD; i++)); do
        word=${COMP_WORDS[i]}
        if ((skip)); then
            skip=0
            continue
        fi
        case $word in
            =) skip=1; continue ;;  # the value after --opt=
            -*)
                [[ " ${with_value//$'\n'/ } " == *" $word "* ]] && skip=1
                continue ;;
        esac
        if [[ -z $cmd ]]; then
            cmd=$word
        else
            n_args=$((n_args + 1))
        fi
    done
    if [[ -z $cmd ]]; then
        if [[ $cur == -* ]]; then
            mapfile -t COMPREPLY < <(compgen -W '--json --version --help' -- "$cur")
        else
            mapfile -t COMPREPLY < <(compgen -W "$commands" -- "$cur")
        fi
        return 0
    fi
    # A value of an option.
    case $opt in
        -o | --output | -i | --input)
            compopt -o filenames 2>/dev/null
            mapfile -t COMPREPLY < <(compgen -f -- "$cur")
            return 0 ;;
        --mode)
            mapfile -t COMPREPLY < <(compgen -W 'auto fast-only slow-only off interleave' -- "$cur")
            return 0 ;;
        --interleave)
            mapfile -t COMPREPLY < <(compgen -W 'auto 3:1 7:1' -- "$cur")
            return 0 ;;
        --max)
            mapfile -t COMPREPLY < <(compgen -W 'none' -- "$cur")
            return 0 ;;
        --width | --height | --weight | --min | --timeout | --fast | --slow | --fast-nodes | \
            --slow-nodes)
            return 0 ;;
    esac

    local options takes_vm=0
    case $cmd in
        list | monitor | rates) options='--json' ;;
        heat | show) options='--json' takes_vm=1 ;;
        heatmap) options='--json -o --output --width --height' takes_vm=1 ;;
        set) options='--json --weight --min --max --mode --interleave --wait --timeout' takes_vm=1 ;;
        xml) options='-i --input -o --output --fast --slow --fast-nodes --slow-nodes' ;;
        *) return 0 ;;
    esac

    if [[ $cur == -* ]] || ((!takes_vm || n_args > 0)); then
        mapfile -t COMPREPLY < <(compgen -W "$options --help" -- "$cur")
    else
        _vtierctl_vms "${COMP_WORDS[0]}" "$cur"
    fi
    return 0
}

complete -F _vtierctl vtierctl
